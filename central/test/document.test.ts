import crypto from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import type { ObjectStore } from '../src/objects';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { startS3Sandbox, type S3Sandbox } from './s3';
import {
  count,
  eventually,
  folderLeftovers,
  listen,
  media,
  rssGrowthMb,
  storeFor,
  streamUpload,
} from './media-helpers';

// The media library on both object stores: what an upload leaves (a row and an object, or neither).

let sandbox: S3Sandbox;
beforeAll(async () => { sandbox = await startS3Sandbox('lms-document-'); });
afterAll(async () => { await sandbox?.close(); });

/** The object's bytes, as a digest: comparing large buffers element by element is slow in expect. */
async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const md5 = crypto.createHash('md5');
  for await (const c of stream) md5.update(c as Buffer);
  return md5.digest('hex');
}
const digest = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

describe.each(['folder', 's3'] as const)('documents on the %s store', (kind) => {
  let t: TestApp;
  let store: ObjectStore;
  let dir: string | undefined;
  let server: Server;
  let origin: string;
  let admin: string;

  beforeAll(async () => {
    const s = storeFor(kind, sandbox, `documents-${kind}`);
    store = s.store;
    dir = s.dir;
    t = await makeApp({ ...s.env, MAX_MEDIA_MB: '8', UPLOAD_IDLE_SECONDS: '1', RATE_LIMIT_MAX: '100000' }, undefined, {
      objects: store,
    });
    ({ server, origin } = await listen(t.app));
    await createStaff(t.tdb.db, { lmsusername: 'media@doc.test', roleids: [ROLE_IDS.superadmin] });
    admin = `Bearer ${(await staffLogin(t.app, 'media@doc.test')).accessToken}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.tdb.dispose();
  });

  const db = () => t.tdb.db;
  // `filepath`: the multipart encoder sends the name as given (a plain filename is cut to its base name).
  const upload = (filename: string, bytes: Buffer, field = 'inputfile') =>
    request(t.app)
      .post('/document/upload')
      .set('Authorization', admin)
      .attach(field, bytes, { filepath: filename } as never);
  const keys = async () => (await store.list()).map((o) => o.key);
  const docs = (documentname: string) => db()('documents').where({ documentname });

  /** A refusal: the status and message, and nothing written anywhere. */
  async function refused(res: request.Response, status: number, message: string, name?: string) {
    expect({ status: res.status, body: res.body }).toEqual({
      status,
      body: { error: true, errormessage: message, data: false },
    });
    if (name) {
      expect(await docs(name)).toEqual([]);
      expect(await keys()).not.toContain(name);
    }
    expect(await count(db(), 'mediaclaims')).toBe(0);
    expect(await folderLeftovers(dir)).toEqual([]);
  }

  it('stores the one file under its own name, any field name, and writes its document row', async () => {
    const bytes = media.png(5000);
    const res = await upload('Lesson_1.png', bytes, 'whatever');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ error: false, data: true });
    const [row] = await docs('Lesson_1.png');
    expect(row).toMatchObject({ documenttypeid: 6, documentname: 'Lesson_1.png', isdeleted: false, documenttags: [] });
    expect(row.documents3meta).toMatchObject({
      Key: 'Lesson_1.png',
      ETag: expect.any(String),
      Bucket: expect.any(String),
      Location: expect.any(String),
    });
    expect(await readAll(await store.get('Lesson_1.png'))).toBe(digest(bytes));
    expect((await store.stat('Lesson_1.png')).contentType).toBe('image/png');
    expect(await count(db(), 'mediaclaims')).toBe(0);
  });

  it('classifies each media type by its extension, checked against its first bytes', async () => {
    const cases: Array<[string, Buffer, number]> = [
      ['song.mp3', media.mp3(), 1], ['clip.MP4', media.mp4(), 2], ['book.pdf', media.pdf(), 5],
      ['photo.jpeg', media.jpg(), 6], ['anim.gif', media.gif(), 6], ['rpi.log', media.log(), 6],
    ];
    for (const [name, bytes, type] of cases) {
      expect([name, (await upload(name, bytes)).status]).toEqual([name, 200]);
      expect((await docs(name).first())?.documenttypeid).toBe(type);
    }
  });

  it('refuses a disguised file: an HTML page named .png or .mp3, a PNG named .mp4', async () => {
    await refused(await upload('fake.png', media.html()), 400, 'Invalid file type', 'fake.png');
    await refused(await upload('fake.mp3', media.html()), 400, 'Invalid file type', 'fake.mp3');
    await refused(await upload('fake.mp4', media.png()), 400, 'Invalid file type', 'fake.mp4');
    await refused(await upload('fake.log', media.html()), 400, 'Invalid file type', 'fake.log');
    await refused(await upload('empty.png', Buffer.alloc(0)), 400, 'Invalid file type', 'empty.png');
  });

  it('refuses names with the contract messages: no extension, a path, ../, too long, an unknown type', async () => {
    await refused(await upload('noextension', media.png()), 400, 'Invalid file name');
    const long = 'Invalid file name, only alpha numeric is allowed and file name max length of 25 characters only';
    await refused(await upload('../evil.png', media.png()), 400, long);
    await refused(await upload('../../etc/evil.png', media.png()), 400, long);
    await refused(await upload('dir/evil.png', media.png()), 400, long);
    await refused(await upload('dir\\evil.png', media.png()), 400, long);
    await refused(await upload('with space.png', media.png()), 400, long);
    await refused(await upload(`${'a'.repeat(26)}.png`, media.png()), 400, long);
    await refused(await upload('program.exe', media.png()), 400, 'Invalid file type');
    expect(await keys()).not.toEqual(expect.arrayContaining(['evil.png']));
  });

  it('refuses a request without a file, and one with two files (the first one is not kept)', async () => {
    await refused(
      await request(t.app).post('/document/upload').set('Authorization', admin).field('note', 'x'),
      400,
      'Invalid file type',
    );
    await refused(
      await request(t.app).post('/document/upload').set('Authorization', admin).send({ file: 'x' }),
      400,
      'Invalid file type',
    );
    const two = await request(t.app)
      .post('/document/upload')
      .set('Authorization', admin)
      .attach('a', media.png(), 'first_of_two.png')
      .attach('b', media.png(), 'second_of_two.png');
    await refused(two, 400, 'Only one file upload allowed', 'first_of_two.png');
    expect(await keys()).not.toContain('second_of_two.png');
  });

  it('refuses a name a live document holds and leaves its file as it was; ' +
      'after a delete the name is free', async () => {
    const first = media.png(3000);
    expect((await upload('Taken.png', first)).status).toBe(200);
    const res = await upload('Taken.png', media.png(4000));
    expect(res.body).toEqual({
      error: true,
      errormessage: 'File exists, Please delete old file before upload',
      data: false,
    });
    expect(res.status).toBe(400);
    expect(await readAll(await store.get('Taken.png'))).toBe(digest(first));
    expect(await docs('Taken.png')).toHaveLength(1);

    const { documentid } = await docs('Taken.png').first();
    expect((await request(t.app).delete(`/document/${documentid}`).set('Authorization', admin)).body).toEqual({
      error: false,
      data: true,
    });
    expect(await docs('Taken.png').first()).toMatchObject({
      isdeleted: true,
      deleted_by: expect.any(String),
      deleted_at: expect.any(String),
    });
    const second = media.png(4500);
    expect((await upload('Taken.png', second)).status).toBe(200);
    expect(await docs('Taken.png').where({ isdeleted: false })).toHaveLength(1);
    expect(await readAll(await store.get('Taken.png'))).toBe(digest(second));
  });

  it('lets one of two simultaneous uploads of a name win; the other is refused and its bytes are nowhere', async () => {
    const a = media.png(600_000);
    const b = media.png(600_000);
    const [ra, rb] = await Promise.all([upload('Race.png', a), upload('Race.png', b)]);
    expect([ra.status, rb.status].sort()).toEqual([200, 400]);
    const winner = ra.status === 200 ? a : b;
    expect(await docs('Race.png')).toHaveLength(1);
    expect(await readAll(await store.get('Race.png'))).toBe(digest(winner));
    expect(await count(db(), 'mediaclaims')).toBe(0);
  });

  it('refuses a name another upload is writing (on any instance), and takes over a claim that lapsed', async () => {
    const soon = new Date(Date.now() + 60_000).toISOString();
    await db()('mediaclaims').insert({ claim: 'name:Busy_1.png', expires_at: soon });
    const busy = await upload('Busy_1.png', media.png());
    expect({ status: busy.status, message: busy.body.errormessage }).toEqual({
      status: 400,
      message: 'File exists, Please delete old file before upload',
    });
    expect(await keys()).not.toContain('Busy_1.png');
    await db()('mediaclaims')
      .where({ claim: 'name:Busy_1.png' })
      .update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    expect((await upload('Busy_1.png', media.png())).status).toBe(200);
    expect(await count(db(), 'mediaclaims')).toBe(0);
  });

  it('refuses an oversize file while it streams, without holding it in memory', async () => {
    const size = 96 * 1024 * 1024;
    const { result, growthMb } = await rssGrowthMb(() =>
      streamUpload(origin, { auth: admin, filename: 'Huge.mp4', head: media.mp4(64), size }),
    );
    expect(result).toEqual({
      status: 413,
      body: { error: true, errormessage: 'File too large (at most 8 MB)', data: false },
    });
    expect(growthMb).toBeLessThan(32);
    await refused(
      { status: 413, body: result.body } as request.Response,
      413,
      'File too large (at most 8 MB)',
      'Huge.mp4',
    );
  }, 60_000);

  it('keeps nothing of an upload cut off halfway', async () => {
    const result = await streamUpload(origin, {
      auth: admin,
      filename: 'Cut.mp4',
      head: media.mp4(64),
      size: 6 * 1024 * 1024,
      cutAt: 3 * 1024 * 1024,
    });
    expect(result.status).toBe(0);
    await eventually(async () => (await count(db(), 'mediaclaims')) === 0);
    expect(await docs('Cut.mp4')).toEqual([]);
    expect(await keys()).not.toContain('Cut.mp4');
    expect(await folderLeftovers(dir)).toEqual([]);
  });

  it('answers 408 to a client that stops sending, and keeps nothing of its upload', async () => {
    const result = await streamUpload(origin, {
      auth: admin,
      filename: 'Slow.mp4',
      head: media.mp4(64),
      size: 4 * 1024 * 1024,
      stallAt: 2 * 1024 * 1024,
    });
    expect(result).toEqual({
      status: 408,
      body: { error: true, errormessage: 'The upload sent nothing for 1 s', data: false },
    });
    await eventually(async () => (await count(db(), 'mediaclaims')) === 0);
    expect(await docs('Slow.mp4')).toEqual([]);
    expect(await keys()).not.toContain('Slow.mp4');
    expect(await folderLeftovers(dir)).toEqual([]);
  });

  it('lists live documents newest first, filtered by name, type and tag; tags are added once and removed', async () => {
    const base = db()('documents');
    await base.clone().update({ isdeleted: true });
    for (const [name, bytes] of [
      ['alpha_song.mp3', media.mp3()],
      ['beta_pic.png', media.png()],
      ['gamma_pic.png', media.png()],
    ] as const) {
      expect((await upload(name, bytes)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 5));
    }
    const list = (body: object) => request(t.app).post('/document').set('Authorization', admin).send(body);
    const all = await list({ pageindex: 1, pagesize: 10, filter: [] });
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual({
      data: [
        {
          documentid: expect.any(String),
          documentname: 'gamma_pic.png',
          documenttypeid: 6,
          isdeleted: false,
          documenttags: [],
        },
        {
          documentid: expect.any(String),
          documentname: 'beta_pic.png',
          documenttypeid: 6,
          isdeleted: false,
          documenttags: [],
        },
        {
          documentid: expect.any(String),
          documentname: 'alpha_song.mp3',
          documenttypeid: 1,
          isdeleted: false,
          documenttags: [],
        },
      ],
      total: 3, pageindex: 1, pagesize: 10,
    });
    expect((await list({ filter: [{ key: 'documentname', value: 'PIC' }] })).body.data).toMatchObject({
      total: 2,
      pageindex: 0,
      pagesize: 0,
    });
    expect(
      (await list({ filter: [{ key: 'documenttypeid', value: '1' }] })).body.data.data.map(
        (d: { documentname: string }) => d.documentname,
      ),
    ).toEqual(['alpha_song.mp3']);
    const second = await list({ pageindex: 2, pagesize: 2 });
    expect(second.body.data.data.map((d: { documentname: string }) => d.documentname)).toEqual(['alpha_song.mp3']);

    const beta = all.body.data.data[1].documentid as string;
    const before = (await db()('documents').where({ documentid: beta }).first()).lastupdated;
    await new Promise((r) => setTimeout(r, 5));
    for (const tag of ['animals', 'animals', 'farm']) {
      expect((await request(t.app).get(`/document/tag/${beta}/${tag}`).set('Authorization', admin)).body).toEqual({
        error: false,
        data: true,
      });
    }
    const tagged = await db()('documents').where({ documentid: beta }).first();
    expect(tagged.documenttags).toEqual(['animals', 'farm']);
    expect(tagged.lastupdated > before).toBe(true);
    expect(
      (await list({ filter: [{ key: 'documenttags', value: 'farm' }] })).body.data.data.map(
        (d: { documentname: string }) => d.documentname,
      ),
    ).toEqual(['beta_pic.png']);
    // Most recently changed first: the tagged picture leads now.
    expect((await list({})).body.data.data[0].documentname).toBe('beta_pic.png');
    expect((await request(t.app).delete(`/document/tag/${beta}/animals`).set('Authorization', admin)).body).toEqual({
      error: false,
      data: true,
    });
    expect((await db()('documents').where({ documentid: beta }).first()).documenttags).toEqual(['farm']);

    const bad = await request(t.app).get('/document/tag/not-a-guid/farm').set('Authorization', admin);
    expect(bad.status).toBe(400);
    expect(bad.body.errormessage).toBe('"documentid" must be a valid GUID');
    expect((await list({ filter: [{ key: 'documentowner', value: 'x' }] })).status).toBe(400);
  });

  it('answers an unknown document id as the original did (nothing changes)', async () => {
    const unknown = crypto.randomUUID();
    expect((await request(t.app).delete(`/document/${unknown}`).set('Authorization', admin)).body).toEqual({
      error: false,
      data: true,
    });
    expect((await request(t.app).get(`/document/tag/${unknown}/x`).set('Authorization', admin)).body).toEqual({
      error: false,
      data: true,
    });
  });
});
