import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';

// Baseline, midline and endline assessments of a curriculum (contract §6).

// Statements a request sends: Knex's query events, plus the reads that go through readRows (which skips them).
const statements = vi.hoisted(() => ({ reads: 0 }));
vi.mock('@lms/db', async (actual) => {
  const m = await actual<typeof import('@lms/db')>();
  return { ...m, readRows: (q: Parameters<typeof m.readRows>[0]) => { statements.reads += 1; return m.readRows(q); } };
});

let t: TestApp;
let admin: string;
let adminId: string;
const second = { curriculumid: crypto.randomUUID(), curriculumname: 'Second Curriculum' };
const otherSchool = { schoolid: crypto.randomUUID(), schoolname: 'Hill School' };
const countryX = crypto.randomUUID();

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  await seedDemoContent(db);
  await db('curriculums').insert({ ...second, subjectid: DEMO.subjectid, curriculumstatus: true });
  await db('countries').insert({ countryid: countryX, countryname: 'Country X' });
  await db('schools').insert({ ...otherSchool, countryid: countryX, curriculums: JSON.stringify([]) });
  adminId = await createStaff(db, { lmsusername: 'base@line.test', roleids: [ROLE_IDS.superadmin] });
  admin = `Bearer ${(await staffLogin(t.app, 'base@line.test')).accessToken}`;
});
afterAll(async () => { await t.tdb.dispose(); });

const call = (method: 'get' | 'post' | 'put' | 'delete', path: string, body?: object, who = admin) => {
  const r = request(t.app)[method](path).set('Authorization', who);
  return body ? r.send(body) : r;
};
const form = (o: Record<string, unknown> = {}) => ({
  baselineid: DEMO.curriculumid, curriculumid: DEMO.curriculumid, baselinename: 'Term 1 start', baselinetype: 1,
  startdate: '2026-01-10', enddate: '2026-02-10', schoolid: [DEMO.schoolid], ...o,
});
const rows = () => t.tdb.db('curriculumbaseline').orderBy('created_at');
const addQuestion = async (curriculumbaselineid: string) => {
  const questionid = crypto.randomUUID();
  await t.tdb
    .db('questions')
    .insert({
      questionid,
      questionidentifier: `Q-${questionid.slice(0, 6)}`,
      templatetypeid: 1,
      questionstatus: true,
      questioncorrectvalue: 1,
      questiontext: 'q',
    });
  await t.tdb
    .db('baselinequestion')
    .insert({
      baselinequestionid: crypto.randomUUID(),
      curriculumbaselineid,
      questionid,
      baselinequestionstatus: true,
      baselinequestionorder: 1,
    });
};

