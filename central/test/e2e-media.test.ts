import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, repoRoot, seedDemoContent } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createFolderStore } from '../src/objects/folder';
import { createStaff, staffLogin } from './accounts';
import { media } from './media-helpers';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { MANIFEST, mediaFromSaved, syncContent } from '../../scripts/src/sync-content';

// A document uploaded on central, used by a lesson's learning item and a question's option, reaches the
// classroom's /media/ through `npm run sync-content`; a second run transfers nothing; a download cut
// off halfway resumes; the same works offline from a saved folder or ZIP.

const SYNC_KEY = 'shared-sync-key-for-media-e2e';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-e2e-media-'));
const mediaDir = path.join(tmp, 'classroom-media');

let central: TestApp;
let classroom: ClassroomTestApp;
let centralUrl: string;
let classroomUrl: string;
let token: string;
const servers: http.Server[] = [];

/** What central's /media answered during a run: one entry per request. */
const served: Array<{ path: string; status: number; range?: string; bytes: number }> = [];
/** Drops the connection of the next /media answer for this file after so many body bytes. */
let cutNext: { name: string; after: number } | undefined;

function centralListener(app: http.RequestListener): http.RequestListener {
  return (req, res) => {
    if (!req.url?.startsWith('/media/')) return app(req, res);
    const entry = { path: decodeURIComponent(req.url.split('?')[0]), status: 0, range: req.headers.range, bytes: 0 };
    served.push(entry);
    const cut = cutNext && entry.path === `/media/${cutNext.name}` ? cutNext : undefined;
    if (cut) cutNext = undefined;
    const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
    res.write = ((chunk: Buffer | string, ...rest: unknown[]) => {
      const n = Buffer.byteLength(chunk);
      if (cut && entry.bytes + n > cut.after) {
        res.destroy();
        return false;
      }
      entry.bytes += n;
      return write(chunk, ...rest);
    }) as typeof res.write;
    res.on('close', () => { entry.status = res.statusCode; });
    return app(req, res);
  };
}

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const files = {
  video: { name: 'Counting_1.mp4', bytes: media.mp4(2 * 1024 * 1024 + 123) },
  picture: { name: 'Apple_1.png', bytes: media.png(40_000) },
  story: { name: 'Story_1.mp3', bytes: media.mp3(3 * 1024 * 1024) },
};

async function upload(f: { name: string; bytes: Buffer }): Promise<string> {
  const res = await request(central.app)
    .post('/document/upload')
    .set('Authorization', `Bearer ${token}`)
    .attach('file', f.bytes, f.name);
  expect(res.status).toBe(200);
  return (await central.tdb.db('documents').where({ documentname: f.name, isdeleted: false }).first()).documentid;
}

/** A learning item of the demo lesson showing this document (the lesson routes are not needed for it). */
async function learningItem(documentid: string, order: number): Promise<void> {
  await central.tdb.db('lessonlearnings').insert({
    lessonlearningid: crypto.randomUUID(),
    lessonlearningname: `Watch ${order}`,
    lessonlearningdescription: '',
    lessonlearningstatus: true,
    lessonid: DEMO.lessonid,
    documentid,
    lessonlearningorder: order,
    points: 1,
  });
}

const log: string[] = [];
const run = (o: Partial<Parameters<typeof syncContent>[0]> = {}) =>
  syncContent(
    {
      central: centralUrl,
      centralToken: token,
      classroom: classroomUrl,
      syncKey: SYNC_KEY,
      mediaDir,
      idleTimeoutMs: 10_000,
      ...o,
    },
    (line) => log.push(line),
  );
const mediaAnswers = () => served.filter((s) => s.status === 200 || s.status === 206);
const digest = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

beforeAll(async () => {
  classroom = await makeClassroomApp({
    SERVER_SYNC_KEY: SYNC_KEY,
    MEDIA_DIR: mediaDir,
    JWT_SECRET: 'classroom-jwt-for-media-e2e',
  });
  classroomUrl = await listen(classroom.app);
  const objectDir = path.relative(repoRoot, path.join(tmp, 'central-objects'));
  central = await makeApp({
    SERVER_SYNC_KEY: SYNC_KEY,
    RPI_CLOUD: classroomUrl,
    JWT_SECRET: 'central-jwt-for-media-e2e',
    OBJECT_DIR: objectDir,
    RATE_LIMIT_MAX: '100000',
  });
  centralUrl = await listen(centralListener(central.app));
  await seedDemoContent(central.tdb.db);
  await createStaff(central.tdb.db, { lmsusername: 'media@e2e.test', roleids: [ROLE_IDS.superadmin] });
  token = (await staffLogin(central.app, 'media@e2e.test')).accessToken;

  await learningItem(await upload(files.video), 1);
  await upload(files.picture);
  // A practice question whose option shows the picture.
  const questionid = crypto.randomUUID();
  const practiceid = crypto.randomUUID();
  await central.tdb.db('questions').insert({
    questionid,
    questionidentifier: 'Q-apple',
    templatetypeid: 2,
    questionstatus: true,
    questioncorrectvalue: 1,
    questiontext: 'Which is the apple?',
    questionheading: JSON.stringify({ heading: 'Pick' }),
    questionoptions: JSON.stringify([{ option: 'apple', questionoptionfile: { filename: files.picture.name } }]),
    questionfile: JSON.stringify({}),
    questiondistractors: JSON.stringify([]),
    questiontags: JSON.stringify([]),
  });
  await central.tdb
    .db('lessonpractices')
    .insert({
      lessonpracticeid: practiceid,
      lessonid: DEMO.lessonid,
      lessonpracticeorder: 1,
      lessonpracticestatus: true,
      lessonpracticename: 'Practice',
      lessonpracticedescription: '',
      points: 1,
    });
  await central.tdb
    .db('lessonpracticequestions')
    .insert({
      lessonpracticequestionid: crypto.randomUUID(),
      lessonpracticeid: practiceid,
      questionid,
      lessonpracticequestionstatus: true,
      lessonpracticequestionorder: 1,
    });
});

afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await central?.tdb.dispose();
  await classroom?.tdb.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const fromClassroom = (name: string) =>
  request(classroom.app).get(`/media/${name}`).buffer(true).parse((res, cb) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => cb(null, Buffer.concat(parts)));
  });

describe('media from central to the classroom through sync-content', () => {
  it('brings the learning item\'s video and the question option\'s picture to the classroom\'s /media/', async () => {
    await run();
    // The package arrived too: the classroom knows the document the learning item shows.
    expect(await classroom.tdb.db('documents').where({ documentname: files.video.name }).first()).toBeTruthy();
    for (const f of [files.video, files.picture]) {
      const res = await fromClassroom(f.name);
      expect([f.name, res.status]).toEqual([f.name, 200]);
      expect(digest(res.body as Buffer)).toBe(digest(f.bytes));
    }
    const part = await fromClassroom(files.video.name).set('Range', 'bytes=1000-1999');
    expect(part.status).toBe(206);
    expect((part.body as Buffer).equals(files.video.bytes.subarray(1000, 2000))).toBe(true);
    expect(
      mediaAnswers()
        .map((s) => s.path)
        .sort(),
    ).toEqual([`/media/${files.picture.name}`, `/media/${files.video.name}`]);
    expect(log.some((l) => /Media \[\d\/2\] Counting_1\.mp4: .* of 2\.00 MB/.test(l))).toBe(true);
    expect(log).toContain('Media: 2 files transferred (2.04 MB), 0 unchanged');
    expect(JSON.parse(fs.readFileSync(path.join(mediaDir, MANIFEST), 'utf8')).files[files.video.name]).toMatchObject({
      size: files.video.bytes.length,
      md5: digest(files.video.bytes),
    });
  });

  it('transfers nothing the second time', async () => {
    served.length = 0;
    log.length = 0;
    await run();
    expect(served.map((s) => s.status)).toEqual([304, 304]);
    expect(mediaAnswers()).toEqual([]);
    expect(log).toContain('Media: 0 files transferred (0.00 MB), 2 unchanged');
  });

  it('resumes a download cut off halfway, and verifies the whole', async () => {
    await learningItem(await upload(files.story), 2);
    served.length = 0;
    cutNext = { name: files.story.name, after: 1024 * 1024 };
    await expect(run()).rejects.toThrow(/1 media file could not be brought/);
    expect((await fromClassroom(files.story.name)).status).toBe(404);
    const first = served.find((s) => s.path === `/media/${files.story.name}`)!;
    expect(first.bytes).toBeLessThanOrEqual(1024 * 1024);

    served.length = 0;
    log.length = 0;
    await run();
    const resumed = served.find((s) => s.path === `/media/${files.story.name}`)!;
    expect(resumed.status).toBe(206);
    expect(resumed.range).toMatch(/^bytes=\d+-$/);
    expect(resumed.bytes + Number(/\d+/.exec(resumed.range!)![0])).toBe(files.story.bytes.length);
    expect(digest((await fromClassroom(files.story.name)).body as Buffer)).toBe(digest(files.story.bytes));
    expect(log.some((l) => l.includes(`${files.story.name}: resuming after`))).toBe(true);
    expect(fs.readdirSync(path.join(mediaDir, '.partial'))).toEqual([]);
  });

  it('replaces a file changed on central, and only that one', async () => {
    const documentid = (
      await central.tdb.db('documents').where({ documentname: files.picture.name, isdeleted: false }).first()
    ).documentid;
    await request(central.app).delete(`/document/${documentid}`).set('Authorization', `Bearer ${token}`);
    const newer = { name: files.picture.name, bytes: media.png(41_000) };
    await upload(newer);
    served.length = 0;
    await run();
    expect(mediaAnswers().map((s) => s.path)).toEqual([`/media/${files.picture.name}`]);
    expect(digest((await fromClassroom(files.picture.name)).body as Buffer)).toBe(digest(newer.bytes));
  });

  it('does the same offline from the saved media folder, and from a ZIP of it', async () => {
    const pkg = path.join(tmp, 'today.zip');
    await run({ classroom: undefined, syncKey: undefined, save: pkg, mediaDir });
    const offline = path.join(tmp, 'offline-media');
    const offlineLog: string[] = [];
    await syncContent(
      { file: pkg, classroom: classroomUrl, syncKey: SYNC_KEY, mediaFrom: mediaDir, mediaDir: offline },
      (l) => offlineLog.push(l),
    );
    for (const f of [files.video, files.story])
      expect(digest(fs.readFileSync(path.join(offline, f.name)))).toBe(digest(f.bytes));
    const total = files.video.bytes.length + files.story.bytes.length + 41_000;
    expect(offlineLog).toContain(`Media: 3 files transferred (${(total / (1024 * 1024)).toFixed(2)} MB), 0 unchanged`);
    offlineLog.length = 0;
    await syncContent(
      { file: pkg, classroom: classroomUrl, syncKey: SYNC_KEY, mediaFrom: mediaDir, mediaDir: offline },
      (l) => offlineLog.push(l),
    );
    expect(offlineLog).toContain('Media: 0 files transferred (0.00 MB), 3 unchanged');

    // A ZIP of the folder (made by a person with any ZIP tool), into a third folder, then again.
    const zipFile = path.join(tmp, 'media.zip');
    const zip = new yazl.ZipFile();
    for (const name of fs.readdirSync(mediaDir))
      if (fs.statSync(path.join(mediaDir, name)).isFile()) zip.addFile(path.join(mediaDir, name), `media/${name}`);
    zip.end();
    await new Promise<void>((resolve, reject) =>
      zip.outputStream.pipe(fs.createWriteStream(zipFile)).on('close', resolve).on('error', reject),
    );
    const third = path.join(tmp, 'zip-media');
    const once = await mediaFromSaved({ source: zipFile, dir: third });
    expect({ transferred: once.transferred, failed: once.failed }).toEqual({ transferred: 3, failed: [] });
    expect(digest(fs.readFileSync(path.join(third, files.video.name)))).toBe(digest(files.video.bytes));
    const twice = await mediaFromSaved({ source: zipFile, dir: third });
    expect({ transferred: twice.transferred, unchanged: twice.unchanged }).toEqual({ transferred: 0, unchanged: 3 });
  });
});

