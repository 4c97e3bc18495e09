import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { FLEET_PROTOCOL, boxAuthorization, createLogger, newBoxSecret, type FleetSettings } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { addLearner, callers, seedWorld, type Who, type World } from './people-fixtures';
import { sweepRetention } from '../src/retention';
import type { ObjectStore } from '../src/objects';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { enrol, FleetError } from '../../classroom/src/fleet/client';
import { saveIdentity } from '../../classroom/src/fleet/identity';
import { startSyncAgent, type SyncAgent } from '../../classroom/src/fleet/agent';
import { dailyLogName, formatLine } from '../../classroom/src/logging';
import { fleetStatusCommand } from '../../classroom/src/fleet/commands';

// Operating boxes from central between the real central and real boxes with their real agents: settings
// set at central reach a box on its next sync and are shown as applied once the box says so; diagnostics
// asked for arrive without a learner's name; and a box replaced on a fresh card gets back its school's
// learners and their progress as central last saw them, while central names what the old box had not sent.

const quiet = createLogger({ name: 'test', level: 'silent' });
const servers: http.Server[] = [];
const dirs: string[] = [];
let central: TestApp;
let w: World;
let as: Record<Who, string>;
let centralUrl = '';
let relayUrl = '';
/** The relay refuses the box's activity pieces (a link that carries contacts but not the upload). */
let blockPieces = false;
const asked: string[] = [];

function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

async function relayTo(target: string): Promise<string> {
  const t = new URL(target);
  return listen((req, res) => {
    asked.push(req.url ?? '');
    if (blockPieces && req.url?.startsWith('/fleet/box/log')) {
      req.resume();
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
      res.end(JSON.stringify({ error: true, errormessage: 'link down', data: false }));
      return;
    }
    const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method,
      headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
}

interface Box {
  app: ClassroomTestApp;
  agent: SyncAgent;
  boxid: string;
  secret: string;
  logDir: string;
  applied: FleetSettings[];
}

const tmp = (name: string) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `lms-ops-${name}-`));
  dirs.push(d);
  return d;
};

async function register(schoolid: string, body: Record<string, unknown> = {}, who = as.superadmin) {
  return request(central.app).post('/fleet/boxes').set('Authorization', who)
    .send({ schoolid, name: `Box ${crypto.randomBytes(3).toString('hex')}`, ...body });
}

/** A real classroom server with its own fresh database, enrolled with a code, its agent speaking through the relay. */
async function boxWith(code: string): Promise<Box> {
  const app = await makeClassroomApp();
  const secret = newBoxSecret();
  const answer = await enrol(centralUrl, code, { secret, version: '1.0.0' }, { timeoutMs: 30_000 });
  await saveIdentity(app.tdb.db, { centralurl: relayUrl, boxid: answer.boxid, schoolid: answer.schoolid, secret,
    enrolledat: answer.centraltime });
  const logDir = tmp('logs');
  const applied: FleetSettings[] = [];
  const agent = startSyncAgent(app.tdb.db, { intervalMs: 60_000, pieceRows: 50, requestTimeoutMs: 30_000,
    minBackoffMs: 60_000, maxBackoffMs: 60_000, dataDir: tmp('data'), logDir,
    onSettings: (v) => applied.push(v) }, quiet, { start: false });
  return { app, agent, boxid: answer.boxid, secret, logDir, applied };
}

const staff = (who: string) => ({
  get: (p: string) => request(central.app).get(p).set('Authorization', who),
  put: (p: string, body: unknown) => request(central.app).put(p).set('Authorization', who).send(body as object),
  post: (p: string, body?: unknown) => request(central.app).post(p).set('Authorization', who).send(body as object),
});

let learner: { studentid: string; schooluserid: string };
let boxA: Box;

beforeAll(async () => {
  central = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemoContent(central.tdb.db);
  w = await seedWorld(central.tdb.db);
  await central.tdb.db('curriculumcountry').insert({ curriculumcountryid: crypto.randomUUID(),
    curriculumid: DEMO.curriculumid, countryid: DEMO.countryid });
  as = await callers(central, w);
  learner = await addLearner(central.tdb.db, { schoolname: DEMO.schoolname, standard: DEMO.standardid,
    schoolusername: 'kwame', studentfirstname: 'Kwabena', curriculumids: [DEMO.curriculumid] });
  centralUrl = await listen(central.app);
  relayUrl = await relayTo(centralUrl);
  const reg = await register(DEMO.schoolid);
  expect(reg.status).toBe(201);
  boxA = await boxWith(reg.body.data.enrolmentcode as string);
  // The box's first sync: its school's curriculum and learners.
  expect((await boxA.agent.syncNow())?.down?.applied).toEqual(['package', 'students']);
}, 120_000);

