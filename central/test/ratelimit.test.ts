import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, createLogger, type RedisClient } from '@lms/shared';
import { REVOCATION_CHANNEL, shareRevocations } from '../src/auth/tokens';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { makeApp, silentLogger, testDatabase } from './helpers';
import { createStaff } from './accounts';
import type { TestDatabase } from '@lms/db';

let tdb: TestDatabase;
beforeAll(async () => { tdb = await testDatabase(); });
afterAll(async () => { await tdb.dispose(); });

describe('rate limiting', () => {
  it('answers 429 with the envelope and Retry-After once the limit is reached', async () => {
    const { app } = await makeApp({ RATE_LIMIT_MAX: '3' }, tdb);
    for (let i = 0; i < 3; i++) expect((await request(app).get('/')).status).toBe(200);
    const res = await request(app).get('/');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: true, errormessage: expect.stringMatching(/too many requests/i), data: false });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('cannot be dodged with a forged X-Forwarded-For unless TRUST_PROXY=1', async () => {
    const { app } = await makeApp({ RATE_LIMIT_MAX: '2' }, tdb);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await request(app).get('/').set('X-Forwarded-For', `203.0.113.${i}`)).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
  });

  it('takes the client address from X-Forwarded-For behind a trusted proxy', async () => {
    const { app } = await makeApp({ RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' }, tdb);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await request(app).get('/').set('X-Forwarded-For', `203.0.113.${i}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const same = [];
    for (let i = 0; i < 3; i++) same.push((await request(app).get('/').set('X-Forwarded-For', '198.51.100.7')).status);
    expect(same).toEqual([200, 200, 429]);
  });

  it('TRUST_PROXY=2: the client is the address two hops from the right, and the access log records it', async () => {
    const lines: Array<{ req?: { client?: string; remoteAddress?: string } }> = [];
    const logger = createLogger(
      { name: 'test', level: 'info' },
      { write: (l: string) => void lines.push(JSON.parse(l)) },
    );
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url, RATE_LIMIT_MAX: '2', TRUST_PROXY: '2' });
    expect(config.trustProxy).toBe(2);
    const app = createApp(config, { db: tdb.db, logger });
    // A forged first entry, the client as the outer proxy saw it, then the inner proxy's address.
    const via = (client: string, forged: string) =>
      request(app).get('/').set('X-Forwarded-For', `${forged}, ${client}, 10.0.0.2`);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await via('198.51.100.9', `203.0.113.${i}`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await via('198.51.100.10', '203.0.113.1')).status).toBe(200);
    const logged = lines.filter((l) => l.req).map((l) => l.req!);
    expect(logged.map((r) => r.client)).toEqual(['198.51.100.9', '198.51.100.9', '198.51.100.9', '198.51.100.10']);
    expect(logged[0].remoteAddress).toMatch(/127\.0\.0\.1/);
  });

  it('reads TRUST_PROXY as a hop count; true is one hop, never every hop', () => {
    const hops = (v: string | undefined) => loadConfig({ NODE_ENV: 'test', TRUST_PROXY: v }).trustProxy;
    expect([hops(undefined), hops(''), hops('0'), hops('false'), hops('1'), hops('true'), hops('3')]).toEqual([
      0, 0, 0, 0, 1, 1, 3,
    ]);
    expect(() => hops('all')).toThrow(/TRUST_PROXY/);
  });

  it('counts failed sign-in attempts with a stricter limit', async () => {
    const { app } = await makeApp({ LOGIN_RATE_LIMIT_MAX: '2' }, tdb);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push(
        (await request(app).post('/auth/login').send({ lmsusername: 'x@y.org', lmsuserpassword: 'Wrong1234' })).status,
      );
    expect(statuses[2]).toBe(429);
    expect(statuses.slice(0, 2)).not.toContain(429);
  });

  it('counts failed sign-ins only: right passwords at once from one address get no 429', async () => {
    const { app } = await makeApp({ LOGIN_RATE_LIMIT_MAX: '2' }, tdb);
    await createStaff(tdb.db, { lmsusername: 'many@y.org', password: 'Right1234x' });
    const ok = await Promise.all(
      Array.from({ length: 6 }, () =>
        request(app).post('/auth/login').send({ lmsusername: 'many@y.org', lmsuserpassword: 'Right1234x' }),
      ),
    );
    expect(ok.map((r) => r.status)).toEqual(Array(6).fill(200));
    const wrong = { lmsusername: 'x@y.org', lmsuserpassword: 'Wrong1234' };
    const first = await Promise.all(Array.from({ length: 2 }, () => request(app).post('/auth/login').send(wrong)));
    expect(first.map((r) => r.status)).not.toContain(429);
    expect((await request(app).post('/auth/login').send(wrong)).status).toBe(429);
  });

  it('counts the sign-in path in any case and with a trailing slash, and nothing else against it', async () => {
    const { app } = await makeApp({ LOGIN_RATE_LIMIT_MAX: '2' }, tdb);
    const body = { lmsusername: 'x@y.org', lmsuserpassword: 'Wrong1234' };
    // Failed requests elsewhere do not use up the sign-in allowance.
    for (let i = 0; i < 3; i++) expect((await request(app).post('/user/create').send({})).status).toBe(401);
    expect((await request(app).post('/AUTH/Login/').send(body)).status).toBe(400);
    expect((await request(app).post('/auth/LOGIN').send(body)).status).toBe(400);
    expect((await request(app).post('/auth/login').send(body)).status).toBe(429);
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  it.runIf(!!redisUrl)('shares counters between instances through Redis', async () => {
    const clients: RedisClient[] = [
      await connectRedis(redisUrl!, silentLogger),
      await connectRedis(redisUrl!, silentLogger),
    ];
    try {
      const limit = '6';
      const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url, RATE_LIMIT_MAX: limit });
      // A fresh address per run so that earlier runs' counters do not interfere.
      const ip = `10.${Date.now() % 250}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      const a = createApp({ ...config, trustProxy: 1 }, { db: tdb.db, logger: silentLogger, redis: clients[0] });
      const b = createApp({ ...config, trustProxy: 1 }, { db: tdb.db, logger: silentLogger, redis: clients[1] });
      const n = Number(limit);
      const half = Math.floor(n / 2);
      for (let i = 0; i < half; i++) await request(a).get('/').set('X-Forwarded-For', ip);
      for (let i = half; i < n; i++) await request(b).get('/').set('X-Forwarded-For', ip);
      expect((await request(a).get('/').set('X-Forwarded-For', ip)).status).toBe(429);
      expect((await request(b).get('/').set('X-Forwarded-For', ip)).status).toBe(429);
    } finally {
      await Promise.all(clients.map((c) => c.quit()));
    }
  });

  it.runIf(!!redisUrl)(
    'REDIS_KEY_PREFIX keeps two deployments on one Redis apart, keys and revocation channel alike',
    async () => {
      const tag = `t${Date.now()}${Math.floor(Math.random() * 1e6)}`;
      const [one, two, probe] = [
        await connectRedis(redisUrl!, silentLogger, { keyPrefix: `${tag}a:` }),
        await connectRedis(redisUrl!, silentLogger, { keyPrefix: `${tag}b:` }),
        await connectRedis(redisUrl!, silentLogger),
      ];
      try {
        const config = loadConfig({
          NODE_ENV: 'test',
          DATABASE_URL: tdb.url,
          RATE_LIMIT_MAX: '2',
          REDIS_KEY_PREFIX: 'ignored-here',
        });
        expect(config.redisKeyPrefix).toBe('ignored-here');
        const a = createApp(config, { db: tdb.db, logger: silentLogger, redis: one });
        const b = createApp(config, { db: tdb.db, logger: silentLogger, redis: two });
        for (let i = 0; i < 2; i++) expect((await request(a).get('/')).status).toBe(200);
        expect((await request(a).get('/')).status).toBe(429);
        // The other deployment's counter is its own.
        expect((await request(b).get('/')).status).toBe(200);
        const keys = await probe.keys(`${tag}*`);
        expect(keys.some((k) => k.startsWith(`${tag}a:rl:central:`))).toBe(true);
        expect(keys.some((k) => k.startsWith(`${tag}b:rl:central:`))).toBe(true);
        // Revocations travel on the prefixed channel.
        const stop = await shareRevocations(one, silentLogger);
        try {
          const channels = (await probe.sendCommand(['PUBSUB', 'CHANNELS', `${tag}*`])) as string[];
          expect(channels).toEqual([`${tag}a:${REVOCATION_CHANNEL}`]);
        } finally {
          await stop();
        }
        await probe.del(keys);
      } finally {
        await Promise.all([one, two, probe].map((c) => c.quit()));
      }
    },
  );
});
