import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { ROLE_IDS, boxAuthorization, createLogger, newBoxSecret } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { addLearner, seedWorld, type World } from './people-fixtures';
import { createFolderStore, type ObjectStore } from '../src/objects';
import { bodyBuilds } from '../src/areas/fleet/down';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { enrol } from '../../classroom/src/fleet/client';
import { saveIdentity } from '../../classroom/src/fleet/identity';
import { startSyncAgent, type SyncAgent } from '../../classroom/src/fleet/agent';
import { mediaPartFile } from '../../classroom/src/fleet/down';

// The media of the down path between the real central (folder object store) and the box's real agent, through
// a relay that can cut or corrupt a media download; the record of the box's last down; and the poll's tag, kept
// per school and moved by triggers, so that an unchanged school's poll builds nothing.

const quiet = createLogger({ name: 'test', level: 'silent' });
let central: TestApp;
let box: ClassroomTestApp;
let objects: ObjectStore;
let w: World;
let superadmin: string;
const servers: http.Server[] = [];
let centralUrl = '';
let relayUrl = '';
const dirs: string[] = [];
let dataDir = '';
let mediaDir = '';
let nextMedia: 'pass' | 'cut' | 'corrupt' = 'pass';
/** The next applied report is lost on the way (the link drops before central sees it). */
let dropApplied = false;
const seen: Array<{ url: string; range?: string; status: number; bytes: number; requestBytes: number }> = [];

function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

async function relayTo(target: string): Promise<string> {
  const t = new URL(target);
  return listen((req, res) => {
    if (dropApplied && req.url === '/fleet/box/applied') {
      dropApplied = false;
      req.socket.destroy();
      return;
    }
    const file = (req.url ?? '').startsWith('/fleet/box/media/file');
    const step = file ? nextMedia : 'pass';
    if (file) nextMedia = 'pass';
    const requestBytes = `${req.method} ${req.url} HTTP/1.1\r\n`.length +
      req.rawHeaders.reduce((n, h, i) => n + h.length + (i % 2 ? 2 : 2), 0);
    const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method,
      headers: req.headers }, (answer) => {
      const parts: Buffer[] = [];
      answer.on('data', (c: Buffer) => parts.push(c));
      answer.on('end', () => {
        const all = Buffer.concat(parts);
        const headerBytes = answer.rawHeaders.reduce((n, h) => n + h.length + 2, 0);
        seen.push({ url: req.url ?? '', range: req.headers.range, status: answer.statusCode ?? 0,
          bytes: all.length + headerBytes, requestBytes });
        if (step === 'cut') {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.write(all.subarray(0, Math.floor(all.length / 2)), () => res.socket?.destroy());
          return;
        }
        if (step === 'corrupt' && all.length) all[Math.floor(all.length / 2)] ^= 0xff;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(all);
      });
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
}

const tmp = (prefix: string) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const bytes = (n: number, seed: string) => {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i += 32) crypto.createHash('sha256').update(`${seed}${i}`).digest().copy(out, i);
  return out;
};

async function registerAndEnrol(schoolid: string) {
  const reg = await request(central.app).post('/fleet/boxes').set('Authorization', superadmin)
    .send({ schoolid, name: `Box ${crypto.randomBytes(3).toString('hex')}` });
  expect(reg.status).toBe(201);
  const s = newBoxSecret();
  const answer = await enrol(centralUrl, reg.body.data.enrolmentcode as string, { secret: s, version: '1.0.0' },
    { timeoutMs: 30_000 });
  return { boxid: answer.boxid, secret: s, schoolid: answer.schoolid, centraltime: answer.centraltime,
    auth: boxAuthorization(answer.boxid, s) };
}

/** A document at central, in the store and as a learning document of a lesson. */
async function addDocument(lessonid: string, name: string, body: Buffer): Promise<string> {
  await objects.put(name, body, { contentType: 'application/octet-stream' });
  const documentid = crypto.randomUUID();
  await central.tdb.db('documents').insert({ documentid, documenttypeid: 1, documentname: name });
  const lessonlearningid = crypto.randomUUID();
  await central.tdb.db('lessonlearnings').insert({ lessonlearningid, lessonlearningname: name,
    lessonlearningdescription: '', lessonid, documentid, lessonlearningorder: 1 });
  return lessonlearningid;
}

/** What a document replaced at central amounts to: new bytes under the name, its row rewritten. */
async function replaceDocument(name: string, body: Buffer) {
  await objects.put(name, body, { contentType: 'application/octet-stream' });
  await central.tdb.db('documents').where({ documentname: name }).update({ updated_at: new Date().toISOString() });
}

/** The box's media folder: every file (but the waiting partial ones) with its bytes. */
function boxFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(mediaDir, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) walk(name);
      else out[name] = sha(fs.readFileSync(path.join(mediaDir, name)));
    }
  };
  walk('');
  return out;
}