afterAll(async () => {
  boxA?.agent.stop();
  for (const s of servers) await new Promise((r) => s.close(r));
  await central?.tdb.dispose();
  await boxA?.app.tdb.dispose();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('settings from central', () => {
  it('reach the box on its next sync, and central shows the version the box then reports as applied', async () => {
    const fleet = await staff(as.superadmin).put('/fleet/settings', { syncintervalseconds: 600, loglevel: 'warn' });
    expect(fleet.status).toBe(200);
    expect(fleet.body.data.settings).toEqual({ syncintervalseconds: 600, loglevel: 'warn' });
    const own = await staff(as.superadmin).put(`/fleet/boxes/${boxA.boxid}/settings`,
      { syncintervalseconds: 900, maintenancewindow: { start: '21:00', end: '04:30' } });
    expect(own.status).toBe(200);
    expect(own.body.data.effective.values).toEqual({ syncintervalseconds: 900, loglevel: 'warn',
      maintenancewindow: { start: '21:00', end: '04:30' } });
    const wanted = own.body.data.wantedversion as number;
    expect(wanted).toBeGreaterThan(0);
    expect(own.body.data.appliedversion).not.toBe(wanted);

    await boxA.agent.syncNow();
    // The agent runs at central's interval, and the server was handed the log level to set.
    expect(boxA.agent.intervalMs).toBe(900_000);
    expect(boxA.applied.at(-1)).toMatchObject({ loglevel: 'warn', syncintervalseconds: 900 });
    expect(await boxA.app.tdb.db('fleetsettings').first()).toMatchObject({ version: wanted });
    // The person at the box sees them too.
    const printed: string[] = [];
    expect(await fleetStatusCommand([], { db: boxA.app.tdb.db, dataDir: os.tmpdir(), client: { timeoutMs: 1000 },
      out: (l) => printed.push(l), err: (l) => printed.push(l) })).toBe(0);
    expect(printed).toContain(`settings      version ${wanted} from central: syncintervalseconds=900 ` +
      'maintenancewindow={"start":"21:00","end":"04:30"} loglevel=warn');
    // Central learns that it was applied from the box's next contact, never before.
    let seen = await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}`);
    expect([seen.body.data.wantedsettingsversion, seen.body.data.settingsversion]).toEqual([wanted, 0]);
    await boxA.agent.syncNow();
    seen = await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}`);
    expect([seen.body.data.wantedsettingsversion, seen.body.data.settingsversion]).toEqual([wanted, wanted]);
    const listed = await staff(as.superadmin).get('/fleet/boxes').query({ schoolid: DEMO.schoolid });
    expect(listed.body.data.boxes.find((b: { boxid: string }) => b.boxid === boxA.boxid))
      .toMatchObject({ settingsversion: wanted, wantedsettingsversion: wanted });

    // Clearing the box's own level goes back to the fleet's interval, as a new version.
    const cleared = await staff(as.superadmin).put(`/fleet/boxes/${boxA.boxid}/settings`, {});
    expect(cleared.body.data.wantedversion).toBeGreaterThan(wanted);
    await boxA.agent.syncNow();
    expect(boxA.agent.intervalMs).toBe(600_000);

    // A box set to keep its own configuration (FLEET_REMOTE_SETTINGS=off) takes nothing and says so.
    const own2: FleetSettings[] = [];
    const local = startSyncAgent(boxA.app.tdb.db, { intervalMs: 60_000, pieceRows: 50, requestTimeoutMs: 30_000,
      minBackoffMs: 60_000, maxBackoffMs: 60_000, dataDir: tmp('data'), remoteSettings: false,
      onSettings: (v) => own2.push(v) }, quiet, { start: false });
    try {
      await local.syncNow();
      expect([local.intervalMs, own2]).toEqual([60_000, []]);
      expect((await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}`)).body.data.settingsversion).toBe(0);
    } finally {
      local.stop();
    }
    await boxA.agent.syncNow();
    expect((await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}`)).body.data.settingsversion)
      .toBe(cleared.body.data.wantedversion);
  }, 120_000);

  it('refuses values out of range and unknown keys with 400, writing nothing', async () => {
    const before = (await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}/settings`)).body.data;
    for (const bad of [{ syncintervalseconds: 5 }, { syncintervalseconds: 100_000 }, { loglevel: 'verbose' },
      { maintenancewindow: { start: '25:00', end: '01:00' } }, { logretentiondays: 0 }, { command: 'reboot' }]) {
      const res = await staff(as.superadmin).put(`/fleet/boxes/${boxA.boxid}/settings`, bad);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: true, data: false });
      expect((await staff(as.superadmin).put('/fleet/settings', bad)).status).toBe(400);
    }
    const after = (await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}/settings`)).body.data;
    expect(after).toEqual(before);
    expect((await staff(as.superadmin).put('/fleet/settings', { loglevel: 'x'.repeat(100_000) })).status)
      .toBeGreaterThanOrEqual(400);
  }, 60_000);

  it('fleet-wide settings are the super admin\'s; a school\'s and a box\'s stay within the caller\'s schools',
    async () => {
      const version = (await staff(as.superadmin).get('/fleet/settings')).body.data.version;
      for (const who of [as.admin, as.scopedSchool, as.teacher, as.schoolteacher]) {
        expect((await staff(who).put('/fleet/settings', { loglevel: 'debug' })).status).toBe(403);
      }
      expect((await request(central.app).put('/fleet/settings').send({ loglevel: 'debug' })).status).toBe(401);
      const boxAuth = boxAuthorization(boxA.boxid, boxA.secret);
      expect((await staff(boxAuth).put('/fleet/settings', { loglevel: 'debug' })).status).toBe(401);
      expect((await staff(boxAuth).get(`/fleet/boxes/${boxA.boxid}/settings`)).status).toBe(401);
      expect((await staff(as.superadmin).get('/fleet/settings')).body.data.version).toBe(version);
      // An Admin narrowed to school A: its own school's settings, not the demo school's nor its box's.
      const mine = await staff(as.scopedSchool).put(`/fleet/schools/${w.schoolA.schoolid}/settings`,
        { logretentiondays: 30 });
      expect(mine.status).toBe(200);
      expect(mine.body.data.settings).toEqual({ logretentiondays: 30 });
      expect((await staff(as.scopedSchool).put(`/fleet/schools/${DEMO.schoolid}/settings`, { loglevel: 'debug' }))
        .status).toBe(404);
      expect((await staff(as.scopedSchool).get(`/fleet/boxes/${boxA.boxid}/settings`)).status).toBe(404);
      expect((await staff(as.scopedSchool).put(`/fleet/boxes/${boxA.boxid}/settings`, { loglevel: 'debug' }))
        .status).toBe(404);
      expect(await central.tdb.db('boxsettings').where({ level: 'school', targetid: DEMO.schoolid }).first())
        .toBeUndefined();
      // A school's settings stand between the fleet's and the box's.
      await staff(as.superadmin).put(`/fleet/schools/${DEMO.schoolid}/settings`, { loglevel: 'error' });
      const eff = (await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}/settings`)).body.data.effective;
      expect(eff.values).toMatchObject({ loglevel: 'error', syncintervalseconds: 600 });
    }, 60_000);
});

describe('diagnostics from a box', () => {
  it('arrive on the box\'s next contact, with its state and its recent logs but no learner\'s name', async () => {
    const now = new Date();
    const lines = [
      formatLine({ level: 30, time: now.getTime(), msg: 'sign-in of kwame refused: wrong password',
        reqId: 'r-1', schooluserid: learner.schooluserid, studentfirstname: 'Kwabena',
        req: { method: 'POST', url: `/auth/login?studentusername=kwame&id=${learner.studentid}` },
        res: { statusCode: 400 }, responseTime: 12.5 }),
      formatLine({ level: 50, time: now.getTime() + 1, msg: 'lesson progress of Kwabena Mensah not saved',
        err: { type: 'Error', message: 'Kwabena: SQLITE_BUSY', stack: '/home/kwame/x.js' } }),
    ];
    fs.writeFileSync(path.join(boxA.logDir, dailyLogName('info', now)), lines[0]);
    fs.writeFileSync(path.join(boxA.logDir, dailyLogName('error', now)), lines[1]);

    expect((await staff(as.scopedSchool).post(`/fleet/boxes/${boxA.boxid}/diagnostics`)).status).toBe(404);
    const asked1 = await staff(as.superadmin).post(`/fleet/boxes/${boxA.boxid}/diagnostics`);
    expect(asked1.status).toBe(201);
    expect(asked1.body.data.state).toBe('requested');
    const id = asked1.body.data.diagnosticid as string;
    // Asking again before the box answered is the same request.
    expect((await staff(as.superadmin).post(`/fleet/boxes/${boxA.boxid}/diagnostics`)).body.data.diagnosticid)
      .toBe(id);

    await boxA.agent.syncNow();
    const got = await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}/diagnostics/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.data.state).toBe('received');
    const r = got.body.data.report;
    // A box runs SQLite (PRAGMA integrity_check); a classroom server on PostgreSQL says it did not check.
    if (boxA.app.tdb.db.client.config.client === 'pg') expect(r.integrity).toMatch(/^not checked: PostgreSQL/);
    else expect(r.integrity).toBe('ok');
    expect(r.version).toBe('1.0.0');
    expect(r.migrations.pending).toEqual([]);
    expect(r.migrations.applied).toContain('0010_fleet_settings');
    expect(r.rowcounts.students).toBe(1);
    expect(r.rowcounts.lessons).toBeGreaterThan(0);
    expect(r.settings.version).toBeGreaterThan(0);
    expect(r.logs).toHaveLength(2);
    expect(r.logs.join('\n')).toContain('sign-in of [name] refused');
    expect(r.logs.join('\n')).toContain('"url":"/auth/login"');
    const text = JSON.stringify(got.body.data).toLowerCase();
    for (const personal of ['kwame', 'kwabena', 'mensah', learner.schooluserid, learner.studentid])
      expect(text).not.toContain(personal.toLowerCase());
    const list = await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}/diagnostics`);
    expect(list.body.data.diagnostics[0]).toMatchObject({ diagnosticid: id, state: 'received' });
    expect(list.body.data.diagnostics[0].report).toBeUndefined();
  }, 120_000);

  it('a box\'s credential sends only its own and reads none; staff out of scope get 404', async () => {
    const id = (await staff(as.superadmin).post(`/fleet/boxes/${boxA.boxid}/diagnostics`)).body.data.diagnosticid;
    const other = await register(DEMO.schoolid);
    const secret = newBoxSecret();
    await request(central.app).post('/fleet/enrol').set('Authorization', `Enrol ${other.body.data.enrolmentcode}`)
      .send({ secret, version: '1.0.0', protocol: FLEET_PROTOCOL }).expect(200);
    const otherAuth = boxAuthorization(other.body.data.box.boxid, secret);
    const report = { protocol: FLEET_PROTOCOL, version: '9.9.9', freediskbytes: 1, integrity: 'forged',
      migrations: { applied: [], pending: [] }, rowcounts: {}, settings: { version: 0, values: {} }, logs: [],
      logbytes: 0, collectedat: new Date().toISOString() };
    const forged = await request(central.app).post(`/fleet/box/diagnostics/${id}`).set('Authorization', otherAuth)
      .send(report);
    expect(forged.status).toBe(404);
    expect((await central.tdb.db('boxdiagnostics').where({ diagnosticid: id }).first()).state).toBe('requested');
    const auth = boxAuthorization(boxA.boxid, boxA.secret);
    expect((await staff(auth).get(`/fleet/boxes/${boxA.boxid}/diagnostics/${id}`)).status).toBe(401);
    expect((await staff(auth).get(`/fleet/boxes/${boxA.boxid}/diagnostics`)).status).toBe(401);
    expect((await staff(as.scopedSchool).get(`/fleet/boxes/${boxA.boxid}/diagnostics/${id}`)).status).toBe(404);
    expect((await staff(as.schoolteacher).get(`/fleet/boxes/${boxA.boxid}/diagnostics`)).status).toBe(403);
    // Over the size limit: refused, nothing kept.
    const big = await request(central.app).post(`/fleet/box/diagnostics/${id}`).set('Authorization', auth)
      .send({ ...report, logs: Array.from({ length: 200 }, () => 'x'.repeat(10_000)) });
    expect(big.status).toBe(413);
    expect((await central.tdb.db('boxdiagnostics').where({ diagnosticid: id }).first()).body).toBeNull();
    const bad = await request(central.app).post(`/fleet/box/diagnostics/${id}`).set('Authorization', auth)
      .send({ ...report, shell: 'rm -rf /' });
    expect(bad.status).toBe(400);
    // Its own: kept once; sent again, nothing changes.
    const okay = await request(central.app).post(`/fleet/box/diagnostics/${id}`).set('Authorization', auth)
      .send(report);
    expect(okay.body.data).toEqual({ recorded: true, already: false });
    const again = await request(central.app).post(`/fleet/box/diagnostics/${id}`).set('Authorization', auth)
      .send({ ...report, integrity: 'changed' });
    expect(again.body.data).toEqual({ recorded: false, already: true });
    expect(JSON.parse((await central.tdb.db('boxdiagnostics').where({ diagnosticid: id }).first()).body).integrity)
      .toBe('forged');
  }, 60_000);

  it('are deleted by the retention sweep after FLEET_DIAGNOSTICS_DAYS', async () => {
    const old = (await staff(as.superadmin).post(`/fleet/boxes/${boxA.boxid}/diagnostics`)).body.data.diagnosticid;
    await central.tdb.db('boxdiagnostics').where({ diagnosticid: old })
      .update({ requestedat: new Date(Date.now() - 20 * 86_400_000).toISOString() });
    const before = Number((await central.tdb.db('boxdiagnostics').count({ n: '*' }).first())?.n);
    // The archives' part is off (0), so no object store is touched.
    await sweepRetention({ db: central.tdb.db, objects: {} as ObjectStore, logger: quiet },
      { logArchiveDays: 0, signInDays: 0, fleetDiagnosticsDays: 14 });
    expect(await central.tdb.db('boxdiagnostics').where({ diagnosticid: old }).first()).toBeUndefined();
    expect(Number((await central.tdb.db('boxdiagnostics').count({ n: '*' }).first())?.n)).toBe(before - 1);
  }, 60_000);
});

