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

const get = (url: string, who: Who) => request(t.app).get(url).set('Authorization', as[who]);
const send = (method: 'post' | 'put' | 'delete', url: string, who: Who, body?: object) =>
  request(t.app)[method](url).set('Authorization', as[who]).send(body);
const TABLES = ['standards', 'students'];

describe('class reads', () => {
  it('POST /standard: the Classes page body, paged by name with the school name; ' +
      'filters by name and school', async () => {
    const page = await send('post', '/standard', 'teacher', {
      filter: [
        { key: 'standardname', value: '' },
        { key: 'schoolid', value: [] },
      ],
      pageindex: 1,
      pagesize: 10,
    });
    expect(page.status).toBe(200);
    expect(page.body.data.total).toBe(3);
    expect(
      page.body.data.data.map((s: { standardname: string; school: { schoolname: string } }) => [
        s.standardname,
        s.school.schoolname,
      ]),
    ).toEqual([
      ['Class 1', expect.any(String)],
      ['Class 1', expect.any(String)],
      ['Class 2', 'Accra Primary'],
    ]);
    const bySchool = await send('post', '/standard', 'teacher', {
      filter: [{ key: 'schoolid', value: [w.schoolB.schoolid] }],
    });
    expect(bySchool.body.data.data).toEqual([
      expect.objectContaining({
        standardid: w.classB1,
        schoolid: w.schoolB.schoolid,
        school: { schoolname: 'Bamako Primary' },
      }),
    ]);
    const byName = await send('post', '/standard', 'teacher', { filter: [{ key: 'standardname', value: 'class 2' }] });
    expect(byName.body.data.data.map((s: { standardid: string }) => s.standardid)).toEqual([w.classA2]);
    expect((await send('post', '/standard', 'teacher', { filter: [{ key: 'other', value: 'x' }] })).status).toBe(400);
    expect((await send('post', '/standard', 'user', {})).status).toBe(403);
  });

  it('GET /standard/:standardid and /standard/school/:schoolid; unknown ids refused', async () => {
    const one = await get(`/standard/${w.classA1}`, 'teacher');
    expect(one.body.data).toMatchObject({
      standardid: w.classA1,
      standardname: 'Class 1',
      schoolid: w.schoolA.schoolid,
      schoolname: 'Accra Primary',
      isdeleted: false,
    });
    const ofSchool = await get(`/standard/school/${w.schoolA.schoolid}`, 'teacher');
    expect(ofSchool.body.data.map((s: { standardid: string; school: object }) => [s.standardid, s.school])).toEqual([
      [w.classA1, { schoolname: 'Accra Primary' }], [w.classA2, { schoolname: 'Accra Primary' }],
    ]);
    const unknown = await get(`/standard/${crypto.randomUUID()}`, 'teacher');
    expect([unknown.status, unknown.body.errormessage]).toEqual([400, 'Invalid standard id']);
    const noSchool = await get(`/standard/school/${crypto.randomUUID()}`, 'teacher');
    expect([noSchool.status, noSchool.body.errormessage]).toEqual([400, 'Invalid school id']);
    expect((await get('/standard/nope', 'teacher')).body.errormessage).toBe('"standardid" must be a valid GUID');
  });

  it('GET /standard/all (the filter feed) still lists by name', async () => {
    const all = await get(`/standard/all?schoolname=${encodeURIComponent('Accra Primary')}`, 'teacher');
    expect(all.body.data).toEqual([
      { standardid: w.classA1, standardname: 'Class 1', school: { schoolname: 'Accra Primary' } },
      { standardid: w.classA2, standardname: 'Class 2', school: { schoolname: 'Accra Primary' } },
    ]);
    expect(
      (await get('/standard/all?standardname=CLASS%202', 'teacher')).body.data.map(
        (s: { standardid: string }) => s.standardid,
      ),
    ).toEqual([w.classA2]);
  });
});