let agent: SyncAgent;
let boxid: string;
let auth: string;
let clip = bytes(300_000, 'clip-1');
const picture = bytes(2_000, 'picture');
let pictureLearning = '';
let otherAuth = '';

const boxView = async () =>
  (await request(central.app).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin)).body.data;
const tags = async (a = auth) => (await request(central.app).get('/fleet/box/state').set('Authorization', a)).body.data;
const expectBoxMediaAsCentral = async () => {
  const list = (await request(central.app).get('/fleet/box/media').set('Authorization', auth)).body.data;
  expect(boxFiles()).toEqual(Object.fromEntries(
    (list.files as Array<{ name: string; sha256: string }>).map((f) => [f.name, f.sha256])));
};

beforeAll(async () => {
  objects = createFolderStore({ dir: tmp('lms-objects-') });
  central = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' }, undefined, { objects });
  await seedDemoContent(central.tdb.db);
  w = await seedWorld(central.tdb.db);
  await central.tdb.db('curriculumcountry').insert([
    { curriculumcountryid: crypto.randomUUID(), curriculumid: DEMO.curriculumid, countryid: DEMO.countryid },
    { curriculumcountryid: crypto.randomUUID(), curriculumid: w.curriculum1, countryid: w.countryY },
  ]);
  // The other school's curriculum, with a file of its own.
  const [gradeid, levelid, lessonid] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  await central.tdb.db('grades').insert({ gradeid, curriculumid: w.curriculum1, gradename: 'G', gradeorder: 1,
    gradestatus: true });
  await central.tdb.db('levels').insert({ levelid, gradeid, levelname: 'L', levelorder: 1, levelstatus: true });
  await central.tdb.db('lessons').insert({ lessonid, levelid, lessonname: 'Letters', lessonorder: 1,
    lessonstatus: true });
  await addDocument(lessonid, 'letters.png', bytes(1_000, 'letters'));
  await addDocument(DEMO.lessonid, 'counting.mp4', clip);
  pictureLearning = await addDocument(DEMO.lessonid, 'demo/apples.png', picture);
  // In the store, but no lesson uses it.
  await objects.put('unused.png', bytes(500, 'unused'));
  await createStaff(central.tdb.db, { lmsusername: 'fleet-media@e2e.test', roleids: [ROLE_IDS.superadmin] });
  superadmin = `Bearer ${(await staffLogin(central.app, 'fleet-media@e2e.test')).accessToken}`;
  await addLearner(central.tdb.db, { schoolname: DEMO.schoolname, standard: DEMO.standardid,
    schoolusername: 'kwame', curriculumids: [DEMO.curriculumid] });
  await addLearner(central.tdb.db, { schoolname: w.schoolB.schoolname, standard: w.classB1,
    schoolusername: 'bintou', curriculumids: [w.curriculum1] });
  centralUrl = await listen(central.app);
  relayUrl = await relayTo(centralUrl);
  dataDir = tmp('lms-down-data-');
  mediaDir = tmp('lms-down-media-');
  box = await makeClassroomApp({ MEDIA_DIR: mediaDir });
  const e = await registerAndEnrol(DEMO.schoolid);
  ({ boxid, auth } = e);
  await saveIdentity(box.tdb.db, { centralurl: relayUrl, boxid, schoolid: e.schoolid, secret: e.secret,
    enrolledat: e.centraltime });
  otherAuth = (await registerAndEnrol(w.schoolB.schoolid)).auth;
  agent = startSyncAgent(box.tdb.db, { intervalMs: 60_000, pieceRows: 50, requestTimeoutMs: 30_000,
    minBackoffMs: 60_000, maxBackoffMs: 60_000, dataDir, mediaDir }, quiet, { start: false });
}, 120_000);

