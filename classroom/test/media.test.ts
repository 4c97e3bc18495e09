import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers';

// GET /media/<file>: the classroom's copy of the lesson media, for tablets without internet.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-classroom-media-'));
const mediaDir = path.join(dir, 'media');
const video = Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypisom'), crypto.randomBytes(200_000)]);
const picture = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  crypto.randomBytes(3000),
]);

let t: TestApp;
beforeAll(async () => {
  fs.mkdirSync(path.join(mediaDir, '.partial'), { recursive: true });
  fs.writeFileSync(path.join(mediaDir, 'Clip_1.mp4'), video);
  fs.writeFileSync(path.join(mediaDir, 'Pic_1.png'), picture);
  fs.writeFileSync(path.join(mediaDir, 'a1a-2.png'), picture);
  fs.writeFileSync(path.join(mediaDir, '.media.json'), '{}');
  fs.writeFileSync(path.join(mediaDir, '.partial', 'Half.mp4'), video.subarray(0, 100));
  fs.writeFileSync(path.join(mediaDir, 'notes.txt'), 'secret');
  fs.writeFileSync(path.join(dir, 'outside.png'), picture);
  fs.symlinkSync(path.join(dir, 'outside.png'), path.join(mediaDir, 'Link_1.png'));
  fs.mkdirSync(path.join(mediaDir, 'Folder.png'));
  fs.mkdirSync(path.join(mediaDir, 'demo', 'deeper'), { recursive: true });
  fs.writeFileSync(path.join(mediaDir, 'demo', 'counting-to-ten.mp4'), video);
  fs.writeFileSync(path.join(mediaDir, 'demo', 'deeper', 'Pic_2.png'), picture);
  fs.mkdirSync(path.join(dir, 'elsewhere'));
  fs.writeFileSync(path.join(dir, 'elsewhere', 'secret.png'), picture);
  fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(mediaDir, 'linked'));
  fs.symlinkSync(path.join(mediaDir, 'Pic_1.png'), path.join(mediaDir, 'demo', 'Inside_link.png'));
  t = await makeApp({ MEDIA_DIR: mediaDir });
});
afterAll(async () => {
  await t.tdb.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = (p: string) =>
  request(t.app).get(p).buffer(true).parse((res, cb) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => cb(null, Buffer.concat(parts)));
  });

describe('classroom media', () => {
  it('serves names with folders, as the curriculum names its documents, ' +
    'with ranges (a video plays and resumes)', async () => {
    const whole = await get('/media/demo/counting-to-ten.mp4');
    expect(whole.status).toBe(200);
    expect(whole.headers['content-type']).toBe('video/mp4');
    expect((whole.body as Buffer).equals(video)).toBe(true);
    const resume = await get('/media/demo/counting-to-ten.mp4').set('Range', `bytes=${video.length - 1000}-`);
    expect(resume.status).toBe(206);
    expect(resume.headers['content-range']).toBe(`bytes ${video.length - 1000}-${video.length - 1}/${video.length}`);
    expect((await get('/media/demo%2Fcounting-to-ten.mp4')).status).toBe(200);
    expect((await get('/media/Demo/deeper/Pic_2.png')).status).toBe(process.platform === 'darwin' ? 200 : 404);
    const deep = await get('/media/demo/deeper/Pic_2.png');
    expect((deep.body as Buffer).equals(picture)).toBe(true);
    // A link that stays inside the folder is followed.
    expect((await get('/media/demo/Inside_link.png')).status).toBe(200);
  });

  it('serves a media file without a token, with its type, length, ETag and nosniff', async () => {
    const res = await get('/media/Pic_1.png');
    expect(res.status).toBe(200);
    expect((res.body as Buffer).equals(picture)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(picture.length),
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      etag: expect.any(String),
    });
    expect((await get('/media/a1a-2.png')).status).toBe(200);
  });

  it('serves ranges, answers 304 for the version a tablet has, and HEAD without a body', async () => {
    const part = await get('/media/Clip_1.mp4').set('Range', 'bytes=100-199');
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${video.length}`);
    expect((part.body as Buffer).equals(video.subarray(100, 200))).toBe(true);
    expect((await request(t.app).get('/media/Clip_1.mp4').set('Range', `bytes=${video.length + 1}-`)).status).toBe(416);
    const { etag } = (await request(t.app).head('/media/Clip_1.mp4')).headers;
    expect((await request(t.app).get('/media/Clip_1.mp4').set('If-None-Match', etag)).status).toBe(304);
    const head = await request(t.app).head('/media/Clip_1.mp4');
    expect(head.headers['content-length']).toBe(String(video.length));
    expect(head.headers['content-type']).toBe('video/mp4');
  });

  it('gives a replaced file a new ETag', async () => {
    const before = (await request(t.app).head('/media/Pic_1.png')).headers.etag;
    const file = path.join(mediaDir, 'Pic_1.png');
    fs.writeFileSync(file, Buffer.concat([picture, Buffer.from('more')]));
    expect((await request(t.app).head('/media/Pic_1.png')).headers.etag).not.toBe(before);
    fs.writeFileSync(file, picture);
  });

  it('never lists the folder, follows a link out of it, or serves hidden, partial or non-media files', async () => {
    for (const p of [
      '/media/',
      '/media',
      '/media/.media.json',
      '/media/.partial',
      '/media/.partial%2FHalf.mp4',
      '/media/notes.txt',
      '/media/missing.png',
      '/media/Link_1.png',
      '/media/Folder.png',
      '/media/..%2Foutside.png',
      '/media/%2e%2e%2Foutside.png',
      '/media/..',
      '/media/a/b.png',
      '/media/demo',
      '/media/demo/',
      '/media/demo/../Pic_1.png',
      '/media/demo/%2e%2e/Pic_1.png',
      '/media/demo/..%2F..%2Foutside.png',
      '/media/demo//Pic_1.png',
      '/media/linked/secret.png',
      '/media/.partial/Half.mp4',
      '/media/demo/.hidden.png',
      '/media/%2Fetc%2Fpasswd.png',
      '/media/demo%2F..%2F..%2Foutside.png',
      `/media/${'a/'.repeat(9)}x.png`,
    ]) {
      const res = await request(t.app).get(p);
      expect([p, res.status]).toEqual([p, 404]);
    }
  });
});
