import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@lms/db';
import { connectRedis, type RedisClient } from '@lms/shared';
import { PASSWORD, createSchoolUser, createStaff } from './accounts';
import { loadConfig } from '../src/config';
import { makeApp, silentLogger, testDatabase } from './helpers';

const redisUrl = process.env.TEST_REDIS_URL;
const stores = ['memory', ...(redisUrl ? ['redis'] : [])] as const;
const TOO_MANY = { error: true, errormessage: 'Too many requests, please try again later.', data: false };

let tdb: TestDatabase;
const clients: RedisClient[] = [];
beforeAll(async () => {
  tdb = await testDatabase();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit().catch(() => c.destroy())));
  await tdb.dispose();
});

async function appOn(store: (typeof stores)[number], env: Record<string, string>) {
  let redis: RedisClient | undefined;
  if (store === 'redis') {
    redis = await connectRedis(redisUrl!, silentLogger, { keyPrefix: `t${crypto.randomBytes(4).toString('hex')}:` });
    clients.push(redis);
  }
  return (await makeApp({ TRUST_PROXY: '1', ...env }, tdb, { redis })).app;
}

let n = 0;
async function staff(count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    n += 1;
    const name = `lockout${n}.${crypto.randomBytes(2).toString('hex')}@example.org`;
    await createStaff(tdb.db, { lmsusername: name });
    names.push(name);
  }
  return names;
}

const signIn = (app: Parameters<typeof request>[0], name: string, password: string, from = '203.0.113.7') =>
  request(app).post('/auth/login').set('X-Forwarded-For', from).send({ lmsusername: name, lmsuserpassword: password });

describe.each(stores)('central sign-in lockout (%s counters)', (store) => {
  it('one account\'s failures lock that account only: the others behind the same address sign in', async () => {
    const app = await appOn(store, { LOGIN_RATE_LIMIT_MAX: '3' });
    const [locked, ...others] = await staff(6);
    for (let i = 0; i < 3; i++) expect((await signIn(app, locked, 'Wrong-pass-1')).status).toBe(400);
    const refused = await signIn(app, locked, PASSWORD);
    expect([refused.status, refused.body]).toEqual([429, TOO_MANY]);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    for (const name of others) expect((await signIn(app, name, PASSWORD)).status).toBe(200);
    expect((await signIn(app, locked, PASSWORD, '198.51.100.20')).status).toBe(429);
  });

  it('a capped address has its wrong guesses refused, never a right password of an account that has not ' +
    'failed from it; the school sign-in shares the counts', async () => {
    const app = await appOn(store, { LOGIN_RATE_LIMIT_MAX: '3', LOGIN_ADDRESS_RATE_LIMIT_MAX: '4' });
    const [fresh, tried, ...sprayed] = await staff(5);
    const teacher = `lockout.teacher.${crypto.randomBytes(2).toString('hex')}`;
    await createSchoolUser(tdb.db, { schoolusername: teacher, role: 3 });
    for (const name of [...sprayed, tried]) expect((await signIn(app, name, 'Wrong-pass-1')).status).toBe(400);
    const wrong = await request(app)
      .post('/auth/school/login')
      .set('X-Forwarded-For', '203.0.113.7')
      .send({ lmsusername: teacher, lmsuserpassword: 'wrong' });
    expect([wrong.status, wrong.body]).toEqual([429, TOO_MANY]);
    expect((await signIn(app, tried, PASSWORD)).status).toBe(429);
    expect((await signIn(app, fresh, PASSWORD)).status).toBe(200);
    expect((await signIn(app, tried, PASSWORD, '198.51.100.21')).status).toBe(200);
  });
});

it('reads LOGIN_ADDRESS_RATE_LIMIT_MAX, by default 50 times LOGIN_RATE_LIMIT_MAX', () => {
  const cap = (env: Record<string, string>) =>
    loadConfig({ NODE_ENV: 'test', ...env }).rateLimit.loginAddressPer15Minutes;
  expect([cap({}), cap({ LOGIN_ADDRESS_RATE_LIMIT_MAX: '' }), cap({ LOGIN_RATE_LIMIT_MAX: '3' })])
    .toEqual([1000, 1000, 150]);
  expect(cap({ LOGIN_ADDRESS_RATE_LIMIT_MAX: '70' })).toBe(70);
  expect(() => cap({ LOGIN_ADDRESS_RATE_LIMIT_MAX: '0' })).toThrow(/LOGIN_ADDRESS_RATE_LIMIT_MAX/);
});
