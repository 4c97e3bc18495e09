import crypto from 'node:crypto';
import http from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import type { ObjectStore } from '../src/objects';
import { presignedMediaUrl } from '../src/http/presign';
import { makeApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { startS3Sandbox, type S3Sandbox } from './s3';
import { loadConfig } from '../src/config';
import { createObjectStore } from '../src/objects';
import { folderLeftovers, listen, media, storeFor } from './media-helpers';

// GET /document/presign/:filename (decision 26): a 5-minute upload URL for one key.

let sandbox: S3Sandbox;
beforeAll(async () => { sandbox = await startS3Sandbox('lms-presign-'); });
afterAll(async () => { await sandbox?.close(); });

const digest = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');
async function objectDigest(store: ObjectStore, key: string): Promise<string> {
  const md5 = crypto.createHash('md5');
  for await (const c of await store.get(key)) md5.update(c as Buffer);
  return md5.digest('hex');
}

async function setup(kind: 'folder' | 's3', env: Record<string, string> = {}) {
  const s = storeFor(kind, sandbox, `presign-${kind}-${crypto.randomBytes(3).toString('hex')}`);
  const t = await makeApp({ ...s.env, MAX_MEDIA_MB: '1', RATE_LIMIT_MAX: '100000', ...env }, undefined, {
    objects: s.store,
  });
  const { server, origin } = await listen(t.app);
  const userid = await createStaff(t.tdb.db, { lmsusername: 'presign@media.test', roleids: [ROLE_IDS.superadmin] });
  const admin = `Bearer ${(await staffLogin(t.app, 'presign@media.test')).accessToken}`;
  return { t, store: s.store, dir: s.dir, server, origin, admin, userid };
}

describe('presigned uploads on the folder store (a URL signed by central)', () => {
  let ctx: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    ctx = await setup('folder', { PUBLIC_URL: 'http://media.example.org/api/', UPLOAD_IDLE_SECONDS: '1' });
  });
  afterAll(async () => {
    await new Promise((r) => ctx.server.close(r));
    await ctx.t.tdb.dispose();
  });

  const presign = (name: string) =>
    request(ctx.t.app)
      .get(`/document/presign/${encodeURIComponent(name)}`)
      .set('Authorization', ctx.admin);
  /** The URL's path and query against the test server (PUBLIC_URL names the address clients would use). */
  const local = (url: string) => url.replace('http://media.example.org/api', '');
  const put = (url: string, body: Buffer, type = 'application/octet-stream') =>
    request(ctx.t.app).put(local(url)).set('Content-Type', type).send(body);
  const db = () => ctx.t.tdb.db;
  const nothingOf = async (name: string) => {
    expect(await db()('documents').where({ documentname: name })).toEqual([]);
    expect((await ctx.store.list()).map((o) => o.key)).not.toContain(name);
    expect(await folderLeftovers(ctx.dir)).toEqual([]);
  };

  it('answers a 5-minute URL on PUBLIC_URL that uploads the file once, with a document row', async () => {
    const res = await presign('Video_1.mp4');
    expect(res.status).toBe(200);
    const url = res.body.data as string;
    expect(url).toMatch(
      /^http:\/\/media\.example\.org\/api\/media\/Video_1\.mp4\?expires=\d+&by=[0-9a-f-]+&signature=[0-9a-f]{64}$/,
    );
    const expires = Number(new URL(url).searchParams.get('expires'));
    expect(Math.abs(expires - (Date.now() / 1000 + 300))).toBeLessThan(5);

    const bytes = media.mp4(50_000);
    const up = await put(url, bytes, 'video/mp4');
    expect({ status: up.status, body: up.body }).toEqual({ status: 200, body: { error: false, data: true } });
    expect(await db()('documents').where({ documentname: 'Video_1.mp4' }).first()).toMatchObject({
      documenttypeid: 2,
      isdeleted: false,
      created_by: ctx.userid,
    });
    expect(await objectDigest(ctx.store, 'Video_1.mp4')).toBe(digest(bytes));

    // Replayed: refused, and neither the row nor the file changes.
    const again = await put(url, media.mp4(60_000));
    expect({ status: again.status, message: again.body.errormessage }).toEqual({
      status: 403,
      message: 'The upload URL has been used',
    });
    expect(await db()('documents').where({ documentname: 'Video_1.mp4' })).toHaveLength(1);
    expect(await objectDigest(ctx.store, 'Video_1.mp4')).toBe(digest(bytes));
  });

  it('refuses an expired URL, a forged or altered one, and leaves nothing', async () => {
    const req = { protocol: 'http', get: () => 'media.example.org' } as never;
    const expired = presignedMediaUrl(req, ctx.t.config, 'Old_1.png', null, Date.now() - 6 * 60 * 1000);
    const res = await put(expired, media.png());
    expect({ status: res.status, message: res.body.errormessage }).toEqual({
      status: 403,
      message: 'The upload URL has expired',
    });
    await nothingOf('Old_1.png');

    const good = (await presign('Good_1.png')).body.data as string;
    const other = local(good).replace('/media/Good_1.png', '/media/Other_1.png');
    expect((await put(other, media.png())).status).toBe(403);
    await nothingOf('Other_1.png');
    const later = local(good).replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 3600}`);
    expect((await put(later, media.png())).body.errormessage).toBe('Invalid upload URL');
    const forged = local(good).replace(/signature=[0-9a-f]+/, `signature=${'0'.repeat(64)}`);
    expect((await put(forged, media.png())).status).toBe(403);
    expect((await put('/media/Good_1.png', media.png())).status).toBe(403);
    const otherUser = local(good).replace(/by=[^&]+/, `by=${crypto.randomUUID()}`);
    expect((await put(otherUser, media.png())).status).toBe(403);
    await nothingOf('Good_1.png');
    // Only the spent URL of the first upload is remembered (until it would have expired); no name is held.
    expect((await db()('mediaclaims').select('claim')).map((c) => c.claim.slice(0, 4))).toEqual(['url:']);
  });

  it('applies the upload checks to the PUT; a refused attempt may be retried while the URL lives', async () => {
    const url = (await presign('Retry_1.png')).body.data as string;
    const fake = await put(url, media.html());
    expect({ status: fake.status, message: fake.body.errormessage }).toEqual({
      status: 400,
      message: 'Invalid file type',
    });
    await nothingOf('Retry_1.png');
    const big = await put(url, media.png(1024 * 1024 + 1));
    expect({ status: big.status, message: big.body.errormessage }).toEqual({
      status: 413,
      message: 'File too large (at most 1 MB)',
    });
    await nothingOf('Retry_1.png');
    const ok = await put(url, media.png(1000));
    expect(ok.status).toBe(200);
    expect(await db()('documents').where({ documentname: 'Retry_1.png' })).toHaveLength(1);
  });

  it('answers 408 to a PUT that stops sending, keeps nothing, and lets the URL be used again', async () => {
    const url = local((await presign('Stall_1.mp4')).body.data as string);
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${ctx.origin}${url}`, {
        method: 'PUT',
        headers: { 'Content-Type': 'video/mp4', 'Content-Length': 200_000 },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write(media.mp4(50_000));
    });
    expect(result.status).toBe(408);
    expect(JSON.parse(result.body).errormessage).toBe('The upload sent nothing for 1 s');
    await nothingOf('Stall_1.mp4');
    expect((await put(url, media.mp4(1000))).status).toBe(200);
  });

  it('checks the name when it signs, and never signs a name a live document holds', async () => {
    const long = 'Invalid file name, only alpha numeric is allowed and file name max length of 25 characters only';
    expect((await presign('../evil.png')).body.errormessage).toBe(long);
    expect((await presign('noext')).body.errormessage).toBe('Invalid file name');
    expect((await presign('x.exe')).body.errormessage).toBe('Invalid file type');
    const held = await presign('Video_1.mp4');
    expect({ status: held.status, message: held.body.errormessage }).toEqual({
      status: 400,
      message: 'File exists, Please delete old file before upload',
    });
  });

  it('without PUBLIC_URL, signs for the address the request came to', async () => {
    const t = await makeApp({ OBJECT_DIR: 'unused-objects' }, ctx.t.tdb, { objects: ctx.store });
    const res = await request(t.app)
      .get('/document/presign/Here_1.png')
      .set('Authorization', ctx.admin)
      .set('Host', 'classroom.local:3000');
    expect(res.body.data).toMatch(/^http:\/\/classroom\.local:3000\/media\/Here_1\.png\?expires=/);
  });
});

