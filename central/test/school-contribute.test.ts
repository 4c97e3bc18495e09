import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf } from '../src/http/clock';
import { makeApp, type TestApp } from './helpers';
import { callers, parseCsv, seedWorld, snapshot, type Who, type World } from './people-fixtures';

let t: TestApp;
let w: World;
let as: Record<Who, string>;
const b: string[] = [];
const TABLES = ['schoolcontributedata'];

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  w = await seedWorld(t.tdb.db);
  as = await callers(t, w);
  // School B's history: four months of 2025.
  for (const [at, expected, actual] of [
    ['2025-01-10T08:05:09.000Z', 100, 50],
    ['2025-02-11T15:00:00.000Z', 200, 150],
    ['2025-03-12T23:30:00.000Z', 300, 300],
    ['2025-04-13T09:00:00.000Z', 400, 100],
  ] as const) {
    const id = crypto.randomUUID();
    b.push(id);
    await t.tdb
      .db('schoolcontributedata')
      .insert({ schoolcontributeid: id, ...w.schoolB, countryid: w.countryY, expected, actual, created_at: at });
  }
});
afterAll(async () => { await t.tdb.dispose(); });

const call = (method: 'get' | 'post' | 'put' | 'delete', url: string, who: Who, body?: object, offset?: string) => {
  const r = request(t.app)[method](url).set('Authorization', as[who]);
  if (offset !== undefined) r.set('TIMEOFFSET', offset);
  return body === undefined ? r : r.send(body);
};
const newA = { schoolname: 'Accra Primary', schoolid: '', countryid: '', expected: 500, actual: 400 };