describe('media names with folders (as the demo names its videos)', () => {
  it('brings demo/<name> from central into a sub-folder the classroom serves, ' +
      'online and from a saved folder or ZIP', async () => {
    const clip = { name: 'demo/Counting_2.mp4', bytes: media.mp4(300_000) };
    const store = createFolderStore({ dir: path.relative(repoRoot, path.join(tmp, 'central-objects')) });
    await store.put(clip.name, clip.bytes, { contentType: 'video/mp4' });
    const documentid = crypto.randomUUID();
    await central.tdb
      .db('documents')
      .insert({ documentid, documentname: clip.name, documenttypeid: 2, isdeleted: false });
    await learningItem(documentid, 3);
    served.length = 0;
    log.length = 0;
    await run();
    expect(mediaAnswers().map((s) => s.path)).toEqual([`/media/${clip.name}`]);
    expect(digest(fs.readFileSync(path.join(mediaDir, 'demo', 'Counting_2.mp4')))).toBe(digest(clip.bytes));
    const res = await fromClassroom(clip.name).set('Range', 'bytes=1000-');
    expect(res.status).toBe(206);
    expect((res.body as Buffer).equals(clip.bytes.subarray(1000))).toBe(true);

    const copy = path.join(tmp, 'folder-copy');
    const fromFolder = await mediaFromSaved({ source: mediaDir, dir: copy });
    expect(fromFolder.failed).toEqual([]);
    expect(digest(fs.readFileSync(path.join(copy, 'demo', 'Counting_2.mp4')))).toBe(digest(clip.bytes));

    const zipFile = path.join(tmp, 'media-folders.zip');
    const zip = new yazl.ZipFile();
    zip.addFile(path.join(mediaDir, MANIFEST), `media/${MANIFEST}`);
    zip.addFile(path.join(mediaDir, 'demo', 'Counting_2.mp4'), 'media/demo/Counting_2.mp4');
    zip.addBuffer(Buffer.from('x'), 'media/.partial/Half.mp4');
    zip.end();
    await new Promise<void>((resolve, reject) =>
      zip.outputStream.pipe(fs.createWriteStream(zipFile)).on('close', resolve).on('error', reject),
    );
    const fromZip = path.join(tmp, 'zip-folder-copy');
    const summary = await mediaFromSaved({ source: zipFile, dir: fromZip });
    expect({ files: summary.files, transferred: summary.transferred, failed: summary.failed }).toEqual({
      files: 1,
      transferred: 1,
      failed: [],
    });
    expect(digest(fs.readFileSync(path.join(fromZip, 'demo', 'Counting_2.mp4')))).toBe(digest(clip.bytes));
    expect(fs.existsSync(path.join(fromZip, '.partial', 'Half.mp4'))).toBe(false);
  });
});