describe('presigned uploads on an S3-compatible store (the store signs)', () => {
  let ctx: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => { ctx = await setup('s3'); });
  afterAll(async () => {
    await new Promise((r) => ctx.server.close(r));
    await ctx.t.tdb.dispose();
  });

  it('answers the store\'s own presigned PUT URL, which stores the file in the bucket', async () => {
    const res = await request(ctx.t.app).get('/document/presign/Direct_1.mp3').set('Authorization', ctx.admin);
    expect(res.status).toBe(200);
    const url = res.body.data as string;
    expect(url.startsWith(`${sandbox.origin}/`)).toBe(true);
    expect(url).toContain('X-Amz-Expires=300');
    const bytes = media.mp3(5000);
    const up = await fetch(url, { method: 'PUT', body: bytes });
    expect(up.status).toBe(200);
    expect(await objectDigest(ctx.store, 'Direct_1.mp3')).toBe(digest(bytes));
  });

  it('signs for S3_PUBLIC_ENDPOINT, the address clients reach the store at, ' +
      'when it differs from S3_ENDPOINT', async () => {
    const port = new URL(sandbox.origin).port;
    const config = loadConfig({
      NODE_ENV: 'test',
      S3_ENDPOINT: sandbox.origin,
      S3_PUBLIC_ENDPOINT: `http://localhost:${port}`,
      S3_BUCKET: 'public-presign',
      S3_ACCESS_KEY: 'S3RVER',
      S3_SECRET_KEY: 'S3RVER',
    });
    expect(config.objectStore).toMatchObject({
      kind: 's3',
      endpoint: sandbox.origin,
      publicEndpoint: `http://localhost:${port}`,
    });
    const store = createObjectStore(config.objectStore);
    const url = await store.presignPut!('Public_1.mp3', 300);
    expect(url.startsWith(`http://localhost:${port}/public-presign/Public_1.mp3?`)).toBe(true);
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    const bytes = media.mp3(3000);
    expect((await fetch(url, { method: 'PUT', body: bytes })).status).toBe(200);
    expect(await objectDigest(store, 'Public_1.mp3')).toBe(digest(bytes));
  });

  it('has its expired URLs refused by the store, which keeps nothing', async () => {
    const url = await ctx.store.presignPut!('Late_1.mp3', 300, new Date(Date.now() - 10 * 60 * 1000));
    const up = await fetch(url, { method: 'PUT', body: media.mp3() });
    expect(up.status).toBe(403);
    expect((await ctx.store.list()).map((o) => o.key)).not.toContain('Late_1.mp3');
  });

  it('checks the name and refuses a name a live document holds', async () => {
    const bytes = media.png();
    expect(
      (
        await request(ctx.t.app)
          .post('/document/upload')
          .set('Authorization', ctx.admin)
          .attach('f', bytes, 'Held_1.png')
      ).status,
    ).toBe(200);
    const res = await request(ctx.t.app).get('/document/presign/Held_1.png').set('Authorization', ctx.admin);
    expect(res.body.errormessage).toBe('File exists, Please delete old file before upload');
    expect((await request(ctx.t.app).get('/document/presign/..%2Fx.png').set('Authorization', ctx.admin)).status).toBe(
      400,
    );
  });
});
