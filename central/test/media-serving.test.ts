import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectStore } from '../src/objects';
import { makeApp, type TestApp } from './helpers';
import { startS3Sandbox, type S3Sandbox } from './s3';
import { media, storeFor } from './media-helpers';

// GET /media/<key>: public media of the object store, with the properties audio, video and picture
// players rely on, and nothing but documents and feedback pictures.

let sandbox: S3Sandbox;
beforeAll(async () => { sandbox = await startS3Sandbox('lms-media-serving-'); });
afterAll(async () => { await sandbox?.close(); });

/** The body of a binary answer. */
const binary = (res: request.Response) => res.body as Buffer;
const get = (app: TestApp['app'], path: string) =>
  request(app).get(path).buffer(true).parse((res, cb) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => cb(null, Buffer.concat(parts)));
  });

describe.each(['folder', 's3'] as const)('media served from the %s store', (kind) => {
  let t: TestApp;
  let store: ObjectStore;
  const video = media.mp4(300_000);
  const picture = media.png(4000);

  beforeAll(async () => {
    const s = storeFor(kind, sandbox, `serving-${kind}`);
    store = s.store;
    t = await makeApp({ ...s.env, RATE_LIMIT_MAX: '100000' }, undefined, { objects: store });
    await store.put('Clip_1.mp4', video, { contentType: 'video/mp4' });
    await store.put('Pic_1.png', picture, { contentType: 'image/png' });
    await store.put('song.mp3', media.mp3(), { contentType: 'audio/mpeg' });
    await store.put('book.pdf', media.pdf(), { contentType: 'application/pdf' });
    await store.put('rpi.log', media.log(), { contentType: 'text/plain' });
    await store.put('feedback/u1_rpi_1700000000000.jpg', media.jpg(), { contentType: 'image/jpeg' });
    await store.put('logupload-1700000000000.zip', Buffer.from('PK\x05\x06'.padEnd(22, '\0')), {
      contentType: 'application/zip',
    });
  });
  afterAll(async () => { await t.tdb.dispose(); });

  it('answers a document without a token, with its type, length, ETag and nosniff', async () => {
    const res = await get(t.app, '/media/Pic_1.png');
    expect(res.status).toBe(200);
    expect(binary(res).equals(picture)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(picture.length),
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      etag: `"${(await store.stat('Pic_1.png')).etag}"`,
    });
    for (const [path, type] of [
      ['/media/song.mp3', 'audio/mpeg'],
      ['/media/book.pdf', 'application/pdf'],
      ['/media/rpi.log', 'text/plain; charset=utf-8'],
      ['/media/Clip_1.mp4', 'video/mp4'],
    ]) {
      expect([path, (await get(t.app, path)).headers['content-type']]).toEqual([path, type]);
    }
  });

  it('answers 304 to a client that has this version, and the new bytes when it has another', async () => {
    const { etag } = (await get(t.app, '/media/Pic_1.png')).headers;
    const same = await request(t.app).get('/media/Pic_1.png').set('If-None-Match', etag);
    expect(same.status).toBe(304);
    expect(same.text ?? '').toBe('');
    expect((await request(t.app).get('/media/Pic_1.png').set('If-None-Match', `"other", W/${etag}`)).status).toBe(304);
    expect((await request(t.app).get('/media/Pic_1.png').set('If-None-Match', '*')).status).toBe(304);
    expect((await get(t.app, '/media/Pic_1.png').set('If-None-Match', '"something-else"')).status).toBe(200);
  });

  it('serves byte ranges for audio and video players', async () => {
    const first = await get(t.app, '/media/Clip_1.mp4').set('Range', 'bytes=0-99');
    expect(first.status).toBe(206);
    expect(first.headers['content-range']).toBe(`bytes 0-99/${video.length}`);
    expect(first.headers['content-length']).toBe('100');
    expect(binary(first).equals(video.subarray(0, 100))).toBe(true);

    const middle = await get(t.app, '/media/Clip_1.mp4').set('Range', 'bytes=150000-150009');
    expect(binary(middle).equals(video.subarray(150000, 150010))).toBe(true);
    const tail = await get(t.app, '/media/Clip_1.mp4').set('Range', 'bytes=-10');
    expect(tail.headers['content-range']).toBe(`bytes ${video.length - 10}-${video.length - 1}/${video.length}`);
    expect(binary(tail).equals(video.subarray(video.length - 10))).toBe(true);
    const rest = await get(t.app, '/media/Clip_1.mp4').set('Range', `bytes=${video.length - 5}-`);
    expect(binary(rest).equals(video.subarray(video.length - 5))).toBe(true);
    const clamped = await get(t.app, '/media/Clip_1.mp4').set(
      'Range',
      `bytes=${video.length - 3}-${video.length + 100}`,
    );
    expect(clamped.headers['content-range']).toBe(`bytes ${video.length - 3}-${video.length - 1}/${video.length}`);

    const beyond = await request(t.app).get('/media/Clip_1.mp4').set('Range', `bytes=${video.length}-`);
    expect(beyond.status).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${video.length}`);
    // A range of another version (If-Range) or several ranges: the whole file.
    const stale = await get(t.app, '/media/Clip_1.mp4').set('Range', 'bytes=0-9').set('If-Range', '"old-version"');
    expect(stale.status).toBe(200);
    expect(binary(stale).length).toBe(video.length);
    const current = (await request(t.app).head('/media/Clip_1.mp4')).headers.etag;
    expect((await get(t.app, '/media/Clip_1.mp4').set('Range', 'bytes=0-9').set('If-Range', current)).status).toBe(206);
    expect((await get(t.app, '/media/Clip_1.mp4').set('Range', 'bytes=0-9,20-29')).status).toBe(200);
  });

  it('answers HEAD with the headers alone', async () => {
    const res = await request(t.app).head('/media/Clip_1.mp4');
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(video.length));
    expect(res.headers['content-type']).toBe('video/mp4');
  });

  it('serves feedback pictures under feedback/', async () => {
    const res = await get(t.app, '/media/feedback/u1_rpi_1700000000000.jpg');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
  });

  it('never serves a log archive, a listing, a hidden file or a path outside its keys', async () => {
    const notFound = [
      '/media/logupload-1700000000000.zip',
      '/media/', '/media', '/media/feedback/', '/media/feedback',
      '/media/missing.png',
      '/media/..%2F..%2Fetc%2Fpasswd', '/media/..%2Fcentral.sqlite', '/media/%2e%2e', '/media/.meta', '/media/.tmp',
      '/media/feedback/..%2FPic_1.png', '/media/feedback/%2e%2e%2FPic_1.png',
      '/media/Pic_1.png%00.txt', '/media/a/b/Pic_1.png',
    ];
    for (const path of notFound) {
      const res = await request(t.app).get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.headers['content-type']).toMatch(/application\/json/);
    }
    if (kind === 'folder') {
      // The folder store's sidecar of a real object is not reachable either.
      expect((await request(t.app).get('/media/.meta%2FPic_1.png.json')).status).toBe(404);
    }
  });
});
