import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@lms/db';
import { ROLE_IDS, connectRedis, type RedisClient } from '@lms/shared';
import { openDatabase } from '../src/db';
import { createObjectStore } from '../src/objects';
import { makeApp, silentLogger, testDatabase } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { sample } from './metrics-text';
import { startS3Sandbox, type S3Sandbox } from './s3';
import { eventually, startTcpProxy, throughProxy, type TcpProxy } from './tcp-proxy';

const isPg = !!process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const NOT_READY = (...failed: string[]) => ({ status: 'not ready', failed });
/** A shared dependency is out: the instance stays in rotation, naming it (every instance would be pulled at once). */
const DEGRADED = (...degraded: string[]) => ({ status: 'ready', degraded });
const LOGIN = { lmsusername: 'nobody@example.org', lmsuserpassword: 'Wrong-Passw0rd1' };
/** What every route answers while the database is out of reach: an outage, not a failure of the request. */
const UNAVAILABLE = {
  error: true,
  data: false,
  errormessage: 'Service temporarily unavailable (the database cannot be reached), please try again later',
  logid: expect.any(String),
};
async function expectOutage(res: request.Response): Promise<void> {
  expect([res.status, res.headers['retry-after'], res.body]).toEqual([503, '30', UNAVAILABLE]);
}

