import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, silentLogger, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { seedWorld, type World } from './people-fixtures';
import { createApp as createClassroomApp } from '../../classroom/src/app';
import { startSyncAgent, type SyncAgent } from '../../classroom/src/fleet/agent';
import { hashPassword } from '../../classroom/src/auth/passwords';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { tokenFor } from '../../classroom/test/auth-helpers';

// The box's teacher page shows the box's own sync state, in a real Chromium, against a real central in this
// process: a teacher enrols the box with a code from central's fleet page, presses "Sync now" and reads
// "0 changes waiting" only once central acknowledged; with central gone the page shows the error in words
// and never says the box is in step.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
const PASSWORD = 'demo-teacher-1';

let central: TestApp;
let w: World;
let superadmin: string;
let room: ClassroomTestApp;
let agent: SyncAgent;
let browser: Browser;
let tmp: string;
const servers: http.Server[] = [];
let centralServer: http.Server;
let roomOrigin: string;
let linkOrigin: string;
let teacher: { schoolusername: string };
let learner: { studentid: string; schooluserid: string; token: string };
/** Pieces of activity held on their way to central until released (central has not acknowledged them yet). */
let holdPieces = false;
const held: Array<() => void> = [];

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The box's link to central: a relay that can hold the activity pieces, and that can be cut off. */
function relayTo(target: string): http.RequestListener {
  return (req, res) => {
    const go = () => {
      const up = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => req.socket.destroy());
      req.pipe(up);
    };
    if (holdPieces && req.url?.startsWith('/fleet/box/log')) held.push(go);
    else go();
  };
}

async function sameLearnerAtCentral(studentid: string, schooluserid: string): Promise<void> {
  const schoolusername = `l${crypto.randomBytes(4).toString('hex')}`;
  await central.tdb.db('schoolusers').insert({ schooluserid, schoolusername, schooluserpasswordhash: 'x',
    schooluserrole: 4, schoolname: w.schoolA.schoolname });
  await central.tdb.db('students').insert({ studentid, schooluserid, studentfirstname: 'Ama', studentlastname: 'B',
    genderid: 1, city: 'Accra', country: 'Ghana', state: 'GA', schoolname: w.schoolA.schoolname,
    curriculumid: w.curriculum1, curriculumids: JSON.stringify([w.curriculum1]), isactive: true, type: 'offline' });
}

/** A learner's result written on the box, as the learner app's quiz submission writes it. */
async function resultOnBox(): Promise<string> {
  const id = crypto.randomUUID();
  const at = new Date().toISOString();
  await room.tdb.db('studentprogress').insert({ studentprogressid: id, studentid: learner.studentid, ispass: true,
    studentprogressreferenceid: crypto.randomUUID(), starttime: at, endtime: at, progresstype: 1, points: 3,
    fullpoints: 10, marks: 3, scores: 3, resultpercentage: 30 });
  return id;
}

const waitingOnBox = async () => Number((await room.tdb.db('fleetchanges').count({ n: '*' }).first())?.n);

