import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';

// The questions of an assessment (contract §3).

let t: TestApp;
let admin: string;
let adminId: string;
const baseline = { source: crypto.randomUUID(), target: crypto.randomUUID(), other: crypto.randomUUID() };
const questions = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  await seedDemoContent(db);
  for (const [name, id, type] of [
    ['Start', baseline.source, 1],
    ['Middle', baseline.target, 2],
    ['Spare', baseline.other, 3],
  ] as const) {
    await db('curriculumbaseline').insert({
      curriculumbaselineid: id,
      curriculumid: DEMO.curriculumid,
      baselineid: DEMO.curriculumid,
      baselinename: name,
      baselinetype: type,
      baselinestatus: false,
      schoolid: JSON.stringify([]),
    });
  }
  for (const [i, questionid] of questions.entries()) {
    await db('questions').insert({
      questionid,
      questionidentifier: `BQ-${i + 1}`,
      templatetypeid: 1,
      questionstatus: true,
      questioncorrectvalue: 1,
      questiontext: `q${i}`,
    });
  }
  adminId = await createStaff(db, { lmsusername: 'bq@line.test', roleids: [ROLE_IDS.superadmin] });
  admin = `Bearer ${(await staffLogin(t.app, 'bq@line.test')).accessToken}`;
});
afterAll(async () => { await t.tdb.dispose(); });

const call = (method: 'get' | 'post' | 'put' | 'delete', path: string, body?: object) => {
  const r = request(t.app)[method](path).set('Authorization', admin);
  return body ? r.send(body) : r;
};
const add = (curriculumbaselineid: string, questionid: string, baselinequestionorder: number) =>
  call('post', '/baselinequestion/create', { curriculumbaselineid, questionid, baselinequestionorder });
const live = (curriculumbaselineid: string) =>
  t.tdb.db('baselinequestion').where({ curriculumbaselineid, isdeleted: false }).orderBy('baselinequestionorder');