describe('fee records', () => {
  let recordA: string;

  it("creates this month's record of a school, with the school's own name and country; " +
      "a second this month is refused", async () => {
    const body = { ...newA, schoolid: w.schoolA.schoolid, countryid: w.countryX, schoolname: 'Whatever The Form Said' };
    const res = await call('post', '/school-contribute/create', 'admin', body);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      schoolid: w.schoolA.schoolid,
      schoolname: 'Accra Primary',
      countryid: w.countryX,
      expected: 500,
      actual: 400,
      isdeleted: false,
    });
    recordA = res.body.data.schoolcontributeid;
    const again = await call('post', '/school-contribute/create', 'schoolteacher', body);
    expect([again.status, again.body.errormessage]).toEqual([400, 'School Contribute already create this month']);
    // School B's newest record is from another month: a new one is welcome (and then deleted again).
    const bNew = await call('post', '/school-contribute/create', 'admin', {
      ...body,
      schoolid: w.schoolB.schoolid,
      countryid: w.countryY,
    });
    expect(bNew.status).toBe(200);
    await t.tdb.db('schoolcontributedata').where({ schoolcontributeid: bNew.body.data.schoolcontributeid }).del();
  });

  it('refuses bad amounts and ids, an unknown school and a school outside the caller\'s, writing nothing', async () => {
    const before = await snapshot(t.tdb.db, TABLES);
    const ok = { ...newA, schoolid: w.schoolB.schoolid, countryid: w.countryY };
    const cases: Array<[Who, object, string]> = [
      [
        'admin',
        {},
        '"schoolname" is required, "schoolid" is required, "countryid" is required, ' +
          '"expected" is required, "actual" is required',
      ],
      ['admin', { ...ok, expected: 0 }, '"expected" must be greater than or equal to 1'],
      ['admin', { ...ok, actual: 100001 }, '"actual" must be less than or equal to 100000'],
      ['admin', { ...ok, expected: '5' }, '"expected" must be a number'],
      ['admin', { ...ok, schoolid: 'x' }, '"schoolid" must be a valid GUID'],
      ['admin', { ...ok, schoolname: ' ' }, '"schoolname" not allowed'],
      ['admin', { ...ok, extra: 1 }, '"extra" is not allowed'],
      ['admin', { ...ok, schoolid: crypto.randomUUID() }, 'Invalid schoolid'],
      ['scopedSchool', ok, 'Invalid schoolid'],
      ['schoolteacher', ok, 'Invalid schoolid'],
    ];
    for (const [who, body, message] of cases) {
      const res = await call('post', '/school-contribute/create', who, body);
      expect([res.status, res.body.errormessage]).toEqual([400, message]);
    }
    expect((await request(t.app).post('/school-contribute/create').send(ok)).status).toBe(401);
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it("reads a school's records: paged newest first, all with the school's name, one by id", async () => {
    const page = await call('post', `/school-contribute/getallschoolcontribute/${w.schoolB.schoolid}`, 'teacher', {
      pageindex: 1,
      pagesize: 2,
    });
    expect(page.body.data).toMatchObject({ total: 4, pageindex: 1, pagesize: 2 });
    expect(page.body.data.data).toEqual([
      {
        schoolcontributeid: b[3],
        expected: 400,
        actual: 100,
        schoolid: w.schoolB.schoolid,
        schoolname: 'Bamako Primary',
        created_at: '2025-04-13T09:00:00.000Z',
      },
      {
        schoolcontributeid: b[2],
        expected: 300,
        actual: 300,
        schoolid: w.schoolB.schoolid,
        schoolname: 'Bamako Primary',
        created_at: '2025-03-12T23:30:00.000Z',
      },
    ]);
    const none = await call('post', `/school-contribute/getallschoolcontribute/${w.schoolB.schoolid}`, 'teacher', {
      filter: [{ key: 'schoolname', value: 'accra' }],
    });
    expect(none.body.data.total).toBe(0);
    const all = await call('get', `/school-contribute/getschoolcontribute/${w.schoolB.schoolid}`, 'teacher');
    expect(all.body.data.map((r: { schoolcontributeid: string }) => r.schoolcontributeid)).toEqual([
      b[3],
      b[2],
      b[1],
      b[0],
    ]);
    expect(all.body.data[0].school).toEqual({ schoolname: 'Bamako Primary' });
    const one = await call('get', `/school-contribute/getschooldashboard/schoolcontributeid/${b[1]}`, 'teacher');
    expect(one.body.data).toMatchObject({
      schoolcontributeid: b[1],
      expected: 200,
      actual: 150,
      countryid: w.countryY,
    });
    const unknown = await call(
      'get',
      `/school-contribute/getschooldashboard/schoolcontributeid/${crypto.randomUUID()}`,
      'teacher',
    );
    expect([unknown.status, unknown.body.errormessage]).toEqual([400, 'Invalid schoolcontributeid']);
    const noSchool = await call('get', `/school-contribute/getschoolcontribute/${crypto.randomUUID()}`, 'teacher');
    expect([noSchool.status, noSchool.body.errormessage]).toEqual([400, 'Invalid schoolid']);
  });

  it('charts a school\'s three newest records oldest first, named in the caller\'s time zone', async () => {
    const utc = await call('get', `/school-contribute/getschooldashboardid/${w.schoolB.schoolid}`, 'teacher');
    expect(utc.body.data).toEqual([
      {
        name: 'Feb 11, 2025, 3:00:00 PM',
        series: [
          { name: 'Expected($)', value: 200 },
          { name: 'Actuals($)', value: 150 },
        ],
      },
      {
        name: 'Mar 12, 2025, 11:30:00 PM',
        series: [
          { name: 'Expected($)', value: 300 },
          { name: 'Actuals($)', value: 300 },
        ],
      },
      {
        name: 'Apr 13, 2025, 9:00:00 AM',
        series: [
          { name: 'Expected($)', value: 400 },
          { name: 'Actuals($)', value: 100 },
        ],
      },
    ]);
    // Phnom Penh (UTC+7): the browser's getTimezoneOffset() is -420.
    const local = await call(
      'get',
      `/school-contribute/getschooldashboardid/${w.schoolB.schoolid}`,
      'teacher',
      undefined,
      '-420',
    );
    expect(local.body.data.map((d: { name: string }) => d.name)).toEqual([
      'Feb 11, 2025, 10:00:00 PM',
      'Mar 13, 2025, 6:30:00 AM',
      'Apr 13, 2025, 4:00:00 PM',
    ]);
  });

  it('dashboards of every school: the newest record of each, by school; ' +
      'the bare-array route; the filtered one', async () => {
    const all = await call('get', '/school-contribute/getAllSchoolDashboard', 'teacher');
    expect(all.body.data).toEqual([
      { name: 'Accra Primary', series: [{ name: 'Expected($)', value: 500 }, { name: 'Actuals($)', value: 400 }] },
      { name: 'Bamako Primary', series: [{ name: 'Expected($)', value: 400 }, { name: 'Actuals($)', value: 100 }] },
    ]);
    const bare = await call('get', '/school-contribute/getallschoolcontribute', 'teacher');
    expect(Array.isArray(bare.body)).toBe(true);
    expect(bare.body.map((r: { schoolname: string; expected: number }) => [r.schoolname, r.expected])).toEqual([
      ['Accra Primary', 500],
      ['Bamako Primary', 400],
    ]);
    const march = await call(
      'get',
      `/school-contribute/all?countryid=${w.countryY}&schoolname=&date=2025-03-20`,
      'teacher',
    );
    expect(march.body.data).toEqual([
      {
        name: '12/Mar/2025/ Bamako Primary',
        series: [
          { name: 'Expected($)', value: 300 },
          { name: 'Actuals($)', value: 300 },
        ],
      },
    ]);
    // In UTC+7 the March record was made on the 13th.
    const local = await call('get', '/school-contribute/all?date=2025-03-20', 'teacher', undefined, '-420');
    expect(local.body.data.map((d: { name: string }) => d.name)).toEqual(['13/Mar/2025/ Bamako Primary']);
    const accra = await call(
      'get',
      `/school-contribute/all?countryid=all&schoolname=${encodeURIComponent('Accra Primary')}`,
      'teacher',
    );
    expect(accra.body.data).toHaveLength(1);
    expect((await call('get', '/school-contribute/all?date=someday', 'teacher')).body.errormessage).toBe(
      '"date" must be a valid date',
    );
    // A school teacher signed in on central sees its own school only.
    expect(
      (await call('get', '/school-contribute/getallschooldashboard', 'schoolteacherB')).body.data.map(
        (d: { name: string }) => d.name,
      ),
    ).toEqual(['Bamako Primary']);
  });

  it('the fee report CSV: this month as recorded, other months as nothing due; a month when asked', async () => {
    const now = await call('post', '/school-contribute/report/download', 'teacher', {});
    expect(now.status).toBe(200);
    expect(now.headers['content-disposition']).toBe('attachment; filename="report-schoolcontribute.csv"');
    const today = new Date();
    expect(parseCsv(now.text)).toEqual([
      {
        school_contribute: 'Accra Primary',
        expected: '500$',
        actual: '400$',
        date: `${today.getUTCMonth() + 1}/${today.getUTCDate()}/${today.getUTCFullYear()}`,
      },
      { school_contribute: 'Bamako Primary', expected: '0$', actual: '0$', date: 'N/A' },
    ]);
    const feb = await call('post', '/school-contribute/report/download', 'teacher', { date: '2025-02-01' });
    expect(parseCsv(feb.text)).toEqual([
      { school_contribute: 'Bamako Primary', expected: '200$', actual: '150$', date: '2/11/2025' },
    ]);
    expect((await call('post', '/school-contribute/report/download', 'teacher', { date: 'x' })).status).toBe(400);
  });

  it("updates a school's records and one record's amounts; refuses what is not there", async () => {
    const renamed = await call('put', `/school-contribute/updateschoolname/${w.schoolB.schoolid}`, 'admin', {
      schoolname: 'Bamako School',
      countryid: w.countryY,
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.map((r: { schoolname: string }) => r.schoolname)).toEqual([
      'Bamako School',
      'Bamako School',
      'Bamako School',
      'Bamako School',
    ]);
    expect(await t.tdb.db('schoolcontributedata').where({ schoolid: w.schoolA.schoolid }).first('schoolname')).toEqual({
      schoolname: 'Accra Primary',
    });
    const amounts = await call('put', `/school-contribute/updateschooldashboard/${recordA}`, 'admin', {
      expected: 600,
      actual: 600,
    });
    expect(amounts.body.data).toMatchObject({ schoolcontributeid: recordA, expected: 600, actual: 600 });
    const before = await snapshot(t.tdb.db, TABLES);
    const cases: Array<['put' | 'delete', string, Who, object | undefined, string]> = [
      [
        'put',
        `/school-contribute/updateschoolname/${crypto.randomUUID()}`,
        'admin',
        { schoolname: 'X', countryid: w.countryY },
        'School Contribute not create yet',
      ],
      [
        'put',
        `/school-contribute/updateschoolname/${w.schoolB.schoolid}`,
        'scopedCountry',
        { schoolname: 'X', countryid: w.countryY },
        'School Contribute not create yet',
      ],
      [
        'put',
        `/school-contribute/updateschooldashboard/${crypto.randomUUID()}`,
        'admin',
        { expected: 1, actual: 1 },
        'School Contribute not create yet',
      ],
      [
        'put',
        `/school-contribute/updateschooldashboard/${b[0]}`,
        'schoolteacher',
        { expected: 1, actual: 1 },
        'School Contribute not create yet',
      ],
      ['put', `/school-contribute/updateschooldashboard/${recordA}`, 'admin', { expected: 1 }, '"actual" is required'],
      [
        'delete',
        `/school-contribute/deleteschoolcontributeid/${crypto.randomUUID()}`,
        'admin',
        undefined,
        'Invalid schoolcontributeid',
      ],
      [
        'delete',
        `/school-contribute/deleteschoolcontribute/${crypto.randomUUID()}`,
        'admin',
        undefined,
        'Invalid schoolid',
      ],
      [
        'delete',
        `/school-contribute/deleteschoolcontribute/${w.schoolB.schoolid}`,
        'scopedSchool',
        undefined,
        'Invalid schoolid',
      ],
    ];
    for (const [method, url, who, body, message] of cases) {
      const res = await call(method, url, who, body);
      expect([url, res.status, res.body.errormessage]).toEqual([url, 400, message]);
    }
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('soft-deletes one record, then every record of one school and of no other', async () => {
    const one = await call('delete', `/school-contribute/deleteschoolcontributeid/${b[0]}`, 'admin');
    expect([one.status, one.body]).toEqual([200, { error: false, data: true }]);
    expect(
      await t.tdb.db('schoolcontributedata').where({ schoolcontributeid: b[0] }).first('isdeleted', 'deleted_by'),
    ).toMatchObject({ isdeleted: true, deleted_by: expect.any(String) });
    const again = await call('delete', `/school-contribute/deleteschoolcontributeid/${b[0]}`, 'admin');
    expect(again.body.errormessage).toBe('Invalid schoolcontributeid');
    const all = await call('delete', `/school-contribute/deleteschoolcontribute/${w.schoolB.schoolid}`, 'admin');
    expect(all.body).toEqual({ error: false, data: true });
    expect(
      await t.tdb
        .db('schoolcontributedata')
        .where({ schoolid: w.schoolB.schoolid, isdeleted: false })
        .count({ n: '*' })
        .first(),
    ).toEqual({ n: 0 });
    expect(
      await t.tdb
        .db('schoolcontributedata')
        .where({ schoolid: w.schoolA.schoolid, isdeleted: false })
        .count({ n: '*' })
        .first(),
    ).toEqual({ n: 1 });
    // With its records deleted, the school may record this month again.
    expect(
      (
        await call('post', '/school-contribute/create', 'admin', {
          ...newA,
          schoolid: w.schoolB.schoolid,
          countryid: w.countryY,
        })
      ).status,
    ).toBe(200);
  });

  it('months follow the caller\'s time zone', () => {
    const m = monthOf(new Date('2026-02-28T18:00:00.000Z'), -420);
    expect(m).toEqual({ start: '2026-02-28T17:00:00.000Z', end: '2026-03-31T17:00:00.000Z' });
    expect(monthOf(new Date('2026-02-28T18:00:00.000Z'), 0)).toEqual({
      start: '2026-02-01T00:00:00.000Z',
      end: '2026-03-01T00:00:00.000Z',
    });
  });
});
