import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers';
import { addLearner, callers, seedWorld, snapshot, type Who, type World } from './people-fixtures';

let t: TestApp;
let w: World;
let as: Record<Who, string>;
let adminId: string;

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  w = await seedWorld(t.tdb.db);
  as = await callers(t, w);
  adminId = (await t.tdb.db('lmsusers').where('lmsusername', 'like', 'admin-%').first('lmsuserid')).lmsuserid;
});
afterAll(async () => { await t.tdb.dispose(); });

const get = (url: string, who?: Who) =>
  who ? request(t.app).get(url).set('Authorization', as[who]) : request(t.app).get(url);
const send = (method: 'post' | 'put' | 'delete', url: string, who: Who, body?: object) =>
  request(t.app)[method](url).set('Authorization', as[who]).send(body);
const names = (rows: Array<{ schoolname: string }>) => rows.map((r) => r.schoolname);
const TABLES = ['schools', 'students', 'schoolusers', 'standards', 'schoolcontributedata'];

describe('school reads', () => {
  it('GET /school/all: live schools by name with real JSON columns, ' +
      'narrowed by school and country; "string" finds nothing', async () => {
    const all = await get('/school/all', 'teacher');
    expect(all.status).toBe(200);
    expect(names(all.body.data)).toEqual(['Accra Primary', 'Bamako Primary']);
    const a = all.body.data[0];
    expect(a.curriculums).toEqual([w.curriculum1, w.curriculum2]);
    expect(a.brandingconfig).toEqual({ logo: 'a.png', colours: ['#fff'] });
    expect(all.body.data[1].brandingconfig).toBeNull();
    expect(names((await get('/school/all?school=%20bama%20', 'teacher')).body.data)).toEqual(['Bamako Primary']);
    expect(names((await get(`/school/all?countryid=${w.countryX}&school=`, 'teacher')).body.data)).toEqual([
      'Accra Primary',
    ]);
    expect((await get('/school/all?countryid=string&school=string', 'teacher')).body.data).toEqual([]);
    // The school teacher (central sign-in) sees its own school only.
    expect(names((await get('/school/all', 'schoolteacherB')).body.data)).toEqual(['Bamako Primary']);
    expect((await get('/school/all')).status).toBe(401);
  });

  it('GET /school/country/:countryid (deleted schools included) and its curriculum filter; ' +
      'GET /school/curriculumid', async () => {
    const gone = crypto.randomUUID();
    await t.tdb
      .db('schools')
      .insert({
        schoolid: gone,
        schoolname: 'Closed Primary',
        countryid: w.countryX,
        curriculums: JSON.stringify([w.curriculum2]),
        isdeleted: true,
      });
    const x = await get(`/school/country/${w.countryX}`, 'admin');
    expect([x.status, names(x.body.data)]).toEqual([200, ['Accra Primary', 'Closed Primary']]);
    expect(names((await get(`/school/country/${w.countryX}/curriculum/${w.curriculum2}`, 'admin')).body.data)).toEqual([
      'Accra Primary',
      'Closed Primary',
    ]);
    expect(names((await get(`/school/country/${w.countryY}/curriculum/${w.curriculum2}`, 'admin')).body.data)).toEqual(
      [],
    );
    expect((await get(`/school/country/${w.countryX}`, 'teacher')).status).toBe(403);
    const bad = await get('/school/country/nope/curriculum/nope', 'admin');
    expect([bad.status, bad.body.errormessage]).toEqual([
      400,
      '"countryid" must be a valid GUID, "curriculumid" must be a valid GUID',
    ]);
    // Live schools only here.
    expect(names((await get(`/school/curriculumid?curriculumid=${w.curriculum2}`, 'teacher')).body.data)).toEqual([
      'Accra Primary',
    ]);
    expect(names((await get(`/school/curriculumid?curriculumid=${w.curriculum1}`, 'teacher')).body.data)).toEqual([
      'Accra Primary',
      'Bamako Primary',
    ]);
    expect((await get('/school/curriculumid', 'teacher')).body.data).toEqual([]);
    await t.tdb.db('schools').where({ schoolid: gone }).del();
  });

  it('GET /school/:schoolid and /curriculums: the row, the curricula with names; ' +
      'unknown or deleted ids refused', async () => {
    const one = await get(`/school/${w.schoolA.schoolid}`, 'teacher');
    expect([one.status, one.body.data]).toEqual([
      200,
      expect.objectContaining({
        ...w.schoolA,
        countryid: w.countryX,
        curriculums: [w.curriculum1, w.curriculum2],
        uitheme: 'kids',
        isdeleted: false,
      }),
    ]);
    const cur = await get(`/school/${w.schoolA.schoolid}/curriculums`, 'teacher');
    expect(cur.body.data).toEqual([
      { schoolid: w.schoolA.schoolid, curriculumid: w.curriculum1, curriculumname: 'Reading' },
      { schoolid: w.schoolA.schoolid, curriculumid: w.curriculum2, curriculumname: 'Numbers' },
    ]);
    for (const url of [`/school/${crypto.randomUUID()}`, `/school/${crypto.randomUUID()}/curriculums`]) {
      const res = await get(url, 'teacher');
      expect([res.status, res.body.errormessage]).toEqual([400, 'Invalid school id']);
    }
    expect((await get('/school/nope', 'teacher')).body.errormessage).toBe('"schoolid" must be a valid GUID');
    expect((await get(`/school/${w.schoolA.schoolid}`, 'user')).status).toBe(403);
  });

  it('POST /school: the Schools page body, paged, with the country row and curriculum NAMES', async () => {
    const page = await send('post', '/school', 'teacher', {
      filter: [
        { key: 'schoolname', value: '' },
        { key: 'countryid', value: [] },
        { key: 'curriculums', value: [] },
      ],
      pageindex: 1,
      pagesize: 10,
    });
    expect(page.status).toBe(200);
    expect(page.body.data).toMatchObject({ total: 2, pageindex: 1, pagesize: 10 });
    expect(page.body.data.data[0]).toMatchObject({
      schoolname: 'Accra Primary',
      curriculums: ['Reading', 'Numbers'],
      countries: { countryid: w.countryX, countryname: 'Ghana' },
      brandingconfig: { logo: 'a.png' },
    });
    const picker = await send('post', '/school', 'teacher', { pagesize: 200 });
    expect([picker.body.data.total, picker.body.data.pageindex, picker.body.data.pagesize]).toEqual([2, 0, 200]);
    const byCountry = await send('post', '/school', 'teacher', {
      filter: [{ key: 'countryid', value: [w.countryY, crypto.randomUUID()] }],
    });
    expect(names(byCountry.body.data.data)).toEqual(['Bamako Primary']);
    const byCurriculum = await send('post', '/school', 'teacher', {
      filter: [{ key: 'curriculums', value: [w.curriculum2] }],
    });
    expect(names(byCurriculum.body.data.data)).toEqual(['Accra Primary']);
    const second = await send('post', '/school', 'teacher', { pageindex: 2, pagesize: 1 });
    expect(names(second.body.data.data)).toEqual(['Bamako Primary']);
    const bad = await send('post', '/school', 'teacher', { filter: [{ key: 'city', value: 'x' }] });
    expect(bad.status).toBe(400);
    expect((await send('post', '/school', 'user', {})).status).toBe(403);
  });
});