describe('/baselinequestion', () => {
  it('adds questions (active) and answers the row', async () => {
    const res = await add(baseline.source, questions[1], 2);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      baselinequestionid: expect.any(String),
      curriculumbaselineid: baseline.source,
      questionid: questions[1],
      baselinequestionstatus: true,
      baselinequestionorder: 2,
      isdeleted: false,
      created_by: adminId,
    });
    expect((await add(baseline.source, questions[0], 1)).status).toBe(200);
    expect(await live(baseline.source)).toHaveLength(2);
  });

  it('refuses an unknown assessment or question, a question already added, ' +
      'and a malformed body, writing nothing', async () => {
    const cases: Array<[request.Test, string]> = [
      [add(crypto.randomUUID(), questions[2], 1), 'Invalid curriculum Baseline'],
      [add(baseline.source, crypto.randomUUID(), 1), 'Invalid question id'],
      [add(baseline.source, questions[0], 5), 'Question already added to BaselineQuestion'],
      [
        call('post', '/baselinequestion/create', { curriculumbaselineid: baseline.source, questionid: questions[2] }),
        '"baselinequestionorder" must be a number',
      ],
      [
        call('post', '/baselinequestion/create', {
          curriculumbaselineid: 'x',
          questionid: questions[2],
          baselinequestionorder: 1,
        }),
        '"curriculumbaselineid" must be a valid GUID',
      ],
      [
        call('post', '/baselinequestion/create', {
          curriculumbaselineid: baseline.source,
          questionid: questions[2],
          baselinequestionorder: 1,
          extra: true,
        }),
        '"extra" is not allowed',
      ],
    ];
    for (const [pending, message] of cases) {
      const res = await pending;
      expect([res.status, res.body.errormessage]).toEqual([400, message]);
    }
    expect(await t.tdb.db('baselinequestion')).toHaveLength(2);
  });

  it('lists an assessment\'s questions in order with its name, type and the question identifiers', async () => {
    const res = await call('get', `/baselinequestion/getall/${baseline.source}`);
    expect(res.body.data).toEqual([
      {
        baselinequestionid: expect.any(String),
        curriculumbaselineid: baseline.source,
        questionid: questions[0],
        baselinequestionstatus: true,
        baselinequestionorder: 1,
        baselinename: 'Start',
        baselinetype: 1,
        questionidentifier: 'BQ-1',
      },
      {
        baselinequestionid: expect.any(String),
        curriculumbaselineid: baseline.source,
        questionid: questions[1],
        baselinequestionstatus: true,
        baselinequestionorder: 2,
        baselinename: 'Start',
        baselinetype: 1,
        questionidentifier: 'BQ-2',
      },
    ]);
    expect((await call('get', `/baselinequestion/getall/${crypto.randomUUID()}`)).body.data).toEqual([]);
  });

  it('reorders, deactivates, activates and soft-deletes; an unknown id is refused', async () => {
    const [first, second] = await live(baseline.source);
    expect((await call('put', `/baselinequestion/order/${first.baselinequestionid}/3`)).body).toEqual({
      error: false,
      data: true,
    });
    expect(
      (await call('get', `/baselinequestion/getall/${baseline.source}`)).body.data.map(
        (q: { questionid: string }) => q.questionid,
      ),
    ).toEqual([questions[1], questions[0]]);
    expect((await call('put', `/baselinequestion/deactivate/${second.baselinequestionid}`)).body.data).toBe(true);
    expect(
      (await t.tdb.db('baselinequestion').where({ baselinequestionid: second.baselinequestionid }).first())
        .baselinequestionstatus,
    ).toBe(false);
    expect((await call('put', `/baselinequestion/activate/${second.baselinequestionid}`)).body.data).toBe(true);
    expect(
      (await t.tdb.db('baselinequestion').where({ baselinequestionid: second.baselinequestionid }).first())
        .baselinequestionstatus,
    ).toBe(true);

    const unknown = crypto.randomUUID();
    for (const [method, path] of [
      ['put', `/baselinequestion/activate/${unknown}`],
      ['put', `/baselinequestion/deactivate/${unknown}`],
      ['put', `/baselinequestion/order/${unknown}/1`],
      ['delete', `/baselinequestion/${unknown}`],
    ] as const) {
      const res = await call(method, path);
      expect([path, res.status, res.body.errormessage]).toEqual([path, 400, 'Invalid BaselineQuestion ID']);
    }
    expect((await call('put', `/baselinequestion/order/${first.baselinequestionid}/two`)).body.errormessage).toBe(
      '"baselinequestionorder" must be a number',
    );

    expect((await call('delete', `/baselinequestion/${first.baselinequestionid}`)).body).toEqual({
      error: false,
      data: true,
    });
    expect(
      await t.tdb.db('baselinequestion').where({ baselinequestionid: first.baselinequestionid }).first(),
    ).toMatchObject({ isdeleted: true, deleted_by: adminId });
    expect((await call('delete', `/baselinequestion/${first.baselinequestionid}`)).body.errormessage).toBe(
      'Invalid BaselineQuestion ID',
    );
    // Removed, the question may be added again.
    expect((await add(baseline.source, questions[0], 1)).status).toBe(200);
  });

  it('clones into an empty assessment with new ids, and refuses a full target or an empty source', async () => {
    const res = await call('post', '/baselinequestion/clone', {
      curriculumbaselineid: baseline.source,
      clonecurriculumbaselineid: baseline.target,
    });
    expect(res.status).toBe(200);
    const source = await live(baseline.source);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data.map((q: { questionid: string }) => q.questionid).sort()).toEqual(
      source.map((q) => q.questionid).sort(),
    );
    for (const q of res.body.data) {
      expect(q).toMatchObject({ curriculumbaselineid: baseline.target, isdeleted: false, created_by: adminId });
      expect(source.map((s) => s.baselinequestionid)).not.toContain(q.baselinequestionid);
    }
    expect(await live(baseline.target)).toHaveLength(2);

    const again = await call('post', '/baselinequestion/clone', {
      curriculumbaselineid: baseline.source,
      clonecurriculumbaselineid: baseline.target,
    });
    expect([again.status, again.body.errormessage]).toEqual([400, 'Curriculum Base Line already have question!']);
    const empty = await call('post', '/baselinequestion/clone', {
      curriculumbaselineid: baseline.other,
      clonecurriculumbaselineid: crypto.randomUUID(),
    });
    expect(empty.body.errormessage).toBe('Invalid curriculum Baseline');
    await t.tdb
      .db('curriculumbaseline')
      .insert({
        curriculumbaselineid: crypto.randomUUID(),
        curriculumid: DEMO.curriculumid,
        baselineid: DEMO.curriculumid,
        baselinename: 'Empty',
        baselinetype: 1,
        schoolid: JSON.stringify([]),
      });
    const { curriculumbaselineid: emptyOne } = await t.tdb
      .db('curriculumbaseline')
      .where({ baselinename: 'Empty' })
      .first();
    const fromEmpty = await call('post', '/baselinequestion/clone', {
      curriculumbaselineid: emptyOne,
      clonecurriculumbaselineid: baseline.other,
    });
    expect(fromEmpty.body.errormessage).toBe('Curriculum Base Line have empty question!');
    expect(await live(baseline.other)).toEqual([]);
  });
});