describe('create', () => {
  it('makes an inactive assessment whose baselineid is its curriculum, with real dates and school list', async () => {
    const res = await call('post', '/curriculumbaseline/create', form({ uiOnlyField: 'kept out' }));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      curriculumbaselineid: expect.any(String),
      curriculumid: DEMO.curriculumid,
      baselineid: DEMO.curriculumid,
      baselinename: 'Term 1 start',
      baselinetype: 1,
      baselinestatus: false,
      isdeleted: false,
      schoolid: [DEMO.schoolid],
      created_by: adminId,
      startdate: '2026-01-10T00:00:00.000Z',
      enddate: '2026-02-10T00:00:00.000Z',
    });
    expect(await rows()).toHaveLength(1);
  });

  it('refuses with the contract messages and writes nothing', async () => {
    const cases: Array<[object, string]> = [
      [form({ curriculumid: crypto.randomUUID(), baselinename: 'Other' }), 'Curriculum does not exists'],
      [
        form({ baselineid: crypto.randomUUID(), baselinetype: 3, baselinename: 'Other' }),
        'Endline Curriculum does not exists',
      ],
      [form({ baselinename: 'Another name' }), 'Baseline Curriculum already exists this year'],
      [form({ curriculumid: second.curriculumid, baselineid: second.curriculumid }), 'Baseline Name already exists'],
      [form(), 'Baseline Curriculum already exists this year, Baseline Name already exists'],
      [form({ baselinetype: 4 }), '"baselinetype" must be less than or equal to 3'],
      [form({ baselinename: '   ' }), '"baselinename" not allowed'],
      [
        form({ baselinename: 'x'.repeat(37) }),
        '"baselinename" length must be less than or equal to 36 characters long',
      ],
      [form({ startdate: 'not a date' }), '"startdate" must be a valid date'],
      [form({ curriculumid: 'nope' }), '"curriculumid" must be a valid GUID'],
      [form({ schoolid: 'd0000000' }), '"schoolid" must be an array'],
    ];
    for (const [body, message] of cases) {
      const res = await call('post', '/curriculumbaseline/create', body);
      expect([res.status, res.body.errormessage]).toEqual([400, message]);
    }
    expect(await rows()).toHaveLength(1);
    const missing = { ...form() } as Record<string, unknown>;
    delete missing.baselinename;
    expect((await call('post', '/curriculumbaseline/create', missing)).body.errormessage).toBe(
      '"baselinename" is required',
    );
  });

  it("allows the other types of the same curriculum the same year, " +
      "and a type again when last year's was the newest", async () => {
    expect(
      (await call('post', '/curriculumbaseline/create', form({ baselinetype: 2, baselinename: 'Mid year' }))).status,
    ).toBe(200);
    expect(
      (await call('post', '/curriculumbaseline/create', form({ baselinetype: 3, baselinename: 'Year end' }))).status,
    ).toBe(200);
    const res = await call(
      'post',
      '/curriculumbaseline/create',
      form({ curriculumid: second.curriculumid, baselineid: second.curriculumid, baselinename: 'Second start' }),
    );
    expect(res.status).toBe(200);
    await t.tdb
      .db('curriculumbaseline')
      .where({ curriculumbaselineid: res.body.data.curriculumbaselineid })
      .update({ created_at: '2020-05-05T00:00:00.000Z' });
    expect(
      (
        await call(
          'post',
          '/curriculumbaseline/create',
          form({ curriculumid: second.curriculumid, baselineid: second.curriculumid, baselinename: 'Second again' }),
        )
      ).status,
    ).toBe(200);
  });
});