afterAll(async () => {
  agent?.stop();
  for (const s of servers) await new Promise((r) => s.close(r));
  await central?.tdb.dispose();
  await box?.tdb.dispose();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('media on the down path', () => {
  it('lists the school\'s files with SHA-256 and size; the box fetches them; central records the applied down',
    async () => {
      expect((await boxView()).lastdownat).toBeNull();
      const list = await request(central.app).get('/fleet/box/media').set('Authorization', auth);
      expect(list.status).toBe(200);
      expect(list.body.data.files).toEqual([
        { name: 'counting.mp4', sha256: sha(clip), size: clip.length },
        { name: 'demo/apples.png', sha256: sha(picture), size: picture.length },
      ]);
      expect(list.body.data.tag).toBe((await tags()).media);
      const r = await agent.syncNow();
      // The school has no teacher accounts: no teacher roster.
      expect(r?.down).toMatchObject({ applied: ['package', 'students', 'media'], refused: [],
        unchanged: ['teachers'] });
      expect(r?.down?.media.fetched.sort()).toEqual(['counting.mp4', 'demo/apples.png']);
      await expectBoxMediaAsCentral();
      // Served by the classroom to the tablets, as media copied in by hand are.
      const served = await request(box.app).get('/media/demo/apples.png').buffer(true).parse(binary);
      expect([served.status, sha(served.body as Buffer)]).toEqual([200, sha(picture)]);
      const v = await boxView();
      expect(v.lastdownat).not.toBeNull();
      expect(v.lastdownbytes).toBe(r?.down?.bytes);
      expect(v.lastdownbytes).toBeGreaterThan(clip.length + picture.length);
      expect(await box.tdb.db('fleetdownreport').first()).toBeUndefined();
    }, 120_000);

  it('a media download cut half-way is never served half, resumes with Range, and only then counts as down',
    async () => {
      const before = (await boxView()).lastdownat as string;
      const lastTimes = await box.tdb.db('fleetdown').where({ kind: 'media' }).first();
      clip = bytes(300_000, 'clip-2');
      await replaceDocument('counting.mp4', clip);
      seen.length = 0;
      nextMedia = 'cut';
      await expect(agent.syncNow()).rejects.toThrow(/media file.*could not be fetched/);
      expect(fs.statSync(mediaPartFile(mediaDir, 'counting.mp4')).size).toBeGreaterThan(0);
      // The tablets still get the whole previous version.
      expect(sha(fs.readFileSync(path.join(mediaDir, 'counting.mp4')))).toBe(sha(bytes(300_000, 'clip-1')));
      // The package (its document row changed) applied in that run, the new file not yet: it is not listed.
      expect((await box.tdb.db('fleetmedia').where({ name: 'counting.mp4' }).first()).sha256)
        .toBe(sha(bytes(300_000, 'clip-1')));
      const r = await agent.syncNow();
      expect(r?.down?.media.fetched).toEqual(['counting.mp4']);
      const fetches = seen.filter((s) => s.url.startsWith('/fleet/box/media/file'));
      expect(fetches).toHaveLength(2);
      expect(fetches[1]).toMatchObject({ status: 206, range: expect.stringMatching(/^bytes=[1-9]\d*-$/) });
      await expectBoxMediaAsCentral();
      expect(fs.existsSync(mediaPartFile(mediaDir, 'counting.mp4'))).toBe(false);
      expect(Date.parse((await boxView()).lastdownat as string)).toBeGreaterThan(Date.parse(before));
      expect((await box.tdb.db('fleetdown').where({ kind: 'media' }).first()).appliedtag)
        .not.toBe(lastTimes.appliedtag);
    }, 120_000);

  it('a corrupted media file is refused and fetched again whole', async () => {
    const old = clip;
    clip = bytes(300_000, 'clip-3');
    await replaceDocument('counting.mp4', clip);
    seen.length = 0;
    nextMedia = 'corrupt';
    await expect(agent.syncNow()).rejects.toThrow(/does not match its SHA-256/);
    expect(sha(fs.readFileSync(path.join(mediaDir, 'counting.mp4')))).toBe(sha(old));
    expect(fs.existsSync(mediaPartFile(mediaDir, 'counting.mp4'))).toBe(false);
    const r = await agent.syncNow();
    expect(r?.down?.media.fetched).toEqual(['counting.mp4']);
    const again = seen.filter((s) => s.url.startsWith('/fleet/box/media/file'));
    expect(again.map((s) => [s.status, s.range])).toEqual([[200, undefined], [200, undefined]]);
    await expectBoxMediaAsCentral();
  }, 120_000);

  it('a file the package no longer references is removed once the package applied; a lost report is resent',
    async () => {
      await central.tdb.db('lessonlearnings').where({ lessonlearningid: pictureLearning }).delete();
      const before = (await boxView()).lastdownat as string;
      dropApplied = true;
      await expect(agent.syncNow()).rejects.toThrow(/could not be reached/);
      expect(fs.existsSync(path.join(mediaDir, 'demo', 'apples.png'))).toBe(false);
      await expectBoxMediaAsCentral();
      expect(await box.tdb.db('fleetmedia').pluck('name')).toEqual(['counting.mp4']);
      // Applied on the box, not yet heard of at central: kept, and sent with the next run.
      expect(await box.tdb.db('fleetdownreport').first()).toBeDefined();
      expect((await boxView()).lastdownat).toBe(before);
      const r = await agent.syncNow();
      expect(r?.down).toMatchObject({ applied: [], media: { fetched: [], removed: [] } });
      expect(Date.parse((await boxView()).lastdownat as string)).toBeGreaterThan(Date.parse(before));
      expect(await box.tdb.db('fleetdownreport').first()).toBeUndefined();
    }, 120_000);

  it('while the box keeps a package it refused, the files that package uses stay', async () => {
    const lessonid = crypto.randomUUID();
    await central.tdb.db('lessons').insert({ lessonid, levelid: DEMO.levelid, lessonname: 'Counting back',
      lessonorder: 2, lessonstatus: true });
    const back = bytes(1_500, 'back');
    const learning = await addDocument(lessonid, 'back.png', back);
    expect((await agent.syncNow())?.down?.media.fetched).toEqual(['back.png']);
    await box.tdb.db('students').whereIn('schooluserid',
      box.tdb.db('schoolusers').where('schoolusername', 'kwame').select('schooluserid'))
      .update({ studentcurrentlessonid: lessonid });
    await central.tdb.db('lessonlearnings').where({ lessonlearningid: learning }).delete();
    await central.tdb.db('lessons').where({ lessonid }).delete();
    const refused = await agent.syncNow();
    expect(refused?.down).toMatchObject({ refused: ['package'], media: { removed: [] } });
    expect(sha(fs.readFileSync(path.join(mediaDir, 'back.png')))).toBe(sha(back));
    // The learner moved on at the box; central's next version applies, and only then does the file go.
    await box.tdb.db('students').update({ studentcurrentlessonid: null });
    await central.tdb.db('lessons').where('lessonid', DEMO.lessonid).update({ lessonname: 'Counting, once more' });
    const applied = await agent.syncNow();
    expect(applied?.down).toMatchObject({ applied: ['package', 'media'], media: { removed: ['back.png'] } });
    expect(fs.existsSync(path.join(mediaDir, 'back.png'))).toBe(false);
    await expectBoxMediaAsCentral();
  }, 120_000);

  it('serves a file with its SHA-256 as ETag, Range and If-Range; another school\'s file is 404', async () => {
    const file = (a: string, name: string) => request(central.app).get('/fleet/box/media/file').query({ name })
      .set('Authorization', a).buffer(true).parse(binary);
    const whole = await file(auth, 'counting.mp4');
    expect([whole.status, whole.headers.etag, sha(whole.body as Buffer)]).toEqual([200, `"${sha(clip)}"`, sha(clip)]);
    const part = await request(central.app).get('/fleet/box/media/file').query({ name: 'counting.mp4' })
      .set('Authorization', auth).set('Range', 'bytes=100-').set('If-Range', `"${sha(clip)}"`)
      .buffer(true).parse(binary);
    expect(part.status).toBe(206);
    expect(Buffer.compare(part.body as Buffer, clip.subarray(100))).toBe(0);
    const stale = await request(central.app).get('/fleet/box/media/file').query({ name: 'counting.mp4' })
      .set('Authorization', auth).set('Range', 'bytes=100-').set('If-Range', `"${sha(Buffer.from('old'))}"`)
      .buffer(true).parse(binary);
    expect([stale.status, (stale.body as Buffer).length]).toEqual([200, clip.length]);
    // Another school's file, one in the store that no lesson uses, one no longer used, one that does not exist.
    for (const name of ['letters.png', 'unused.png', 'demo/apples.png', 'nothing.png', '../x.png']) {
      const r = await request(central.app).get('/fleet/box/media/file').query({ name }).set('Authorization', auth);
      expect([name, r.status, r.body.error]).toEqual([name, 404, true]);
    }
    // The other school's box gets its own file, and not this school's.
    expect((await file(otherAuth, 'letters.png')).status).toBe(200);
    expect((await file(otherAuth, 'counting.mp4')).status).toBe(404);
    const theirs = await request(central.app).get('/fleet/box/media').set('Authorization', otherAuth);
    expect(theirs.body.data.files.map((f: { name: string }) => f.name)).toEqual(['letters.png']);
    // Wrong credentials and bad input.
    expect((await request(central.app).get('/fleet/box/media').set('Authorization', superadmin)).status).toBe(401);
    expect((await request(central.app).get('/fleet/box/media/file').query({ name: 'counting.mp4' })).status)
      .toBe(401);
    const long = await request(central.app).get('/fleet/box/media/file').query({ name: `${'a'.repeat(400)}.png` })
      .set('Authorization', auth);
    expect([long.status, long.body.error]).toEqual([400, true]);
  }, 120_000);

  it('refuses an applied report of another protocol, a bad tag or oversize body, and records nothing', async () => {
    const before = await boxView();
    const post = (body: unknown) => request(central.app).post('/fleet/box/applied').set('Authorization', auth)
      .send(body as object);
    const tag = 'a'.repeat(64);
    for (const body of [
      { protocol: 2, applied: [{ kind: 'package', tag }], bytes: 1 },
      { protocol: 1, applied: [{ kind: 'package', tag: 'xyz' }], bytes: 1 },
      { protocol: 1, applied: [], bytes: 1 },
      { protocol: 1, applied: [{ kind: 'package', tag }], bytes: -1 },
      { protocol: 1, applied: [{ kind: 'package', tag }], bytes: 1, schoolid: w.schoolB.schoolid },
      { protocol: 1, applied: [{ kind: 'package', tag }], bytes: 1, pad: 'x'.repeat(5000) },
    ]) {
      const r = await post(body);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.body).toMatchObject({ error: true, data: false });
    }
    expect((await request(central.app).post('/fleet/box/applied').set('Authorization', superadmin)
      .send({ protocol: 1, applied: [{ kind: 'package', tag }], bytes: 1 })).status).toBe(401);
    const after = await boxView();
    expect([after.lastdownat, after.lastdownbytes]).toEqual([before.lastdownat, before.lastdownbytes]);
  }, 120_000);
});

describe('the poll\'s tag', () => {
  it('an unchanged school\'s poll builds no body and stays under 1 KB each way', async () => {
    await tags();
    const built = bodyBuilds();
    seen.length = 0;
    const r = await agent.syncNow();
    expect(r?.down).toMatchObject({ applied: [], unchanged: ['media', 'package', 'students', 'teachers'] });
    expect(bodyBuilds()).toBe(built);
    const poll = seen.filter((s) => s.url === '/fleet/box/state');
    expect(poll).toHaveLength(1);
    expect(poll[0].bytes).toBeLessThan(1024);
    expect(poll[0].requestBytes).toBeLessThan(1024);
    expect(seen.map((s) => s.url).filter((u) => u.startsWith('/fleet/box/') && u !== '/fleet/box/state' &&
      u !== '/fleet/box/contact')).toEqual([]);
  }, 120_000);

  it('a content change through a staff route moves the tag; so does a write from outside this process', async () => {
    const t0 = await tags();
    const off = await request(central.app).put(`/lesson/deactivate/${DEMO.lessonid}`).set('Authorization', superadmin);
    expect(off.status).toBe(200);
    const t1 = await tags();
    expect(t1.package).not.toBe(t0.package);
    // A second instance, a script or a migration writes to the same database: no process is told, the tag moves.
    const built = bodyBuilds();
    await central.tdb.db('lessons').where('lessonid', DEMO.lessonid).update({ lessonname: 'Counting, again' });
    const t2 = await tags();
    expect(t2.package).not.toBe(t1.package);
    expect(bodyBuilds()).toBeGreaterThan(built);
    // A second central instance on the same database takes the write; the first, asked next, answers the new tag.
    const second = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' }, central.tdb, { objects });
    expect((await request(second.app).put(`/lesson/activate/${DEMO.lessonid}`).set('Authorization', superadmin))
      .status).toBe(200);
    const t3 = await tags();
    expect(t3.package).not.toBe(t2.package);
    expect((await request(second.app).get('/fleet/box/state').set('Authorization', auth)).body.data).toEqual(t3);
  }, 120_000);

  it('a roster change moves that school\'s tag alone: another school\'s poll builds nothing', async () => {
    const mine = await tags();
    const theirs = await tags(otherAuth);
    await addLearner(central.tdb.db, { schoolname: w.schoolB.schoolname, standard: w.classB1,
      schoolusername: 'awa', curriculumids: [w.curriculum1] });
    const built = bodyBuilds();
    expect(await tags()).toEqual(mine);
    expect(bodyBuilds()).toBe(built);
    expect((await tags(otherAuth)).students).not.toBe(theirs.students);
    // Renaming the learner moves it again; so does deleting the row.
    const mid = await tags(otherAuth);
    await central.tdb.db('schoolusers').where('schoolusername', 'awa').update({ schooluserstatus: false });
    const next = await tags(otherAuth);
    expect(next.students).not.toBe(mid.students);
    expect(await tags()).toEqual(mine);
  }, 120_000);
});

function binary(res: import('node:http').IncomingMessage, cb: (err: Error | null, body: Buffer) => void) {
  const parts: Buffer[] = [];
  res.on('data', (c: Buffer) => parts.push(c));
  res.on('end', () => cb(null, Buffer.concat(parts)));
}
