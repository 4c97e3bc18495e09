import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { hashPassword } from '../src/auth/passwords';
import { silentLogger, testDatabase, type TestApp } from './helpers';
import { tokenFor } from './auth-helpers';

const redisUrl = process.env.TEST_REDIS_URL;
const PASSWORD = 'Right-pass-1';
const stores = ['memory', ...(redisUrl ? ['redis'] : [])] as const;

let base: TestApp;
let hash: string;
const clients: RedisClient[] = [];

beforeAll(async () => {
  const tdb = await testDatabase();
  base = { app: undefined as never, config: loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url }), tdb };
  hash = await hashPassword(PASSWORD);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit().catch(() => c.destroy())));
  await base.tdb.dispose();
});

/** `n` learners who sign in with PASSWORD. */
async function learners(n: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < n; i++) names.push((await tokenFor(base, 4, { passwordhash: hash })).schoolusername);
  return names;
}

/**
 * Instances of the classroom server on the test database: with `redis`, each with its own Redis client
 * and one fresh key prefix, so that they share their counters (as the cloud classroom servers do) and
 * earlier runs' counters do not interfere.
 */
async function instances(store: (typeof stores)[number], env: Record<string, string>, n = 1) {
  const prefix = `t${crypto.randomBytes(4).toString('hex')}:`;
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: base.tdb.url, TRUST_PROXY: '1', ...env });
  const apps = [];
  for (let i = 0; i < n; i++) {
    let redis: RedisClient | undefined;
    if (store === 'redis') {
      redis = await connectRedis(redisUrl!, silentLogger, { keyPrefix: prefix });
      clients.push(redis);
    }
    apps.push(createApp(config, { db: base.tdb.db, logger: silentLogger, redis }));
  }
  return apps;
}

const signIn = (app: Parameters<typeof request>[0], username: string, password: string, from = '203.0.113.7') =>
  request(app)
    .post('/auth/login')
    .set('X-Forwarded-For', from)
    .send({ studentusername: username, studentpassword: password });

const accessRows = async (usernames: string[]) =>
  Number(
    (
      await base.tdb
        .db('rpiuseraccess')
        .join('schoolusers', 'schoolusers.schooluserid', 'rpiuseraccess.userid')
        .whereIn('schoolusers.schoolusername', usernames)
        .count({ n: '*' })
        .first()
    )?.n ?? 0,
  );

describe.each(stores)('classroom sign-in lockout (%s counters)', (store) => {
  it('one learner\'s 30 wrong passwords lock that learner only: 131 others behind one address sign in', async () => {
    // Two instances sharing the counters (with Redis): the wrong passwords alternate between them.
    const apps = await instances(store, {}, store === 'redis' ? 2 : 1);
    const [a, b] = [apps[0], apps[apps.length - 1]];
    const [locked, ...others] = await learners(132);
    for (let i = 0; i < 30; i++) expect((await signIn(i % 2 ? b : a, locked, 'wrong')).status).toBe(400);

    const refused = await signIn(a, locked, PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: true,
      errormessage: 'Too many requests, please try again later.',
      data: false,
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    const statuses: number[] = [];
    for (let i = 0; i < others.length; i += 12) {
      const batch = others.slice(i, i + 12).map((name, j) => signIn(j % 2 ? b : a, name, PASSWORD));
      statuses.push(...(await Promise.all(batch)).map((r) => r.status));
    }
    expect(statuses).toEqual(Array(131).fill(200));
    expect(await accessRows(others)).toBe(131);

    // Still locked, from this address and from any other; nothing written for it.
    expect((await signIn(b, locked, PASSWORD)).status).toBe(429);
    expect((await signIn(b, locked, PASSWORD, '198.51.100.20')).status).toBe(429);
    expect(await accessRows([locked])).toBe(0);
  });

  it('an account\'s failures from several addresses lock it; another address\'s learners are untouched', async () => {
    const [app] = await instances(store, { LOGIN_RATE_LIMIT_MAX: '3' });
    const [target, bystander] = await learners(2);
    expect((await signIn(app, target, 'wrong', '198.51.100.1')).status).toBe(400);
    expect((await signIn(app, target, 'wrong', '198.51.100.2')).status).toBe(400);
    expect((await signIn(app, target, ' WRONG', '198.51.100.3')).status).toBe(400);
    // The same account in another case and with spaces around it counts as itself.
    expect((await signIn(app, ` ${target.toUpperCase()} `, PASSWORD, '198.51.100.4')).status).toBe(429);
    expect((await signIn(app, target, PASSWORD, '198.51.100.4')).status).toBe(429);
    expect((await signIn(app, bystander, PASSWORD, '198.51.100.1')).status).toBe(200);
  });

  it('an address past its cap has its wrong guesses refused, never a right password of an account ' +
    'that has not failed from it', async () => {
    const [app] = await instances(store, { LOGIN_RATE_LIMIT_MAX: '3', LOGIN_ADDRESS_RATE_LIMIT_MAX: '5' });
    const [tried, fresh, guessed, elsewhere, ...sprayed] = await learners(8);
    // Five wrong guesses at five accounts, one each: no account is near its own lock, the address is capped.
    for (const name of sprayed.concat(tried)) expect((await signIn(app, name, 'wrong')).status).toBe(400);

    // A wrong guess at an account that has not failed: refused with the limiter's answer, and counted.
    const wrong = await signIn(app, guessed, 'wrong');
    expect([wrong.status, wrong.body.errormessage]).toEqual([429, 'Too many requests, please try again later.']);
    expect(Number(wrong.headers['retry-after'])).toBeGreaterThan(0);
    // Accounts that failed from this address are refused from it, the right password too.
    expect((await signIn(app, tried, PASSWORD)).status).toBe(429);
    expect((await signIn(app, guessed, PASSWORD)).status).toBe(429);
    expect(await accessRows([tried, guessed])).toBe(0);
    // The right password of an account that has not failed signs in.
    expect((await signIn(app, fresh, PASSWORD)).status).toBe(200);
    expect(await accessRows([fresh])).toBe(1);
    // From another address the accounts that failed once are not locked.
    expect((await signIn(app, tried, PASSWORD, '198.51.100.9')).status).toBe(200);
    expect((await signIn(app, elsewhere, 'wrong', '198.51.100.9')).status).toBe(400);
  });
});

it('reads LOGIN_ADDRESS_RATE_LIMIT_MAX, by default 50 times LOGIN_RATE_LIMIT_MAX', () => {
  const cap = (env: Record<string, string>) =>
    loadConfig({ NODE_ENV: 'test', ...env }).rateLimit.loginAddressPer15Minutes;
  expect([cap({}), cap({ LOGIN_ADDRESS_RATE_LIMIT_MAX: '' }), cap({ LOGIN_RATE_LIMIT_MAX: '3' })])
    .toEqual([1500, 1500, 150]);
  expect(cap({ LOGIN_ADDRESS_RATE_LIMIT_MAX: '70' })).toBe(70);
  expect(() => cap({ LOGIN_ADDRESS_RATE_LIMIT_MAX: '0' })).toThrow(/LOGIN_ADDRESS_RATE_LIMIT_MAX/);
});
