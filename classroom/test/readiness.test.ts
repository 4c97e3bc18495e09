import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@lms/db';
import { connectRedis, type RedisClient } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db';
import { eventually, startTcpProxy, throughProxy, type TcpProxy } from '../../central/test/tcp-proxy';
import { silentLogger, testDatabase } from './helpers';
import { tokenFor } from './auth-helpers';

const isPg = !!process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const NOT_READY = (...failed: string[]) => ({ status: 'not ready', failed });
/** What every route answers while the database is out of reach: an outage, not a failure of the request. */
const UNAVAILABLE = {
  error: true,
  data: false,
  errormessage: 'Service temporarily unavailable (the database cannot be reached), please try again later',
  logid: expect.any(String),
};

describe('classroom /healthz and /readyz', () => {
  let tdb: TestDatabase;
  const proxies: TcpProxy[] = [];
  beforeAll(async () => {
    tdb = await testDatabase();
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await tdb.dispose();
  });

  const appOn = (
    deps: { db?: ReturnType<typeof openDatabase>; redis?: RedisClient } = {},
    env: Record<string, string> = {},
  ) =>
    createApp(loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url, READY_TIMEOUT_MS: '500', ...env }), {
      db: deps.db ?? tdb.db,
      logger: silentLogger,
      redis: deps.redis,
    });
  const ready = async (app: ReturnType<typeof appOn>) => (await request(app).get('/readyz')).status === 200;
  /** Ready with nothing degraded: every dependency answers again. */
  const plainReady = async (app: ReturnType<typeof appOn>) =>
    (await request(app).get('/readyz')).body.degraded === undefined;

  it('answer without a token and outside the rate limit', async () => {
    const app = appOn({}, { RATE_LIMIT_MAX: '1' });
    for (let i = 0; i < 4; i++) {
      expect((await request(app).get('/healthz')).body).toEqual({ status: 'ok' });
      const r = await request(app).get('/readyz');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ready' });
    }
    expect((await request(app).get('/')).status).toBe(200);
    expect((await request(app).get('/')).status).toBe(429);
  });

  it('database down: /readyz 503 "database", then 200 again when it returns', async () => {
    if (isPg) {
      const target = new URL(process.env.TEST_DATABASE_URL!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      proxies.push(proxy);
      const db = openDatabase(throughProxy(tdb.url, proxy));
      try {
        const app = appOn({ db });
        expect(await ready(app)).toBe(true);
        await proxy.down();
        const down = await request(app).get('/readyz');
        expect(down.status).toBe(503);
        expect(down.body).toEqual(NOT_READY('database'));
        expect((await request(app).get('/healthz')).status).toBe(200);
        await proxy.up();
        expect(await eventually(() => ready(app))).toBe(true);
      } finally {
        await db.destroy();
      }
    } else {
      // SQLite has no server to stop: its handle is closed under the app, and then opened again.
      const db = openDatabase(tdb.url);
      const app = appOn({ db });
      expect(await ready(app)).toBe(true);
      await db.destroy();
      const down = await request(app).get('/readyz');
      expect(down.status).toBe(503);
      expect(down.body).toEqual(NOT_READY('database'));
      db.initialize();
      expect(await eventually(() => ready(app))).toBe(true);
      await db.destroy();
    }
  });

  it('database down: every route answers 503 with Retry-After and the envelope, and works again after', async () => {
    // The database the app uses: through a relay that the test cuts (PostgreSQL), or a handle it closes (SQLite).
    let proxy: TcpProxy | undefined;
    if (isPg) {
      const target = new URL(process.env.TEST_DATABASE_URL!);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      proxies.push(proxy);
    }
    const db = openDatabase(proxy ? throughProxy(tdb.url, proxy) : tdb.url);
    try {
      const app = appOn({ db });
      const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url });
      const learner = await tokenFor({ app, config, tdb }, 4);
      const quiz = () =>
        request(app)
          .post(`/result/lesson/quiz/${crypto.randomUUID()}`)
          .set('Authorization', learner.auth)
          .send({ studentid: learner.studentid });
      const signIn = () =>
        request(app).post('/auth/login').send({ studentusername: learner.schoolusername, studentpassword: 'x' });
      const before = await quiz();
      expect(before.status).not.toBe(503);
      const accessRows = async () => Number((await tdb.db('rpiuseraccess').count({ n: '*' }).first())?.n ?? 0);
      const rowsBefore = await accessRows();

      if (proxy) await proxy.down();
      else await db.destroy();
      for (const res of [await quiz(), await signIn(), await request(app).get('/curriculum')
        .set('Authorization', learner.auth)]) {
        expect([res.status, res.headers['retry-after'], res.body]).toEqual([503, '30', UNAVAILABLE]);
      }
      const down = await request(app).get('/readyz');
      expect([down.status, down.body]).toEqual([503, NOT_READY('database')]);
      expect(await accessRows()).toBe(rowsBefore);

      if (proxy) await proxy.up();
      else db.initialize();
      expect(await eventually(() => ready(app))).toBe(true);
      expect((await quiz()).status).toBe(before.status);
    } finally {
      await db.destroy();
    }
  });

  it.runIf(!!redisUrl)(
    'Redis down: /readyz 200 naming "redis" as degraded while requests are still served',
    async () => {
      const target = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      proxies.push(proxy);
      const redis = await connectRedis(throughProxy(redisUrl!, proxy), silentLogger);
      try {
        const app = appOn({ redis });
        expect(await ready(app)).toBe(true);
        await proxy.down();
        const down = await request(app).get('/readyz');
        // Redis is every instance's: its outage must not take them all out of rotation.
        expect(down.status).toBe(200);
        expect(down.body).toEqual({ status: 'ready', degraded: ['redis'] });
        expect((await request(app).get('/')).status).toBe(200);
        await proxy.up();
        expect(await eventually(() => plainReady(app))).toBe(true);
      } finally {
        await redis.quit().catch(() => redis.destroy());
      }
    },
  );
});
