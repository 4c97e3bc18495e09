import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';

// A tablet's or a Pi's clock can be years off: the sign-in and the logout store the client's time only
// while it is within a day of the server's clock, the server's time otherwise, and never refuse for it.

let t: TestApp;
const db = () => t.tdb.db;
const HOUR = 60 * 60 * 1000;
const YEAR_10000 = Date.UTC(10000, 0, 1);

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemo(db());
});
afterAll(async () => { await t.tdb.dispose(); });

const learner = C.students[0];
const rawLogin = (json: string) =>
  request(t.app).post('/auth/login').set('Content-Type', 'application/json').send(json);
const loginJson = (logintime: string) =>
  `{"studentusername":"${learner.schoolusername}","studentpassword":"demo","logintime":${logintime}}`;
const openRow = () => db()('rpiuseraccess').where({ userid: learner.schooluserid, status: 1 }).first();
const ms = (v: unknown) => new Date(v as string).getTime();

/** Sends the request and checks the stored time is the server's clock during it. */
async function storesServerTime(send: () => Promise<request.Response>, read: () => Promise<unknown>) {
  const before = Date.now();
  const res = await send();
  const after = Date.now();
  expect(res.status).toBe(200);
  expect(res.body.error).toBe(false);
  const stored = ms(await read());
  expect(stored).toBeGreaterThanOrEqual(before);
  expect(stored).toBeLessThanOrEqual(after);
}

describe('POST /auth/login: logintime', () => {
  const absurd: Array<[string, string]> = [
    ['1e30', '1e30'],
    ['a year-10000 time', String(YEAR_10000)],
    ['a time beyond what a date holds', '8.64e15'],
    ['a negative time', '-1'],
    ['zero', '0'],
    ['a number too large for a double', '1e400'],
    ['"Infinity" as text', '"Infinity"'],
    ['three days ahead', String(Date.now() + 72 * HOUR)],
    ['two years behind', String(Date.now() - 2 * 365 * 24 * HOUR)],
  ];
  for (const [what, value] of absurd) {
    it(`${what}: signs in and stores the server's time`, async () => {
      await storesServerTime(() => rawLogin(loginJson(value)), async () => (await openRow()).logintime);
    });
  }

  it('a time within a day of the server\'s clock is stored as sent, as a number or as numeric text', async () => {
    for (const at of [Date.now() - 23 * HOUR, Date.now() + 23 * HOUR]) {
      expect((await rawLogin(loginJson(String(at)))).status).toBe(200);
      expect(ms((await openRow()).logintime)).toBe(at);
      expect((await rawLogin(loginJson(`"${at}"`))).status).toBe(200);
      expect(ms((await openRow()).logintime)).toBe(at);
    }
  });

  it('text that is no number, or another type, is refused and nothing is written', async () => {
    const before = Number((await db()('rpiuseraccess').count({ n: '*' }).first())?.n);
    for (const value of ['"soon"', '{"a":1}', '[1]', 'true', `"${'1'.repeat(65)}"`]) {
      const res = await rawLogin(loginJson(value));
      expect([value, res.status, res.body.error]).toEqual([value, 400, true]);
    }
    expect(Number((await db()('rpiuseraccess').count({ n: '*' }).first())?.n)).toBe(before);
  });
});

describe('POST /auth/logout: logouttime', () => {
  async function signIn(): Promise<string> {
    const res = await rawLogin(loginJson(String(Date.now())));
    expect(res.status).toBe(200);
    return `Bearer ${res.body.data.accessToken}`;
  }
  const logout = (auth: string, json: string) =>
    request(t.app).post('/auth/logout').set('Authorization', auth).set('Content-Type', 'application/json').send(json);
  const closedRow = async () =>
    (await db()('rpiuseraccess').where({ userid: learner.schooluserid, status: 2 }).orderBy('logintime', 'desc'))[0];

  for (const value of ['1e30', String(YEAR_10000), '-5', '1e400', '"-Infinity"']) {
    it(`${value}: logs out and stores the server's time`, async () => {
      const auth = await signIn();
      const row = await openRow();
      await storesServerTime(
        () => logout(auth, `{"logouttime":${value},"timespent":5}`),
        async () => (await db()('rpiuseraccess').where({ rpiuseraccessid: row.rpiuseraccessid }).first()).logouttime,
      );
    });
  }

  it('a plausible logouttime is stored as sent', async () => {
    const auth = await signIn();
    const at = Date.now() + HOUR;
    const res = await logout(auth, `{"logouttime":${at},"timespent":5}`);
    expect(res.body).toEqual({ error: false, data: true });
    const row = await closedRow();
    expect(ms(row.logouttime)).toBe(at);
    expect(Number(row.timespent)).toBe(5);
  });
});
