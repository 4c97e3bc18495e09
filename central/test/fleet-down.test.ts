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
import { hashPassword } from '../src/auth/passwords';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { enrol } from '../../classroom/src/fleet/client';
import { saveIdentity } from '../../classroom/src/fleet/identity';
import { startSyncAgent, type SyncAgent } from '../../classroom/src/fleet/agent';
import { partFile } from '../../classroom/src/fleet/down';

// The down path between the real central and the box's real agent: content and roster changes made at central
// reach the box on its next sync through a relay that can cut or corrupt a download; an unchanged poll fetches
// nothing; a box's credential reaches its own school alone.

const quiet = createLogger({ name: 'test', level: 'silent' });
let central: TestApp;
let box: ClassroomTestApp;
let w: World;
let superadmin: string;
const servers: http.Server[] = [];
let relayUrl = '';
let centralUrl = '';
let dataDir = '';
/** What the relay does to the next body download: cut it half-way, or flip one byte. */
let nextDownload: 'pass' | 'cut' | 'corrupt' = 'pass';
const seen: Array<{ url: string; range?: string; status: number; bytes: number }> = [];

function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

async function relayTo(target: string): Promise<string> {
  const t = new URL(target);
  return listen((req, res) => {
    const body = /^\/fleet\/box\/(package|roster)/.test(req.url ?? '');
    const step = body ? nextDownload : 'pass';
    if (body) nextDownload = 'pass';
    const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method,
      headers: req.headers }, (answer) => {
      const parts: Buffer[] = [];
      answer.on('data', (c: Buffer) => parts.push(c));
      answer.on('end', () => {
        const all = Buffer.concat(parts);
        seen.push({ url: req.url ?? '', range: req.headers.range, status: answer.statusCode ?? 0, bytes: all.length });
        if (step === 'cut') {
          // Headers and half the body, then the link drops.
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

let agent: SyncAgent;
let boxid: string;
let secret: string;
let auth: string;

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

async function centralTeacher(username: string) {
  await central.tdb.db('schoolusers').insert({ schooluserid: crypto.randomUUID(), schoolusername: username,
    schooluserpasswordhash: await hashPassword('teach1'), schooluserrole: 3, schoolname: DEMO.schoolname });
}

beforeAll(async () => {
  central = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemoContent(central.tdb.db);
  w = await seedWorld(central.tdb.db);
  // The box takes its school's content: the curricula offered in its country.
  await central.tdb.db('curriculumcountry').insert({ curriculumcountryid: crypto.randomUUID(),
    curriculumid: DEMO.curriculumid, countryid: DEMO.countryid });
  await createStaff(central.tdb.db, { lmsusername: 'fleet-down@e2e.test', roleids: [ROLE_IDS.superadmin] });
  superadmin = `Bearer ${(await staffLogin(central.app, 'fleet-down@e2e.test')).accessToken}`;
  await addLearner(central.tdb.db, { schoolname: DEMO.schoolname, standard: DEMO.standardid,
    schoolusername: 'kwame', curriculumids: [DEMO.curriculumid] });
  await addLearner(central.tdb.db, { schoolname: w.schoolB.schoolname, standard: w.classB1,
    schoolusername: 'bintou', curriculumids: [w.curriculum1] });
  await centralTeacher('teacher-ama');
  centralUrl = await listen(central.app);
  relayUrl = await relayTo(centralUrl);
  box = await makeClassroomApp();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-down-'));
  const e = await registerAndEnrol(DEMO.schoolid);
  ({ boxid, secret, auth } = e);
  await saveIdentity(box.tdb.db, { centralurl: relayUrl, boxid, schoolid: e.schoolid, secret,
    enrolledat: e.centraltime });
  agent = startSyncAgent(box.tdb.db, { intervalMs: 60_000, pieceRows: 50, requestTimeoutMs: 30_000,
    minBackoffMs: 60_000, maxBackoffMs: 60_000, dataDir }, quiet, { start: false });
}, 120_000);

afterAll(async () => {
  agent?.stop();
  for (const s of servers) await new Promise((r) => s.close(r));
  await central?.tdb.dispose();
  await box?.tdb.dispose();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const login = (username: string, password: string) =>
  request(box.app).post('/auth/login').send({ studentusername: username, studentpassword: password });
const tags = async () => (await request(central.app).get('/fleet/box/state').set('Authorization', auth)).body.data;

describe('the down path', () => {
  it('brings the school\'s content and roster on the first sync; a learner and a teacher sign in', async () => {
    expect((await login('kwame', 'pass1')).status).toBe(400);
    const r = await agent.syncNow();
    expect(r?.down).toMatchObject({ applied: ['package', 'students', 'teachers'], refused: [], unchanged: [] });
    expect(await box.tdb.db('lessons').where('lessonid', DEMO.lessonid).first()).toMatchObject({
      lessonname: DEMO.lessonname });
    expect((await login('kwame', 'pass1')).status).toBe(200);
    expect(await box.tdb.db('schoolusers').where('schoolusername', 'teacher-ama').first()).toMatchObject({
      schooluserrole: 3 });
    // Another school's learner never travels to this box.
    expect(await box.tdb.db('schoolusers').where('schoolusername', 'bintou').first()).toBeUndefined();
    const applied = await box.tdb.db('fleetdown').orderBy('kind');
    const t = await tags();
    expect(applied.map((a: { kind: string; appliedtag: string }) => [a.kind, a.appliedtag])).toEqual([
      ['package', t.package], ['students', t.students], ['teachers', t.teachers]]);
  }, 120_000);

  it('an unchanged poll is one small request and fetches nothing; the bodies answer 304 and Range', async () => {
    seen.length = 0;
    const r = await agent.syncNow();
    expect(r?.down).toMatchObject({ applied: [], refused: [], unchanged: ['package', 'students', 'teachers'],
      bytes: 0 });
    expect(seen.filter((s) => /^\/fleet\/box\/(package|roster)/.test(s.url))).toEqual([]);
    const poll = seen.filter((s) => s.url === '/fleet/box/state');
    expect(poll).toHaveLength(1);
    expect(poll[0].bytes).toBeLessThan(1024);
    const t = await tags();
    const whole = await request(central.app).get('/fleet/box/package').set('Authorization', auth)
      .buffer(true).parse(binary);
    expect(whole.status).toBe(200);
    expect(whole.headers.etag).toBe(`"${t.package}"`);
    expect(crypto.createHash('sha256').update(whole.body as Buffer).digest('hex')).toBe(t.package);
    const not = await request(central.app).get('/fleet/box/package').set('Authorization', auth)
      .set('If-None-Match', `"${t.package}"`);
    expect(not.status).toBe(304);
    const part = await request(central.app).get('/fleet/box/package').set('Authorization', auth)
      .set('Range', 'bytes=10-').buffer(true).parse(binary);
    expect(part.status).toBe(206);
    expect(Buffer.compare(part.body as Buffer, (whole.body as Buffer).subarray(10))).toBe(0);
  }, 120_000);

  it('a content change reaches the box; a download cut half-way resumes with Range', async () => {
    await central.tdb.db('lessons').where('lessonid', DEMO.lessonid).update({ lessonname: 'Counting to twenty' });
    seen.length = 0;
    nextDownload = 'cut';
    const downBefore = (await request(central.app).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin))
      .body.data.lastdownat as string;
    expect(downBefore).not.toBeNull();
    await expect(agent.syncNow()).rejects.toThrow();
    // Central served half a package: the box applied nothing, and central's record of its last down stands.
    expect((await request(central.app).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin))
      .body.data.lastdownat).toBe(downBefore);
    expect(fs.statSync(partFile(dataDir, 'package')).size).toBeGreaterThan(0);
    expect((await box.tdb.db('lessons').where('lessonid', DEMO.lessonid).first()).lessonname)
      .toBe(DEMO.lessonname);
    const r = await agent.syncNow();
    expect(r?.down?.applied).toEqual(['package']);
    const resumed = seen.filter((s) => s.url === '/fleet/box/package');
    expect(resumed).toHaveLength(2);
    expect(resumed[1]).toMatchObject({ status: 206, range: expect.stringMatching(/^bytes=[1-9]\d*-$/) });
    expect((await box.tdb.db('lessons').where('lessonid', DEMO.lessonid).first()).lessonname)
      .toBe('Counting to twenty');
    expect((await box.tdb.db('fleetdown').where('kind', 'package').first()).appliedtag).toBe((await tags()).package);
    expect(fs.existsSync(partFile(dataDir, 'package'))).toBe(false);
    const after = (await request(central.app).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin)).body.data;
    expect(Date.parse(after.lastdownat as string)).toBeGreaterThan(Date.parse(downBefore));
    expect(after.lastdownbytes).toBe(r?.down?.bytes);
  }, 120_000);

  it('a corrupted download is not applied, and is fetched again whole', async () => {
    await central.tdb.db('lessons').where('lessonid', DEMO.lessonid).update({ lessonname: 'Counting to thirty' });
    nextDownload = 'corrupt';
    await expect(agent.syncNow()).rejects.toThrow(/does not match its version/);
    expect((await box.tdb.db('lessons').where('lessonid', DEMO.lessonid).first()).lessonname)
      .toBe('Counting to twenty');
    const r = await agent.syncNow();
    expect(r?.down?.applied).toEqual(['package']);
    expect((await box.tdb.db('lessons').where('lessonid', DEMO.lessonid).first()).lessonname)
      .toBe('Counting to thirty');
  }, 120_000);

  it('a new learner and a new teacher at central reach the box on its next sync', async () => {
    await addLearner(central.tdb.db, { schoolname: DEMO.schoolname, standard: DEMO.standardid,
      schoolusername: 'efua', curriculumids: [DEMO.curriculumid] });
    await centralTeacher('teacher-kojo');
    expect((await login('efua', 'pass1')).status).toBe(400);
    const r = await agent.syncNow();
    expect(r?.down?.applied).toEqual(['students', 'teachers']);
    expect((await login('efua', 'pass1')).status).toBe(200);
    expect(await box.tdb.db('schoolusers').where('schoolusername', 'teacher-kojo').first()).toMatchObject({
      schooluserrole: 3 });
  }, 120_000);

  it('a package that drops a lesson a learner is on is refused, reported at central, and not retried', async () => {
    const lessonid = crypto.randomUUID();
    await central.tdb.db('lessons').insert({ lessonid, levelid: DEMO.levelid, lessonname: 'Counting back',
      lessonorder: 2, lessonstatus: true });
    expect((await agent.syncNow())?.down?.applied).toEqual(['package']);
    await box.tdb.db('students').whereIn('schooluserid',
      box.tdb.db('schoolusers').where('schoolusername', 'kwame').select('schooluserid'))
      .update({ studentcurrentlessonid: lessonid });
    await central.tdb.db('lessons').where({ lessonid }).delete();
    const refused = await agent.syncNow();
    expect(refused?.down).toMatchObject({ applied: [], refused: ['package'] });
    expect(await box.tdb.db('lessons').where({ lessonid }).first()).toBeDefined();
    const atCentral = await request(central.app).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin);
    expect(atCentral.body.data.lasterror).toMatch(/refused the curriculum package/);
    expect(atCentral.body.data.lasterror).toContain(`lesson ${lessonid} (kwame)`);
    // The same version is not fetched again; the refusal stays the box's last error at each contact.
    seen.length = 0;
    expect((await agent.syncNow())?.down).toMatchObject({ refused: [], unchanged: ['package', 'students',
      'teachers'] });
    expect(seen.filter((x) => x.url === '/fleet/box/package' || x.url === '/fleet/box/report')).toEqual([]);
    expect((await request(central.app).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin))
      .body.data.lasterror).toMatch(/refused the curriculum package.*kwame/);
    // A new version (the learner moved at central's side: the lesson is back) is fetched and applied.
    await central.tdb.db('lessons').insert({ lessonid, levelid: DEMO.levelid, lessonname: 'Counting back again',
      lessonorder: 2, lessonstatus: true });
    expect((await agent.syncNow())?.down?.applied).toEqual(['package']);
    expect((await box.tdb.db('fleetdown').where('kind', 'package').first()).refusedtag).toBeNull();
    // Central hears that the refusal is over at the box's next contact.
    await agent.syncNow();
    expect((await request(central.app).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin))
      .body.data.lasterror).toBeNull();
  }, 120_000);

  it('a school id in the query or body is ignored: the box gets its own school, never another', async () => {
    const own = await request(central.app).get('/fleet/box/roster/students').set('Authorization', auth)
      .buffer(true).parse(binary);
    const other = await request(central.app).get('/fleet/box/roster/students')
      .query({ schoolid: w.schoolB.schoolid, schoolname: w.schoolB.schoolname }).set('Authorization', auth)
      .buffer(true).parse(binary);
    expect([other.status, other.headers.etag]).toEqual([200, own.headers.etag]);
    expect((other.body as Buffer).includes('bintou')).toBe(false);
    const b = await registerAndEnrol(w.schoolB.schoolid);
    const theirs = await request(central.app).get('/fleet/box/state').set('Authorization', b.auth);
    expect(theirs.body.data.students).not.toBe((await tags()).students);
  }, 120_000);

  it('refuses staff tokens, no credential, and a revoked box', async () => {
    for (const p of ['/fleet/box/state', '/fleet/box/package', '/fleet/box/roster/students',
      '/fleet/box/roster/teachers']) {
      expect((await request(central.app).get(p).set('Authorization', superadmin)).status).toBe(401);
      expect((await request(central.app).get(p)).status).toBe(401);
    }
    const b = await registerAndEnrol(DEMO.schoolid);
    expect((await request(central.app).get('/fleet/box/state').set('Authorization', b.auth)).status).toBe(200);
    const rev = await request(central.app).post(`/fleet/boxes/${b.boxid}/revoke`).set('Authorization', superadmin);
    expect(rev.status).toBe(200);
    expect((await request(central.app).get('/fleet/box/package').set('Authorization', b.auth)).status).toBe(401);
  }, 120_000);
});

function binary(res: import('node:http').IncomingMessage, cb: (err: Error | null, body: Buffer) => void) {
  const parts: Buffer[] = [];
  res.on('data', (c: Buffer) => parts.push(c));
  res.on('end', () => cb(null, Buffer.concat(parts)));
}