beforeAll(async () => {
  await fsp.access(CHROMIUM).catch(() => {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (bash scripts/ci/ensure-chromium.sh, as root)`);
  });
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-e2e-box-page-'));
  central = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000', RATE_LIMIT_MAX: '100000' });
  w = await seedWorld(central.tdb.db);
  await createStaff(central.tdb.db, { lmsusername: 'box-page@e2e.test', roleids: [ROLE_IDS.superadmin] });
  superadmin = `Bearer ${(await staffLogin(central.app, 'box-page@e2e.test')).accessToken}`;
  const c = await listen(central.app);
  centralServer = c.server;
  linkOrigin = (await listen(relayTo(c.origin))).origin;

  room = await makeClassroomApp({ DATA_DIR: tmp, LOG_DIR: path.join(tmp, 'logs') });
  teacher = await tokenFor(room, 3, { schoolname: w.schoolA.schoolname, passwordhash: await hashPassword(PASSWORD) });
  const l = await tokenFor(room, 4, { schoolname: w.schoolA.schoolname });
  learner = { studentid: l.studentid!, schooluserid: l.schooluserid, token: l.token };
  await sameLearnerAtCentral(learner.studentid, learner.schooluserid);
  agent = startSyncAgent(room.tdb.db, { intervalMs: 3_600_000, pieceRows: 500, requestTimeoutMs: 10_000,
    minBackoffMs: 3_600_000, maxBackoffMs: 3_600_000, dataDir: tmp }, silentLogger, { start: false });
  roomOrigin = (await listen(createClassroomApp(room.config, { db: room.tdb.db, logger: silentLogger, agent }))).origin;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 120_000);

afterAll(async () => {
  agent?.stop();
  await browser?.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await central?.tdb.dispose();
  await room?.tdb.dispose();
  if (tmp) await fsp.rm(tmp, { recursive: true, force: true });
});

async function signIn(page: Page): Promise<void> {
  await page.goto(`${roomOrigin}/sync-log/`);
  await page.locator('#user').fill(teacher.schoolusername);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#signin button[type=submit]').click();
  await page.locator('#work').waitFor({ state: 'visible' });
}

const text = (page: Page, sel: string) => page.locator(sel).textContent();

describe("the box's sync state on its teacher page", () => {
  it('a teacher enrols the box with a code from central, presses Sync now, ' +
      'and reads 0 waiting only after central acknowledged', async () => {
    const resultid = await resultOnBox();
    expect(await waitingOnBox()).toBeGreaterThan(0);
    const ctx = await browser.newContext({ locale: 'en-US' });
    const page = await ctx.newPage();
    await signIn(page);
    await expect.poll(() => text(page, '#sync-headline')).toBe('This box is not enrolled at central: ' +
      'its activity goes up only when a teacher carries the log file.');
    expect(await page.locator('#sync-now').isHidden()).toBe(true);
    await page.locator('#enrol').waitFor({ state: 'visible' });

    // A wrong code: central's words, and nothing stored on the box.
    await page.locator('#e-central').fill(linkOrigin);
    await page.locator('#e-code').fill('AAAAA-BBBBB');
    await page.locator('#e-button').click();
    await expect.poll(() => text(page, '#enrol-status')).toBe('Not enrolled: The enrolment code is wrong, ' +
      'expired or already used: ask central for a new code');
    expect(await room.tdb.db('fleetidentity').first()).toBeUndefined();

    const reg = await request(central.app).post('/fleet/boxes').set('Authorization', superadmin)
      .send({ schoolid: w.schoolA.schoolid, name: 'Teacher page box' });
    expect(reg.status).toBe(201);
    const boxid = reg.body.data.box.boxid as string;
    // Central holds the activity's acknowledgement back until released.
    holdPieces = true;
    await page.locator('#e-code').fill((reg.body.data.enrolmentcode as string).toLowerCase());
    await page.locator('#e-button').click();
    await expect.poll(() => text(page, '#enrol-status')).toBe('Enrolled at central as a box of Accra Primary.');
    expect(await room.tdb.db('fleetidentity').first('boxid', 'schoolid'))
      .toEqual({ boxid, schoolid: w.schoolA.schoolid });
    expect((await central.tdb.db('boxes').where({ boxid }).first('state')).state).toBe('enrolled');
    await page.locator('#sync-facts').waitFor({ state: 'visible' });
    expect(await page.locator('#enrol').isHidden()).toBe(true);
    expect(await text(page, '#y-waiting')).toMatch(/^[1-9]\d* changes waiting to go up$/);

    // The enrolment started a run; Sync now joins it. While central has not acknowledged, nothing says 0.
    await page.locator('#sync-now').click();
    await expect.poll(() => text(page, '#sync-status')).toBe('Syncing with central…');
    await expect.poll(() => held.length, { timeout: 30_000 }).toBeGreaterThan(0);
    await page.reload();
    await signIn(page);
    await page.locator('#sync-facts').waitFor({ state: 'visible' });
    expect(await text(page, '#y-waiting')).not.toBe('0 changes waiting to go up');
    expect(await text(page, '#sync-headline')).toContain('Not everything has reached central yet.');
    expect(Number((await central.tdb.db('boxes').where({ boxid }).first('ackedseq')).ackedseq)).toBe(0);

    await page.locator('#sync-now').click();
    holdPieces = false;
    for (const go of held.splice(0)) go();
    await expect.poll(() => text(page, '#sync-status'), { timeout: 30_000 })
      .toBe('Done: central confirmed what it received.');
    expect(await text(page, '#y-waiting')).toBe('0 changes waiting to go up');
    expect(await text(page, '#sync-headline')).toMatch(/Central has confirmed everything this box wrote, as of /);
    expect(await text(page, '#y-ack')).not.toBe('Never');
    // This world's package and roster are ones the box refuses (learners on a grade the package drops): a down
    // matter, shown as the last error, that leaves what central acknowledged as it is.
    expect(await text(page, '#y-error')).toMatch(/^The box refused the curriculum package/);
    expect(await text(page, '#y-school')).toBe(w.schoolA.schoolname);
    // What the page said is what central holds.
    expect(await central.tdb.db('studentprogress').where({ studentprogressid: resultid }).first('studentid'))
      .toEqual({ studentid: learner.studentid });
    expect(Number((await central.tdb.db('boxes').where({ boxid }).first('ackedseq')).ackedseq)).toBeGreaterThan(0);
    expect(await waitingOnBox()).toBe(0);
    await ctx.close();
  }, 120_000);

  it('only staff reach the routes, bodies are checked and bounded, and a page cannot enrol the box again',
    async () => {
      const call = (method: string, p: string, token: string, body?: unknown, raw?: string) =>
        fetch(`${roomOrigin}${p}`, { method, headers: { Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json' }, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
      const staffToken = (await tokenFor(room, 3, { schoolname: w.schoolA.schoolname })).token;
      for (const [method, p] of [['GET', '/fleet/state'], ['POST', '/fleet/sync'], ['POST', '/fleet/enrol']]) {
        const learnerAnswer = await call(method, p, learner.token, method === 'POST' ? {} : undefined);
        expect({ p, status: learnerAnswer.status }).toEqual({ p, status: 403 });
        const nobody = await fetch(`${roomOrigin}${p}`, { method });
        expect({ p, status: nobody.status }).toEqual({ p, status: 401 });
      }
      const extra = await call('POST', '/fleet/enrol', staffToken, { central: linkOrigin, code: 'x', secret: 'y' });
      expect(extra.status).toBe(400);
      expect(await extra.json()).toMatchObject({ error: true, data: false });
      const big = await call('POST', '/fleet/enrol', staffToken, undefined,
        JSON.stringify({ central: linkOrigin, code: 'x'.repeat(5000) }));
      expect(big.status).toBe(413);
      const again = await call('POST', '/fleet/enrol', staffToken,
        { central: 'https://elsewhere.example', code: 'AAAAA' });
      expect(again.status).toBe(409);
      expect((await room.tdb.db('fleetidentity').first('centralurl')).centralurl).toBe(linkOrigin);
    }, 60_000);

  it('with central out of reach the page shows the error in words and does not say the box is in step', async () => {
    await resultOnBox();
    // Central stops: its port no longer answers.
    centralServer.closeAllConnections();
    await new Promise((r) => centralServer.close(r));
    const ctx = await browser.newContext({ locale: 'en-US' });
    const page = await ctx.newPage();
    await signIn(page);
    await page.locator('#sync-facts').waitFor({ state: 'visible' });
    // The result, and the teacher's own sign-in (an access row), wait on the box.
    const waiting = await waitingOnBox();
    expect(waiting).toBeGreaterThan(0);
    expect(await text(page, '#y-waiting')).toBe(`${waiting} changes waiting to go up`);
    await page.locator('#sync-now').click();
    await expect.poll(() => text(page, '#sync-status'), { timeout: 30_000 }).toMatch(/^The sync did not finish: /);
    const error = (await text(page, '#y-error')) ?? '';
    expect(error).not.toBe('None');
    expect(await text(page, '#sync-status')).toContain(error);
    expect(await text(page, '#y-waiting')).toBe(`${waiting} changes waiting to go up`);
    expect(error).toMatch(/could not be reached/);
    const headline = (await text(page, '#sync-headline')) ?? '';
    expect(headline).toContain('Not everything has reached central yet.');
    expect(headline).not.toMatch(/confirmed everything/);
    // In Khmer, the same state.
    await page.locator('#lang').selectOption('km');
    expect(await text(page, '#sync-now')).toBe('ធ្វើសមកាលកម្មឥឡូវនេះ');
    expect(await text(page, '#y-waiting')).toBe(`ការផ្លាស់ប្ដូរ ${waiting} កំពុងរង់ចាំផ្ញើឡើង`);
    await ctx.close();
  }, 120_000);
});