describe('update, activate, deactivate, delete', () => {
  let term1: string;
  let mid: string;
  beforeAll(async () => {
    term1 = (await t.tdb.db('curriculumbaseline').where({ baselinename: 'Term 1 start' }).first()).curriculumbaselineid;
    mid = (await t.tdb.db('curriculumbaseline').where({ baselinename: 'Mid year' }).first()).curriculumbaselineid;
  });

  it('updates the fields given and keeps baselineid on the curriculum', async () => {
    const res = await call('put', `/curriculumbaseline/update/${term1}`, {
      baselinename: 'Term 1 opening',
      enddate: '2026-03-01',
      schoolid: [DEMO.schoolid, otherSchool.schoolid],
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      baselinename: 'Term 1 opening',
      enddate: '2026-03-01T00:00:00.000Z',
      startdate: '2026-01-10T00:00:00.000Z',
      schoolid: [DEMO.schoolid, otherSchool.schoolid],
      updated_by: adminId,
    });
    const clash = await call('put', `/curriculumbaseline/update/${term1}`, {
      baselinename: 'Mid year',
      baselinetype: 2,
    });
    expect([clash.status, clash.body.errormessage]).toEqual([400, 'Midline Name already exists']);
    const unknown = await call('put', `/curriculumbaseline/update/${crypto.randomUUID()}`, { baselinetype: 3 });
    expect([unknown.status, unknown.body.errormessage]).toEqual([400, 'Invalid curriculum Endline']);
    expect((await t.tdb.db('curriculumbaseline').where({ curriculumbaselineid: term1 }).first()).baselinename).toBe(
      'Term 1 opening',
    );
  });

  it('refuses to activate an assessment without questions', async () => {
    const res = await call('put', `/curriculumbaseline/activate/${term1}/${DEMO.curriculumid}`);
    expect([res.status, res.body.errormessage]).toEqual([400, 'Please add question!']);
    expect((await t.tdb.db('curriculumbaseline').where({ curriculumbaselineid: term1 }).first()).baselinestatus).toBe(
      false,
    );
  });

  it('keeps one active assessment per curriculum: activating one switches the other off', async () => {
    await addQuestion(term1);
    await addQuestion(mid);
    expect((await call('put', `/curriculumbaseline/activate/${term1}/${DEMO.curriculumid}`)).body).toEqual({
      error: false,
      data: true,
    });
    const active = async () =>
      (
        await t.tdb
          .db('curriculumbaseline')
          .where({ curriculumid: DEMO.curriculumid, baselinestatus: true })
          .select('curriculumbaselineid')
      ).map((r) => r.curriculumbaselineid);
    expect(await active()).toEqual([term1]);
    expect((await call('put', `/curriculumbaseline/activate/${mid}/${DEMO.curriculumid}`)).status).toBe(200);
    expect(await active()).toEqual([mid]);
    // The second curriculum's assessments are not touched.
    await Promise.all([
      call('put', `/curriculumbaseline/activate/${term1}/${DEMO.curriculumid}`),
      call('put', `/curriculumbaseline/activate/${mid}/${DEMO.curriculumid}`),
    ]);
    expect(await active()).toHaveLength(1);
    expect(
      (await call('put', `/curriculumbaseline/activate/${crypto.randomUUID()}/${DEMO.curriculumid}`)).body.errormessage,
    ).toBe('Invalid curriculum Baseline');
  });

  it('deactivates', async () => {
    expect((await call('put', `/curriculumbaseline/deactivate/${mid}`)).body).toEqual({ error: false, data: true });
    expect((await call('put', `/curriculumbaseline/deactivate/${term1}`)).status).toBe(200);
    expect(
      await t.tdb.db('curriculumbaseline').where({ curriculumid: DEMO.curriculumid, baselinestatus: true }),
    ).toEqual([]);
    expect((await call('put', `/curriculumbaseline/deactivate/${crypto.randomUUID()}`)).body.errormessage).toBe(
      'Invalid curriculum Baseline',
    );
  });

  it('deletes an assessment together with its questions', async () => {
    expect((await call('delete', `/curriculumbaseline/${mid}`)).body).toEqual({ error: false, data: true });
    expect(await t.tdb.db('curriculumbaseline').where({ curriculumbaselineid: mid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: adminId,
    });
    expect(await t.tdb.db('baselinequestion').where({ curriculumbaselineid: mid, isdeleted: false })).toEqual([]);
    expect(await t.tdb.db('baselinequestion').where({ curriculumbaselineid: term1, isdeleted: false })).toHaveLength(1);
    expect((await call('delete', `/curriculumbaseline/${mid}`)).body.errormessage).toBe('Invalid curriculum Baseline');
  });
});

describe('reading', () => {
  async function countStatements(path: string): Promise<{ n: number; body: request.Response['body'] }> {
    let n = 0;
    const onQuery = () => { n += 1; };
    statements.reads = 0;
    t.tdb.db.on('query', onQuery);
    const res = await call('get', path);
    t.tdb.db.off('query', onQuery);
    expect(res.status).toBe(200);
    return { n: n + statements.reads, body: res.body };
  }

  it('lists live assessments newest first with their curriculum name', async () => {
    const list = (await call('get', '/curriculumbaseline/all')).body.data as Array<Record<string, unknown>>;
    expect(list.map((b) => b.baselinename).sort()).toEqual([
      'Second again',
      'Second start',
      'Term 1 opening',
      'Year end',
    ]);
    expect(list.find((b) => b.baselinename === 'Term 1 opening')).toEqual({
      baselineid: DEMO.curriculumid,
      curriculumbaselineid: expect.any(String),
      baselinename: 'Term 1 opening',
      curriculumid: DEMO.curriculumid,
      curriculumname: DEMO.curriculumname,
      baselinestatus: false,
      baselinetype: 1,
      startdate: '2026-01-10T00:00:00.000Z',
      enddate: '2026-03-01T00:00:00.000Z',
      created_at: expect.any(String),
      schoolid: [DEMO.schoolid, otherSchool.schoolid],
    });
    const created = list.map((b) => b.created_at as string);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('reads /all and /query in the same number of statements for 4 assessments as for 44', async () => {
    const before = {
      all: await countStatements('/curriculumbaseline/all'),
      query: await countStatements('/curriculumbaseline/query?baselinename=e'),
    };
    expect(statements.reads).toBeGreaterThan(0);
    const curricula = Array.from({ length: 10 }, () => ({
      curriculumid: crypto.randomUUID(),
      curriculumname: `C ${crypto.randomUUID().slice(0, 8)}`,
      subjectid: DEMO.subjectid,
    }));
    await t.tdb.db('curriculums').insert(curricula);
    await t.tdb.db('curriculumbaseline').insert(
      Array.from({ length: 40 }, (_, i) => ({
        curriculumbaselineid: crypto.randomUUID(),
        curriculumid: curricula[i % 10].curriculumid,
        baselineid: curricula[i % 10].curriculumid,
        baselinename: `Extra ${i}`,
        baselinetype: (i % 3) + 1,
        baselinestatus: false,
        schoolid: JSON.stringify([]),
        isdeleted: false,
      })),
    );
    const after = {
      all: await countStatements('/curriculumbaseline/all'),
      query: await countStatements('/curriculumbaseline/query?baselinename=e'),
    };
    expect(after.all.body.data).toHaveLength(44);
    expect(after.all.n).toBe(before.all.n);
    expect(after.query.n).toBe(before.query.n);
    await t.tdb.db('curriculumbaseline').where('baselinename', 'like', 'Extra %').delete();
  });

  it('filters by name and type', async () => {
    const names = async (qs: string) =>
      ((await call('get', `/curriculumbaseline/query${qs}`)).body.data as Array<{ baselinename: string }>)
        .map((b) => b.baselinename)
        .sort();
    expect(await names('?baselinename=second')).toEqual(['Second again', 'Second start']);
    expect(await names('?baselinetype=3')).toEqual(['Year end']);
    expect(await names('?baselinename=term&baselinetype=1')).toEqual(['Term 1 opening']);
    expect(await names('?baselinetype=0')).toHaveLength(4);
    expect((await call('get', '/curriculumbaseline/query?baselinetype=abc')).status).toBe(400);
  });

  it('answers one assessment with its curriculum names, or nothing', async () => {
    const { curriculumbaselineid } = await t.tdb
      .db('curriculumbaseline')
      .where({ baselinename: 'Term 1 opening' })
      .first();
    const res = await call('get', `/curriculumbaseline/getcurriculumbaseline/${curriculumbaselineid}`);
    expect(res.body.data).toEqual({
      baselinename: 'Term 1 opening',
      baselineid: DEMO.curriculumid,
      curriculumbaselineid,
      curriculumbaselinename: DEMO.curriculumname,
      curriculumid: DEMO.curriculumid,
      curriculumname: DEMO.curriculumname,
      baselinestatus: false,
      baselinetype: 1,
      startdate: '2026-01-10T00:00:00.000Z',
      enddate: '2026-03-01T00:00:00.000Z',
      schoolid: [DEMO.schoolid, otherSchool.schoolid],
    });
    expect((await call('get', `/curriculumbaseline/getcurriculumbaseline/${crypto.randomUUID()}`)).body).toEqual({
      error: false,
      data: null,
    });
  });

  it('lists the schools of an assessment, only those the caller may see', async () => {
    const { curriculumbaselineid } = await t.tdb
      .db('curriculumbaseline')
      .where({ baselinename: 'Term 1 opening' })
      .first();
    const all = await call('get', `/curriculumbaseline/school/${curriculumbaselineid}`);
    expect(all.body.data).toEqual([
      {
        curriculumbaselineid,
        baselinename: 'Term 1 opening',
        baselinetype: 1,
        schoolname: DEMO.schoolname,
        schoolid: DEMO.schoolid,
      },
      {
        curriculumbaselineid,
        baselinename: 'Term 1 opening',
        baselinetype: 1,
        schoolname: otherSchool.schoolname,
        schoolid: otherSchool.schoolid,
      },
    ]);
    await createStaff(t.tdb.db, { lmsusername: 'x@line.test', roleids: [ROLE_IDS.superadmin], countries: [countryX] });
    const scoped = `Bearer ${(await staffLogin(t.app, 'x@line.test')).accessToken}`;
    // The assessment's curriculum is not offered in country X:
    // refused as unknown, then offered there: its schools in X.
    expect((await call('get', `/curriculumbaseline/school/${curriculumbaselineid}`, undefined, scoped)).body).toEqual({
      error: true,
      errormessage: 'Invalid curriculum Baseline',
      data: false,
    });
    await t.tdb
      .db('curriculumcountry')
      .insert({ curriculumcountryid: crypto.randomUUID(), curriculumid: DEMO.curriculumid, countryid: countryX });
    const mine = await call('get', `/curriculumbaseline/school/${curriculumbaselineid}`, undefined, scoped);
    expect(mine.body.data.map((s: { schoolname: string }) => s.schoolname)).toEqual([otherSchool.schoolname]);
    expect((await call('get', `/curriculumbaseline/school/${crypto.randomUUID()}`)).body.data).toEqual([]);
  });
});
