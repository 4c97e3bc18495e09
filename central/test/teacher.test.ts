import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords';
import { makeApp, type TestApp } from './helpers';
import { schoolLogin } from './accounts';
import { callers, seedWorld, snapshot, type Who, type World } from './people-fixtures';

let t: TestApp;
let w: World;
let as: Record<Who, string>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  w = await seedWorld(t.tdb.db);
  as = await callers(t, w);
  const hash = await hashPassword('teach1');
  for (const [name, schoolname, extra] of [
    ['zara', 'Accra Primary', {}],
    ['yaw', 'Accra Primary', {}],
    ['moussa', 'Bamako Primary', {}],
    ['old', 'Accra Primary', { isdeleted: true }],
  ] as const) {
    ids[name] = crypto.randomUUID();
    await t.tdb
      .db('schoolusers')
      .insert({
        schooluserid: ids[name],
        schoolusername: name,
        schooluserpasswordhash: hash,
        schooluserrole: 3,
        schoolname,
        ...extra,
      });
  }
  ids.learner = crypto.randomUUID();
  await t.tdb
    .db('schoolusers')
    .insert({
      schooluserid: ids.learner,
      schoolusername: 'alearner',
      schooluserpasswordhash: hash,
      schooluserrole: 4,
      schoolname: 'Accra Primary',
    });
});
afterAll(async () => { await t.tdb.dispose(); });

const send = (method: 'post' | 'delete', url: string, who: Who, body?: object) =>
  request(t.app)[method](url).set('Authorization', as[who]).send(body);
const names = (res: request.Response) =>
  (res.body.data.data as Array<{ schoolusername: string }>).map((r) => r.schoolusername);

describe('POST /teacher', () => {
  it('answers the Teachers page: live teacher accounts by school then name, without hashes', async () => {
    const res = await send('post', '/teacher', 'teacher', { pagesize: 100, pageindex: 1, filter: [] });
    expect(res.status).toBe(200);
    // The two school teachers of the fixtures sign in on central; they are teacher accounts too.
    const all = names(res);
    expect(all.filter((n) => !n.startsWith('t'))).toEqual(['yaw', 'zara', 'moussa']);
    expect(res.body.data).toMatchObject({ total: all.length, pageindex: 1, pagesize: 100 });
    expect(res.body.data.data[0]).toMatchObject({ schoolname: 'Accra Primary', schooluserrole: 3, isdeleted: false });
    expect(JSON.stringify(res.body)).not.toMatch(/schooluserpasswordhash|argon2/);
    expect(
      names(
        await send('post', '/teacher', 'teacher', {
          filter: [
            { key: 'schoolname', value: 'bamako' },
            { key: 'schoolusername', value: 'mou' },
          ],
        }),
      ),
    ).toEqual(['moussa']);
    expect((await send('post', '/teacher', 'teacher', { filter: [{ key: 'city', value: 'x' }] })).status).toBe(400);
    expect((await send('post', '/teacher', 'user', {})).status).toBe(403);
  });
});

describe('DELETE /teacher/:schooluserid', () => {
  it('soft-deletes a teacher; its sign-in ends and its username stays taken', async () => {
    const session = `Bearer ${(await schoolLogin(t.app, 'yaw', 'teach1')).accessToken}`;
    expect((await request(t.app).get('/school/all').set('Authorization', session)).status).toBe(200);
    const res = await send('delete', `/teacher/${ids.yaw}`, 'admin');
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    expect(await t.tdb.db('schoolusers').where({ schooluserid: ids.yaw }).first()).toMatchObject({
      isdeleted: true,
      schoolusername: 'yaw',
    });
    expect((await request(t.app).get('/school/all').set('Authorization', session)).status).toBe(401);
    expect(
      (await request(t.app).post('/auth/school/login').send({ lmsusername: 'yaw', lmsuserpassword: 'teach1' })).status,
    ).toBe(400);
    const reuse = await send('post', '/teacher/create', 'admin', {
      schoolname: 'Accra Primary',
      teachers: [{ schoolusername: 'YAW', schooluserpasswordhash: 'x1' }],
    });
    expect([reuse.status, reuse.body.errormessage]).toEqual([400, 'Teachers already exists, yaw']);
    expect(names(await send('post', '/teacher', 'teacher', {}))).not.toContain('yaw');
  });

  it('refuses a deleted teacher, a learner, an unknown id and non-admins, writing nothing', async () => {
    const before = await snapshot(t.tdb.db, ['schoolusers']);
    const cases: Array<[string, Who, number, string]> = [
      [`/teacher/${ids.old}`, 'admin', 400, 'Teacher already deleted or not found'],
      [`/teacher/${ids.learner}`, 'admin', 400, 'Invalid teacher user id'],
      [`/teacher/${crypto.randomUUID()}`, 'admin', 400, 'Invalid teacher user id'],
      ['/teacher/nope', 'admin', 400, '"schooluserid" must be a valid GUID'],
      [`/teacher/${ids.zara}`, 'teacher', 403, 'Forbidden resource'],
      [`/teacher/${ids.moussa}`, 'scopedSchool', 400, 'Invalid teacher user id'],
    ];
    for (const [url, who, status, message] of cases) {
      const res = await send('delete', url, who);
      expect([url, res.status, res.body.errormessage]).toEqual([url, status, message]);
    }
    expect(await snapshot(t.tdb.db, ['schoolusers'])).toEqual(before);
  });
});

describe('POST /teacher/create', () => {
  it('stays within the caller\'s schools and refuses a school it cannot see', async () => {
    const before = await snapshot(t.tdb.db, ['schoolusers']);
    const other = await send('post', '/teacher/create', 'scopedSchool', {
      schoolname: 'Bamako Primary',
      teachers: [{ schoolusername: 'nope1', schooluserpasswordhash: 'x1' }],
    });
    expect([other.status, other.body.errormessage]).toEqual([400, 'Invalid School Name']);
    const twice = await send('post', '/teacher/create', 'admin', {
      schoolname: 'Accra Primary',
      teachers: [
        { schoolusername: 'dup1', schooluserpasswordhash: 'x1' },
        { schoolusername: 'DUP1', schooluserpasswordhash: 'x1' },
      ],
    });
    expect([twice.status, twice.body.errormessage]).toEqual([400, 'Teachers already exists, dup1']);
    expect(await snapshot(t.tdb.db, ['schoolusers'])).toEqual(before);
    const ok = await send('post', '/teacher/create', 'scopedSchool', {
      schoolname: 'Accra Primary',
      teachers: [{ schoolusername: 'newt1', schooluserpasswordhash: 'x1' }],
    });
    expect(ok.body).toEqual({ error: false, data: true });
  });
});