describe('school writes', () => {
  it('creates a school, with the caller in the audit columns', async () => {
    const res = await send('post', '/school/create', 'admin', {
      schoolname: 'Kumasi Primary',
      countryid: w.countryX,
      curriculums: [w.curriculum1],
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      schoolname: 'Kumasi Primary',
      countryid: w.countryX,
      curriculums: [w.curriculum1],
      isdeleted: false,
      uitheme: 'kids',
      created_by: adminId,
    });
    expect(await t.tdb.db('schools').where({ schoolname: 'Kumasi Primary' }).first()).toMatchObject({
      curriculums: [w.curriculum1],
    });
  });

  it('refuses bad bodies, taken names, unknown countries and curricula and non-admins, writing nothing', async () => {
    const before = await snapshot(t.tdb.db, TABLES);
    const ok = { schoolname: 'Tamale Primary', countryid: w.countryX, curriculums: [] };
    const cases: Array<[Who, object, number, string | RegExp]> = [
      ['admin', {}, 400, '"schoolname" is required, "countryid" is required, "curriculums" is required'],
      ['admin', { ...ok, schoolname: '   ' }, 400, '"schoolname" not allowed'],
      ['admin', { ...ok, schoolname: '' }, 400, '"schoolname" is not allowed to be empty'],
      ['admin', { ...ok, schoolname: 'x'.repeat(46) }, 400, /"schoolname" length must be less than or equal to 45/],
      ['admin', { ...ok, countryid: 'nope' }, 400, '"countryid" must be a valid GUID'],
      ['admin', { ...ok, curriculums: 'x' }, 400, '"curriculums" is required'],
      ['admin', { ...ok, extra: 1 }, 400, '"extra" is not allowed'],
      ['admin', { ...ok, schoolname: 'accra PRIMARY' }, 400, 'School already exists'],
      ['admin', { ...ok, countryid: crypto.randomUUID() }, 400, 'Invalid country id'],
      ['admin', { ...ok, curriculums: [w.curriculum1, crypto.randomUUID()] }, 400, 'Invalid curriculum id'],
      ['teacher', ok, 403, 'Forbidden resource'],
    ];
    for (const [who, body, status, message] of cases) {
      const res = await send('post', '/school/create', who, body);
      expect(res.status).toBe(status);
      if (typeof message === 'string') expect(res.body.errormessage).toBe(message);
      else expect(res.body.errormessage).toMatch(message);
    }
    // A deleted school keeps its name.
    await t.tdb
      .db('schools')
      .insert({
        schoolid: crypto.randomUUID(),
        schoolname: 'Old Primary',
        countryid: w.countryX,
        curriculums: '[]',
        isdeleted: true,
      });
    const old = await send('post', '/school/create', 'admin', { ...ok, schoolname: 'Old Primary' });
    expect([old.status, old.body.errormessage]).toEqual([400, 'School already exists']);
    await t.tdb.db('schools').where({ schoolname: 'Old Primary' }).del();
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('updates a school and carries a rename to its learners, school users, classes and fee records', async () => {
    const created = await send('post', '/school/create', 'admin', {
      schoolname: 'Rename Me',
      countryid: w.countryX,
      curriculums: [w.curriculum1],
    });
    const id = created.body.data.schoolid as string;
    const classid = crypto.randomUUID();
    await t.tdb
      .db('standards')
      .insert({ standardid: classid, standardname: 'Class 9', schoolid: id, schoolname: 'Rename Me' });
    const learner = await addLearner(t.tdb.db, {
      schoolname: 'Rename Me',
      standard: classid,
      schoolusername: 'renamed1',
      curriculumids: [w.curriculum1],
    });
    await t.tdb
      .db('schoolcontributedata')
      .insert({
        schoolcontributeid: crypto.randomUUID(),
        schoolid: id,
        schoolname: 'Rename Me',
        countryid: w.countryX,
        expected: 5,
        actual: 5,
      });

    const res = await send('put', `/school/update/${id}`, 'admin', {
      schoolname: 'Renamed Primary',
      countryid: w.countryY,
      curriculums: [w.curriculum2, w.curriculum2],
      uitheme: 'corporate',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      schoolid: id,
      schoolname: 'Renamed Primary',
      countryid: w.countryY,
      curriculums: [w.curriculum2],
      uitheme: 'corporate',
      updated_by: adminId,
    });
    expect(await t.tdb.db('students').where({ studentid: learner.studentid }).first('schoolname')).toEqual({
      schoolname: 'Renamed Primary',
    });
    expect(await t.tdb.db('schoolusers').where({ schooluserid: learner.schooluserid }).first('schoolname')).toEqual({
      schoolname: 'Renamed Primary',
    });
    expect(await t.tdb.db('standards').where({ standardid: classid }).first('schoolname')).toEqual({
      schoolname: 'Renamed Primary',
    });
    expect(await t.tdb.db('schoolcontributedata').where({ schoolid: id }).first('schoolname', 'countryid')).toEqual({
      schoolname: 'Renamed Primary',
      countryid: w.countryY,
    });
    // Other schools' rows are untouched.
    expect(await t.tdb.db('standards').where({ standardid: w.classA1 }).first('schoolname')).toEqual({
      schoolname: 'Accra Primary',
    });
    // Without uitheme the theme stays.
    const again = await send('put', `/school/update/${id}`, 'admin', {
      schoolname: 'Renamed Primary',
      countryid: w.countryY,
      curriculums: [],
    });
    expect(again.body.data).toMatchObject({ uitheme: 'corporate', curriculums: [] });

    const before = await snapshot(t.tdb.db, TABLES);
    const cases: Array<[string, object, string]> = [
      [
        `/school/update/${id}`,
        { schoolname: 'Accra Primary', countryid: w.countryY, curriculums: [] },
        'School already exists',
      ],
      [
        `/school/update/${crypto.randomUUID()}`,
        { schoolname: 'Any', countryid: w.countryY, curriculums: [] },
        'Invalid school id',
      ],
      [
        `/school/update/${id}`,
        { schoolname: 'Any', countryid: w.countryY, curriculums: [], uitheme: 'dark' },
        '"uitheme" must be one of [kids, corporate]',
      ],
      [
        `/school/update/${id}`,
        { schoolname: 'Any', countryid: crypto.randomUUID(), curriculums: [] },
        'Invalid country id',
      ],
      [
        '/school/update/nope',
        { schoolname: 'Any', countryid: w.countryY, curriculums: [] },
        '"schoolid" must be a valid GUID',
      ],
    ];
    for (const [url, body, message] of cases) {
      const r = await send('put', url, 'admin', body);
      expect([r.status, r.body.errormessage]).toEqual([400, message]);
    }
    expect(
      (
        await send('put', `/school/update/${id}`, 'teacher', {
          schoolname: 'Any',
          countryid: w.countryY,
          curriculums: [],
        })
      ).status,
    ).toBe(403);
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('soft-deletes a school without learners; refuses one with learners, an unknown or deleted id', async () => {
    const busy = await send('post', '/school/create', 'admin', {
      schoolname: 'Busy Primary',
      countryid: w.countryX,
      curriculums: [],
    });
    await addLearner(t.tdb.db, {
      schoolname: 'Busy Primary',
      standard: null,
      schoolusername: 'busy1',
      curriculumids: [w.curriculum1],
    });
    const refused = await send('delete', `/school/${busy.body.data.schoolid}`, 'admin');
    expect([refused.status, refused.body.errormessage]).toEqual([
      400,
      'School has students assigned. School cannot be deleted',
    ]);
    expect(await t.tdb.db('schools').where({ schoolid: busy.body.data.schoolid }).first('isdeleted')).toEqual({
      isdeleted: false,
    });
    // A learner that was deleted does not hold the school.
    await t.tdb.db('students').where({ schoolname: 'Busy Primary' }).update({ isdeleted: true });
    const ok = await send('delete', `/school/${busy.body.data.schoolid}`, 'admin');
    expect([ok.status, ok.body]).toEqual([200, { error: false, data: true }]);
    expect(await t.tdb.db('schools').where({ schoolid: busy.body.data.schoolid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: adminId,
    });
    expect(names((await get('/school/all', 'admin')).body.data)).not.toContain('Busy Primary');
    const again = await send('delete', `/school/${busy.body.data.schoolid}`, 'admin');
    expect([again.status, again.body.errormessage]).toEqual([400, 'Invalid school id']);
    expect((await send('delete', `/school/${w.schoolA.schoolid}`, 'teacher')).status).toBe(403);
  });
});