describe('central /healthz and /readyz', () => {
  let tdb: TestDatabase;
  let tmp: string;
  const proxies: TcpProxy[] = [];

  beforeAll(async () => {
    tdb = await testDatabase();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-ready-'));
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await tdb.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const folder = (name: string) => ({ OBJECT_DIR: path.join(tmp, name) });
  const ready = async (app: Parameters<typeof request>[0]) => (await request(app).get('/readyz')).status === 200;
  /** Ready with nothing degraded: every dependency answers again. */
  const plainReady = async (app: Parameters<typeof request>[0]) =>
    (await request(app).get('/readyz')).body.degraded === undefined;

  it('answer without a token, outside the rate limit and with nothing but a status', async () => {
    const { app } = await makeApp({ RATE_LIMIT_MAX: '2', ...folder('plain') }, tdb);
    for (let i = 0; i < 5; i++) {
      const h = await request(app).get('/healthz');
      expect(h.status).toBe(200);
      expect(h.body).toEqual({ status: 'ok' });
      expect(h.headers['cache-control']).toBe('no-store');
      const r = await request(app).get('/readyz');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ready' });
    }
    expect((await request(app).head('/readyz')).status).toBe(200);
    // Only reads: any other method is an ordinary request (here the plain 404, which counts against the limit).
    expect((await request(app).post('/readyz')).status).toBe(404);
    // Eleven health checks did not use up the allowance of two.
    expect((await request(app).get('/')).status).toBe(200);
    expect((await request(app).get('/')).status).toBe(429);
  });

  it('database down: /readyz 503 "database" while GET / still answers 200, ' +
      'then 200 again when it returns', async () => {
    if (isPg) {
      // PostgreSQL behind a relay that the test cuts: connections refused, as when the server is stopped.
      const target = new URL(process.env.TEST_DATABASE_URL!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      proxies.push(proxy);
      const db = openDatabase(throughProxy(tdb.url, proxy));
      try {
        const { app } = await makeApp({ READY_TIMEOUT_MS: '1000', ...folder('pg') }, tdb, { db });
        expect((await request(app).get('/readyz')).status).toBe(200);
        await createStaff(tdb.db, { lmsusername: 'outage-pg@example.org', roleids: [ROLE_IDS.superadmin] });
        const bearer = `Bearer ${(await staffLogin(app, 'outage-pg@example.org')).accessToken}`;
        await proxy.down();
        const down = await request(app).get('/readyz');
        expect(down.status).toBe(503);
        expect(down.body).toEqual(NOT_READY('database'));
        expect((await request(app).get('/healthz')).status).toBe(200);
        // What a load balancer without readiness saw: the banner answers while a real route fails.
        expect((await request(app).get('/')).status).toBe(200);
        // Every route names the outage: the sign-in, the token check of a staff route, a log upload.
        await expectOutage(await request(app).post('/auth/login').send(LOGIN));
        await expectOutage(await request(app).get('/school/all').set('Authorization', bearer));
        await expectOutage(
          await request(app)
            .put('/log/import')
            .set('Authorization', bearer)
            .attach('importfile', Buffer.from('PK'), 'studentlog'),
        );
        await proxy.up();
        expect(await eventually(() => ready(app))).toBe(true);
        expect((await request(app).post('/auth/login').send(LOGIN)).status).toBe(400);
        expect((await request(app).get('/school/all').set('Authorization', bearer)).status).toBe(200);
      } finally {
        await db.destroy();
      }
    } else {
      // SQLite has no server to stop: its handle is closed under the app, and then opened again.
      const db = openDatabase(tdb.url);
      const { app } = await makeApp({ READY_TIMEOUT_MS: '1000', ...folder('sqlite') }, tdb, { db });
      expect((await request(app).get('/readyz')).status).toBe(200);
      await createStaff(tdb.db, { lmsusername: 'outage-sqlite@example.org', roleids: [ROLE_IDS.superadmin] });
      const bearer = `Bearer ${(await staffLogin(app, 'outage-sqlite@example.org')).accessToken}`;
      await db.destroy();
      const down = await request(app).get('/readyz');
      expect(down.status).toBe(503);
      expect(down.body).toEqual(NOT_READY('database'));
      expect((await request(app).get('/')).status).toBe(200);
      await expectOutage(await request(app).post('/auth/login').send(LOGIN));
      await expectOutage(await request(app).get('/school/all').set('Authorization', bearer));
      db.initialize();
      expect(await eventually(() => ready(app))).toBe(true);
      expect((await request(app).get('/school/all').set('Authorization', bearer)).status).toBe(200);
      await db.destroy();
    }
  });

  it.runIf(!!redisUrl)(
    'Redis down: /readyz 200 naming "redis" as degraded, sign-in and reads answer 200, then plain ready again',
    async () => {
      const target = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      proxies.push(proxy);
      const redis: RedisClient = await connectRedis(throughProxy(redisUrl!, proxy), silentLogger);
      try {
        const token = 'readiness-metrics-token-0123456789abcdef';
        const { app } = await makeApp({ READY_TIMEOUT_MS: '500', METRICS_TOKEN: token, ...folder('redis') }, tdb, {
          redis,
        });
        expect((await request(app).get('/readyz')).status).toBe(200);
        await createStaff(tdb.db, { lmsusername: 'outage-redis@example.org', roleids: [ROLE_IDS.superadmin] });
        await proxy.down();
        const down = await request(app).get('/readyz');
        expect(down.status).toBe(200);
        expect(down.body).toEqual(DEGRADED('redis'));
        expect((await request(app).get('/healthz')).status).toBe(200);
        // Requests are still served: the rate limiter lets them
        // through rather than wait for Redis, and counts the error.
        expect((await request(app).get('/')).status).toBe(200);
        const bearer = `Bearer ${(await staffLogin(app, 'outage-redis@example.org')).accessToken}`;
        expect((await request(app).get('/school/all').set('Authorization', bearer)).status).toBe(200);
        const text = (await request(app).get('/metrics').set('Authorization', `Bearer ${token}`)).text;
        expect(sample(text, 'lms_redis_errors_total')).toBeGreaterThanOrEqual(1);
        await proxy.up();
        expect(await eventually(() => plainReady(app))).toBe(true);
      } finally {
        await redis.quit().catch(() => redis.destroy());
      }
    },
  );

  describe('object store down', () => {
    let sandbox: S3Sandbox;
    beforeAll(async () => {
      sandbox = await startS3Sandbox('lms-ready-s3-');
    });
    afterAll(async () => {
      await sandbox.close();
    });

    it('S3 unreachable: /readyz 200 naming "objects" as degraded, sign-in 200, ' +
        'upload 503 with Retry-After', async () => {
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(sandbox.origin).port) });
      proxies.push(proxy);
      const objects = createObjectStore({ ...sandbox.s3('ready-bucket'), endpoint: `http://127.0.0.1:${proxy.port}` });
      const { app } = await makeApp({ READY_TIMEOUT_MS: '1000' }, tdb, { objects });
      // The first check creates the bucket, as the first upload would.
      expect(await eventually(() => plainReady(app))).toBe(true);
      await createStaff(tdb.db, { lmsusername: 'outage-s3@example.org', roleids: [ROLE_IDS.superadmin] });
      await proxy.down();
      const down = await request(app).get('/readyz');
      expect(down.status).toBe(200);
      expect(down.body).toEqual(DEGRADED('objects'));
      // What needs no object answers as usual: a sign-in, a read; an upload names the outage.
      const bearer = `Bearer ${(await staffLogin(app, 'outage-s3@example.org')).accessToken}`;
      expect((await request(app).get('/school/all').set('Authorization', bearer)).status).toBe(200);
      const upload = await request(app).post('/document/upload').set('Authorization', bearer)
        .attach('file', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(100)]), 'outage.pdf');
      expect([upload.status, upload.headers['retry-after']]).toEqual([503, '30']);
      await proxy.up();
      expect(await eventually(() => plainReady(app))).toBe(true);
    });

    it('S3 that accepts connections but never answers: degraded once the time limit passes', async () => {
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(sandbox.origin).port) });
      proxies.push(proxy);
      const objects = createObjectStore({ ...sandbox.s3('ready-bucket'), endpoint: `http://127.0.0.1:${proxy.port}` });
      const { app } = await makeApp({ READY_TIMEOUT_MS: '300' }, tdb, { objects });
      expect((await request(app).get('/readyz')).status).toBe(200);
      await proxy.hang();
      const down = await request(app).get('/readyz');
      expect(down.status).toBe(200);
      expect(down.body).toEqual(DEGRADED('objects'));
      await proxy.up();
      expect(await eventually(() => plainReady(app))).toBe(true);
    });
  });

  it('folder store unwritable: /readyz 503 "objects" while uploads would fail, then 200 again', async () => {
    const dir = path.join(tmp, 'folder-store');
    const objects = createObjectStore({ kind: 'folder', dir });
    const { app } = await makeApp({ READY_TIMEOUT_MS: '1000' }, tdb, { objects });
    expect((await request(app).get('/readyz')).status).toBe(200);
    // Every put starts in the store's .tmp folder; a file in its place (a volume gone read-only or
    // replaced) leaves nowhere to write. Permissions would not do: the tests may run as root.
    const work = path.join(dir, '.tmp');
    await fsp.rm(work, { recursive: true, force: true });
    await fsp.writeFile(work, 'not a folder');
    try {
      const down = await request(app).get('/readyz');
      expect(down.status).toBe(503);
      expect(down.body).toEqual(NOT_READY('objects'));
      await expect(objects.put('logs/x.zip', Buffer.from('zip'))).rejects.toThrow();
    } finally {
      await fsp.rm(work, { force: true });
    }
    expect(await eventually(() => ready(app))).toBe(true);
    expect((await objects.put('logs/x.zip', Buffer.from('zip'))).size).toBe(3);
  });
});
