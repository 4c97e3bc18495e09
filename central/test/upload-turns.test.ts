import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS, connectRedis, type RedisClient } from '@lms/shared';
import { createApp } from '../src/app';
import { makeApp, silentLogger, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { count, listen, media, streamUpload } from './media-helpers';

describe('media uploads in progress are capped per caller (MAX_UPLOADS_PER_CALLER)', () => {
  let t: TestApp;
  let dir: string;
  let server: http.Server;
  let origin: string;
  const auth = { a: '', b: '' };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-upload-turns-'));
    t = await makeApp({
      OBJECT_DIR: dir,
      MAX_UPLOADS_PER_CALLER: '2',
      UPLOAD_IDLE_SECONDS: '2',
      RATE_LIMIT_MAX: '100000',
    });
    ({ server, origin } = await listen(t.app));
    for (const k of ['a', 'b'] as const) {
      await createStaff(t.tdb.db, { lmsusername: `${k}@uploads.test`, roleids: [ROLE_IDS.superadmin] });
      auth[k] = `Bearer ${(await staffLogin(t.app, `${k}@uploads.test`)).accessToken}`;
    }
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.tdb.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const upload = (who: keyof typeof auth, name: string) =>
    request(t.app)
      .post('/document/upload')
      .set('Authorization', auth[who])
      .attach('inputfile', media.png(), { filepath: name } as never);
  const presignedPath = async (who: keyof typeof auth, name: string) => {
    const res = await request(t.app).get(`/document/presign/${name}`).set('Authorization', auth[who]);
    expect(res.status).toBe(200);
    const url = new URL(res.body.data as string);
    return `${url.pathname}${url.search}`;
  };

  it('a caller with two uploads still arriving gets 429 for a third (direct or presigned); ' +
      'another caller uploads meanwhile', async () => {
    // Caller a starts two uploads and stops sending after the first bytes of each.
    const stalled = [1, 2].map((i) =>
      streamUpload(origin, {
        auth: auth.a,
        filename: `slow${i}.png`,
        head: media.png(16),
        size: 100_000,
        stallAt: 1000,
      }),
    );
    await new Promise((r) => setTimeout(r, 300));

    const third = await upload('a', 'third.png');
    expect([third.status, third.body.error, third.body.data]).toEqual([429, true, false]);
    expect(third.body.errormessage).toBe('Too many uploads in progress (at most 2 at once), please try again later.');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    // A presigned URL the same account asked for counts as the same caller.
    const viaUrl = await request(t.app)
      .put(await presignedPath('a', 'byurl.png'))
      .set('Content-Type', 'image/png')
      .send(media.png());
    expect(viaUrl.status).toBe(429);
    expect(await count(t.tdb.db, 'documents')).toBe(0);

    // Another caller is not held up by a's uploads.
    const other = await upload('b', 'other.png');
    expect([other.status, other.body]).toEqual([200, { error: false, data: true }]);

    // The stalled uploads are answered at the idle limit and give their turns back.
    for (const r of await Promise.all(stalled)) expect([408, 0]).toContain(r.status);
    const again = await upload('a', 'third.png');
    expect([again.status, again.body]).toEqual([200, { error: false, data: true }]);
    const url = await request(t.app)
      .put(await presignedPath('a', 'byurl.png'))
      .set('Content-Type', 'image/png')
      .send(media.png());
    expect(url.status).toBe(200);
    expect((await t.tdb.db('documents').orderBy('documentname').pluck('documentname')).sort()).toEqual([
      'byurl.png',
      'other.png',
      'third.png',
    ]);
  });

  it('turns are given back after refused uploads too: ' +
      'many refused uploads in a row never lock the caller out', async () => {
    for (let i = 0; i < 5; i += 1) {
      const bad = await request(t.app)
        .post('/document/upload')
        .set('Authorization', auth.b)
        .attach('inputfile', media.html(), { filepath: `bad${i}.png` } as never);
      expect(bad.status).toBe(400);
    }
    expect((await upload('b', 'after.png')).status).toBe(200);
  });
});

describe.runIf(!!process.env.TEST_REDIS_URL)('instances sharing Redis count one caller\'s uploads together', () => {
  it('an upload in progress on one instance counts on the other', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-upload-turns-redis-'));
    const clients: RedisClient[] = [
      await connectRedis(process.env.TEST_REDIS_URL!, silentLogger),
      await connectRedis(process.env.TEST_REDIS_URL!, silentLogger),
    ];
    const one = await makeApp(
      { OBJECT_DIR: dir, MAX_UPLOADS_PER_CALLER: '1', UPLOAD_IDLE_SECONDS: '2', RATE_LIMIT_MAX: '100000' },
      undefined,
      { redis: clients[0] },
    );
    const two = createApp(one.config, { db: one.tdb.db, logger: silentLogger, redis: clients[1] });
    const { server, origin } = await listen(one.app);
    try {
      await createStaff(one.tdb.db, { lmsusername: 'shared@uploads.test', roleids: [ROLE_IDS.superadmin] });
      const auth = `Bearer ${(await staffLogin(one.app, 'shared@uploads.test')).accessToken}`;
      const stalled = streamUpload(origin, {
        auth,
        filename: 'slow.png',
        head: media.png(16),
        size: 100_000,
        stallAt: 1000,
      });
      await new Promise((r) => setTimeout(r, 300));
      const elsewhere = await request(two)
        .post('/document/upload')
        .set('Authorization', auth)
        .attach('inputfile', media.png(), { filepath: 'elsewhere.png' } as never);
      expect(elsewhere.status).toBe(429);
      expect([408, 0]).toContain((await stalled).status);
      await new Promise((r) => setTimeout(r, 100));
      const after = await request(two)
        .post('/document/upload')
        .set('Authorization', auth)
        .attach('inputfile', media.png(), { filepath: 'elsewhere.png' } as never);
      expect(after.status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await Promise.all(clients.map((c) => c.quit()));
      await one.tdb.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