describe('replacing a box', () => {
  const signIn = async (box: Box) => {
    const res = await request(box.app.app).post('/auth/login').send({ studentusername: 'kwame',
      studentpassword: 'pass1' });
    expect(res.status).toBe(200);
    return `Bearer ${res.body.data.accessToken as string}`;
  };
  const progressOn = async (box: Box) => {
    const auth = await signIn(box);
    const get = async (p: string) => {
      const res = await request(box.app.app).get(p).set('Authorization', auth);
      expect(res.status).toBe(200);
      return res.body.data as unknown;
    };
    return { summary: await get('/student/progress/summary'), lesson: await get(`/Lesson/${DEMO.lessonid}/progress`),
      curriculum: await get('/student/progress') };
  };
  const result = (points: number) => ({ studentprogressid: crypto.randomUUID(), studentid: learner.studentid,
    ispass: true, studentprogressreferenceid: crypto.randomUUID(), starttime: new Date().toISOString(),
    endtime: new Date().toISOString(), progresstype: 2, points, fullpoints: 10, marks: points, scores: points,
    resultpercentage: points * 10 });

  it('brings back the roster and every learner\'s progress as of the last sync, and names what was lost',
    async () => {
      // On box A the learner finishes the demo lesson; A syncs it up.
      const sent = result(8);
      await boxA.app.tdb.db('studentprogress').insert(sent);
      await boxA.app.tdb.db('studentlessonsprogress').insert({ studentlessonprogressid: crypto.randomUUID(),
        studentid: learner.studentid, completed: true, curid: DEMO.curriculumid, gradeid: DEMO.gradeid,
        levelid: DEMO.levelid, lessonid: DEMO.lessonid, points: 8, progress: 100, scores: 8,
        lastupdated: new Date().toISOString() });
      expect((await boxA.agent.syncNow())?.pieces).toBe(1);
      const atLastSync = await progressOn(boxA);
      expect(atLastSync.summary).toMatchObject({ totals: { lessonsCompleted: 1 } });
      expect(await central.tdb.db('studentprogress').where({ studentprogressid: sent.studentprogressid }).first())
        .toBeDefined();
      // Then a result central never gets: the link carries A's contact, not its upload; then A's card dies.
      const unsent = result(3);
      await boxA.app.tdb.db('studentprogress').insert(unsent);
      blockPieces = true;
      await expect(boxA.agent.syncNow()).rejects.toBeInstanceOf(FleetError);
      blockPieces = false;
      const a = (await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}`)).body.data;
      // The unsent result and the learner's sign-in on A after the last sync.
      const waiting = Number((await boxA.app.tdb.db('fleetchanges').count({ n: '*' }).first())?.n);
      expect(waiting).toBe(2);
      expect(a.rowswaiting).toBe(waiting);
      expect(a.lastgoodat).not.toBeNull();

      // Only a box of the caller's, of the same school, can be replaced.
      const elsewhere = await register(w.schoolB.schoolid, { replaces: boxA.boxid });
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.body.errormessage).toBe('A box replaces a box of its own school');
      expect((await register(w.schoolA.schoolid, { replaces: boxA.boxid }, as.scopedSchool)).status).toBe(400);
      expect((await register(DEMO.schoolid, { replaces: 'not-a-box' })).status).toBe(400);
      expect(await central.tdb.db('boxes').where({ replacesboxid: boxA.boxid }).first()).toBeUndefined();

      const reg = await register(DEMO.schoolid, { replaces: boxA.boxid });
      expect(reg.status).toBe(201);
      expect(reg.body.data.box.replaces).toMatchObject({ boxid: boxA.boxid, lostrowswaiting: waiting });
      // The old box keeps working until the new one enrols; one replacement at a time.
      expect((await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}`)).body.data.state).toBe('enrolled');
      expect((await register(DEMO.schoolid, { replaces: boxA.boxid })).status).toBe(409);

      // Box B: a fresh database (the new card), enrolled with the replacement's code.
      const boxB = await boxWith(reg.body.data.enrolmentcode as string);
      try {
        asked.length = 0;
        const first = await boxB.agent.syncNow();
        expect(first?.down?.applied).toEqual(['package', 'students']);
        // The learner signs in on B and finds their progress as central last saw it from A.
        expect(await progressOn(boxB)).toEqual(atLastSync);
        expect(asked).toContain('/fleet/box/roster/students?restore=1');
        const onB = await boxB.app.tdb.db('studentprogress').select('studentprogressid');
        expect(onB.map((r) => r.studentprogressid)).toEqual([sent.studentprogressid]);
        // Central's own rows are not journaled to be sent back up.
        expect(await boxB.app.tdb.db('fleetchanges').whereIn('tablename', ['studentprogress',
          'studentlessonsprogress']).first()).toBeUndefined();

        // A is revoked by the replacement; central names what it had not sent.
        const oldBox = (await staff(as.superadmin).get(`/fleet/boxes/${boxA.boxid}`)).body.data;
        expect(oldBox).toMatchObject({ state: 'revoked', replacedbyboxid: boxB.boxid });
        const newBox = (await staff(as.superadmin).get(`/fleet/boxes/${boxB.boxid}`)).body.data;
        expect(newBox.replaces).toEqual({ boxid: boxA.boxid, lostrowswaiting: waiting, lastgoodat: a.lastgoodat,
          lastupat: a.lastupat, replacedat: expect.any(String) });
        await expect(boxA.agent.syncNow()).rejects.toMatchObject({ status: 401 });
        expect(await central.tdb.db('studentprogress').where({ studentprogressid: unsent.studentprogressid })
          .first()).toBeUndefined();
        // A box replaced once is not replaced again.
        expect((await register(DEMO.schoolid, { replaces: boxA.boxid })).status).toBe(409);

        // The next sync of B finds the roster it holds unchanged and asks for no progress again.
        asked.length = 0;
        expect((await boxB.agent.syncNow())?.down?.applied).toEqual([]);
        expect(asked).toContain('/fleet/box/state');
        expect(await progressOn(boxB)).toEqual(atLastSync);
      } finally {
        boxB.agent.stop();
        await boxB.app.tdb.dispose();
      }
    }, 180_000);
});