describe('class writes', () => {
  it('creates, renames, moves and soft-deletes a class, with the caller in the audit columns', async () => {
    const created = await send('post', '/standard/create', 'admin', {
      standardname: 'Class 3',
      schoolid: w.schoolA.schoolid,
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({
      standardname: 'Class 3',
      schoolid: w.schoolA.schoolid,
      schoolname: 'Accra Primary',
      isdeleted: false,
      created_by: adminId,
    });
    const id = created.body.data.standardid as string;
    // The same name in another school is another class.
    expect(
      (await send('post', '/standard/create', 'admin', { standardname: 'Class 3', schoolid: w.schoolB.schoolid }))
        .status,
    ).toBe(200);

    const renamed = await send('put', `/standard/${id}`, 'admin', {
      standardname: 'Class 3B',
      schoolid: w.schoolA.schoolid,
    });
    expect(renamed.body.data).toMatchObject({ standardid: id, standardname: 'Class 3B', updated_by: adminId });
    const moved = await send('put', `/standard/${id}`, 'admin', {
      standardname: 'Class 4',
      schoolid: w.schoolB.schoolid,
    });
    expect(moved.body.data).toMatchObject({
      standardid: id,
      schoolid: w.schoolB.schoolid,
      schoolname: 'Bamako Primary',
    });

    const deleted = await send('delete', `/standard/${id}`, 'admin');
    expect([deleted.status, deleted.body]).toEqual([200, { error: false, data: true }]);
    expect(await t.tdb.db('standards').where({ standardid: id }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: adminId,
    });
    const again = await send('delete', `/standard/${id}`, 'admin');
    expect([again.status, again.body.errormessage]).toEqual([400, 'Invalid standard id']);
    // A deleted class frees its name.
    expect(
      (await send('post', '/standard/create', 'admin', { standardname: 'Class 4', schoolid: w.schoolB.schoolid }))
        .status,
    ).toBe(200);
  });

  it('refuses bad bodies, taken names, unknown schools, ' +
      'classes with learners and non-admins, writing nothing', async () => {
    await addLearner(t.tdb.db, {
      schoolname: 'Accra Primary',
      standard: w.classA2,
      schoolusername: 'inclass2',
      curriculumids: [w.curriculum1],
    });
    const gone = crypto.randomUUID();
    await t.tdb
      .db('schools')
      .insert({
        schoolid: gone,
        schoolname: 'Gone Primary',
        countryid: w.countryX,
        curriculums: '[]',
        isdeleted: true,
      });
    const before = await snapshot(t.tdb.db, TABLES);
    const cases: Array<['post' | 'put' | 'delete', string, Who, object | undefined, number, string]> = [
      ['post', '/standard/create', 'admin', {}, 400, '"standardname" is required, "schoolid" is required'],
      [
        'post',
        '/standard/create',
        'admin',
        { standardname: '  ', schoolid: w.schoolA.schoolid },
        400,
        '"standardname" not allowed',
      ],
      [
        'post',
        '/standard/create',
        'admin',
        { standardname: 'x'.repeat(46), schoolid: w.schoolA.schoolid },
        400,
        '"standardname" length must be less than or equal to 45 characters long',
      ],
      [
        'post',
        '/standard/create',
        'admin',
        { standardname: 'Class 9', schoolid: 'nope' },
        400,
        '"schoolid" must be a valid GUID',
      ],
      [
        'post',
        '/standard/create',
        'admin',
        { standardname: 'Class 9', schoolid: w.schoolA.schoolid, x: 1 },
        400,
        '"x" is not allowed',
      ],
      [
        'post',
        '/standard/create',
        'admin',
        { standardname: 'class 1', schoolid: w.schoolA.schoolid },
        400,
        'standard already exists',
      ],
      [
        'post',
        '/standard/create',
        'admin',
        { standardname: 'Class 9', schoolid: crypto.randomUUID() },
        400,
        'no school found',
      ],
      ['post', '/standard/create', 'admin', { standardname: 'Class 9', schoolid: gone }, 400, 'no school found'],
      [
        'put',
        `/standard/${w.classA1}`,
        'admin',
        { standardname: 'Class 2', schoolid: w.schoolA.schoolid },
        400,
        'standard already exists',
      ],
      [
        'put',
        `/standard/${crypto.randomUUID()}`,
        'admin',
        { standardname: 'Class 9', schoolid: w.schoolA.schoolid },
        400,
        'Invalid standard id',
      ],
      [
        'put',
        `/standard/${w.classA1}`,
        'admin',
        { standardname: 'Class 9', schoolid: crypto.randomUUID() },
        400,
        'no school found',
      ],
      [
        'put',
        `/standard/${w.classA2}`,
        'admin',
        { standardname: 'Class 2', schoolid: w.schoolB.schoolid },
        400,
        'Standard has students assigned. Standard cannot be moved',
      ],
      [
        'delete',
        `/standard/${w.classA2}`,
        'admin',
        undefined,
        400,
        'Standard has students assigned. Standard cannot be deleted',
      ],
      ['delete', `/standard/${crypto.randomUUID()}`, 'admin', undefined, 400, 'Invalid standard id'],
      [
        'post',
        '/standard/create',
        'teacher',
        { standardname: 'Class 9', schoolid: w.schoolA.schoolid },
        403,
        'Forbidden resource',
      ],
      [
        'put',
        `/standard/${w.classA1}`,
        'teacher',
        { standardname: 'Class 9', schoolid: w.schoolA.schoolid },
        403,
        'Forbidden resource',
      ],
      ['delete', `/standard/${w.classA1}`, 'teacher', undefined, 403, 'Forbidden resource'],
    ];
    for (const [method, url, who, body, status, message] of cases) {
      const res = await send(method, url, who, body);
      expect([method, url, res.status, res.body.errormessage]).toEqual([method, url, status, message]);
    }
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('two requests creating the same class at once: one class, one refusal', async () => {
    const body = { standardname: 'Class Race', schoolid: w.schoolA.schoolid };
    const [a, b] = await Promise.all([
      send('post', '/standard/create', 'admin', body),
      send('post', '/standard/create', 'admin', body),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    expect([a, b].find((r) => r.status === 400)!.body.errormessage).toBe('standard already exists');
    expect(await t.tdb.db('standards').where({ standardname: 'Class Race' }).count({ n: '*' }).first()).toEqual({
      n: 1,
    });
  });
});
