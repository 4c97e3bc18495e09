/**
 * `make fleet-test`: the fleet end to end over bad links, as processes on loopback. Central runs as two
 * instances (central/dist/server.js, production settings) on a PostgreSQL database of the run's own, behind
 * HAProxy with the kit's deploy/haproxy.cfg. Three classroom boxes (classroom/dist/server.js on SQLite, each
 * with its own data folder) are registered at central, enrolled with their codes by the box's own command
 * (`cli.js enroll`), and reach central only through a link emulator of their own (./link.ts: latency per
 * direction, a token bucket per direction, outages on a schedule that cut open connections mid-transfer, loss
 * emulated as random mid-transfer cuts, and a switch that takes the link fully off).
 *
 * Time is compressed: the agents run every 2 s (FLEET_SYNC_INTERVAL_SECONDS=2), back off from 1 s to 4 s
 * (FLEET_MIN_BACKOFF_SECONDS, FLEET_MAX_BACKOFF_SECONDS) and send pieces of 100 journal entries
 * (FLEET_PIECE_ROWS=100), so that many pieces cross many cuts. The profiles, scaled down:
 * - "2G": 150 ms each way (300 ms round trip), 100 kbit/s each way, down for 2 s of every 6 s (the issue's
 *   20 s of every minute, ten times faster), and 2 % loss taken as a 0.5 % chance per KiB relayed of cutting
 *   the connection there;
 * - "off for a week, then an hour of link": the link is off during the whole of the learners' activity (the
 *   "week", 90 s here: FLEET_TEST_ACTIVITY_SECONDS), then on (150 ms each way, 384 kbit/s, no outages) for
 *   the rest of the run.
 * One 2G box runs with its clock three years behind (a preload, ./clock-shift.ts, shifts what JavaScript
 * reads of the time; SQLite's own CURRENT_TIMESTAMP keeps the machine's).
 *
 * Learners sign in on their box and submit quiz results through its HTTP API, as the tablet does, while the
 * links misbehave; central changes a lesson and each school's roster meanwhile. Then: every result on a box
 * is at central exactly once with the same contents, central's count grew by exactly the boxes' rows, the
 * changes reached every box, the skewed box lost nothing and central measured its skew, a box's credential
 * is refused on another school's content, roster and activity (and nothing was written for that school),
 * and a revoked box is refused on its next request and records the refusal. Prints a table of the checks and
 * a summary (results per box, pieces, cuts, bytes through each link); exits 1 when any check failed.
 *
 * Needs FLEET_TEST_DATABASE_URL (or TEST_DATABASE_URL): a PostgreSQL role allowed to create databases; and
 * `haproxy` on the PATH (scripts/ci/ensure-haproxy.sh).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import knexFactory, { type Knex } from 'knex';
import { DEMO_IDS, PROGRESS_KEYS, writeLogZipFromDocument, type LogDocument } from '@lms/shared';
import { repoRoot } from '@lms/db';
import {
  anyCheckFailed, check, exitWith, freePort, mustRun, plain, printTable, say, secret, sleep, start, stopChildren,
  waiter, type Proc,
} from '../kit-test/common';
import { startHaproxy } from '../kit-test/proxies';
import { startLink, type Link, type LinkProfile } from './link';

const waitFor = waiter({ every: 250, fatal: /exited/ });
const node = process.execPath;
const THREE_YEARS_MS = 3 * 365 * 24 * 3600 * 1000;
const ACTIVITY_MS = Number(process.env.FLEET_TEST_ACTIVITY_SECONDS ?? 90) * 1000;

const PROFILES: Record<'2g' | 'offweek', LinkProfile> = {
  '2g': {
    name: '2G', delayMs: 150, bitsPerSecond: 100_000, cut: { everyMs: 6000, forMs: 2000 }, cutChance: 0.005,
  },
  offweek: { name: 'off for a week, then an hour of link', delayMs: 150, bitsPerSecond: 384_000 },
};

type Row = Record<string, unknown>;

/** What a box writes and sends up, compared row by row with central: results, their questions, sign-ins. */
const COMPARED: Array<[string, string]> = [
  ['studentprogress', 'studentprogressid'],
  ['studentprogressquestions', 'studentprogressquestionid'],
  ['rpiuseraccess', 'rpiuseraccessid'],
];

const countOf = async (db: Knex, table: string, where: Row = {}) =>
  Number(((await db(table).where(where).count({ n: '*' }).first()) as Row).n);

interface Box {
  name: string;
  schoolid: string;
  schoolname: string;
  profile: LinkProfile;
  clockShiftMs: number;
  dir: string;
  port: number;
  link?: Link;
  proc?: Proc;
  boxid?: string;
  db?: Knex;
  learners: string[];
  submitted: number;
  submitFailures: number;
  /** Rows the box held before its learners began: central's progress it took on its first sync (a new box). */
  held?: Record<string, Set<string>>;
}

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: Buffer; json(): Row }

/** Plain HTTP with a body (Buffer or JSON), straight to a port on loopback. */
function call(port: number, p: string, o: { method?: string; headers?: Record<string, string>; body?: unknown } = {}):
  Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = o.body === undefined ? undefined
      : Buffer.isBuffer(o.body) ? o.body : Buffer.from(JSON.stringify(o.body));
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (body && !Buffer.isBuffer(o.body)) headers['Content-Type'] = 'application/json';
    if (body) headers['Content-Length'] = String(body.length);
    const req = http.request({ host: '127.0.0.1', port, path: p, method: o.method ?? 'GET', headers, agent: false,
      timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all,
          json: () => JSON.parse(all.toString()) as Row });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** The agent's failed runs, as the box's log tells them. */
const failedRunsOf = (b: Box) => (b.proc ? fs.readFileSync(b.proc.log, 'utf8').split('\n')
  .filter((l) => l.includes('"fleet: sync failed"')).length : 0);

const said = (a: Answer) => `${a.status} ${a.body.toString().slice(0, 200)}`;

/** A row as both databases give it back: times as ISO strings, booleans as 0/1, JSON text parsed. */
function normal(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d/.test(v)) {
    const t = Date.parse(v.includes('T') || /Z|[+-]\d\d/.test(v.slice(19)) ? v : `${v.replace(' ', 'T')}Z`);
    if (Number.isFinite(t)) return new Date(t).toISOString();
  }
  if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) && /^-?[\d.]+$/.test(v)) return Number(v);
  return v;
}

/** The columns two rows share whose values differ (normalised). */
function differences(a: Row, b: Row): string[] {
  return Object.keys(a).filter((k) => k in b && JSON.stringify(normal(a[k])) !== JSON.stringify(normal(b[k])))
    .map((k) => `${k}: box ${JSON.stringify(a[k])}, central ${JSON.stringify(b[k])}`);
}

const chunked = <T>(list: T[], n = 500) => Array.from({ length: Math.ceil(list.length / n) }, (_, i) =>
  list.slice(i * n, i * n + n));

/** A row read from PostgreSQL, ready to be written again: JSON columns come back parsed. */
const asWritten = (r: Row): Row => Object.fromEntries(Object.entries(r).map(([k, v]) =>
  [k, v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v]));

async function rowsByIds(db: Knex, table: string, key: string, ids: string[]): Promise<Map<string, Row>> {
  const out = new Map<string, Row>();
  for (const part of chunked(ids)) {
    for (const r of (await db(table).whereIn(key, part)) as Row[]) out.set(String(r[key]), r);
  }
  return out;
}

async function main(): Promise<number> {
  const adminUrl = process.env.FLEET_TEST_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    process.stderr.write(
      'fleet-test needs FLEET_TEST_DATABASE_URL (or TEST_DATABASE_URL); `make fleet-test` sets it\n',
    );
    return 2;
  }
  const t0 = Date.now();
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-fleet-test-'));
  const logs = path.join(tmp, 'logs');
  await fsp.mkdir(logs);
  const tag = `lms_ft_${crypto.randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  const dbUrl = (name: string) => { const u = new URL(adminUrl); u.pathname = `/${name}`; return u.toString(); };
  let central: Knex | undefined;
  const boxes: Box[] = [];
  const ports = {
    central: [await freePort(), await freePort()],
    haproxy: { central: await freePort(), classroom: await freePort(), stats: await freePort() },
    // HAProxy's classroom backend has nothing behind it here: the boxes are not behind the kit's proxies.
    classroom: await freePort(),
  };
  const proxy = ports.haproxy.central;
  let keep = false;

  try {
    await admin.raw(`CREATE DATABASE ${tag}_central`);
    central = knexFactory({ client: 'pg', connection: dbUrl(`${tag}_central`), pool: { min: 0, max: 2 } });
    const centralEnv: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, NODE_ENV: 'production',
      JWT_SECRET: secret(), APPLICATION_API_KEY: secret(), SERVER_SYNC_KEY: secret(), RPI_SECRET: secret(),
      DATABASE_URL: dbUrl(`${tag}_central`), OBJECT_DIR: path.join(tmp, 'objects'),
      // One proxy (HAProxy) in front: the address it gives is the sender's.
      TRUST_PROXY: '1', HOST: '127.0.0.1',
      PUBLIC_URL: `http://127.0.0.1:${proxy}`, UI_URL: `http://127.0.0.1:${proxy}`,
      RPI_CLOUD: `http://127.0.0.1:${ports.classroom}`,
      // Every box and the test itself come from 127.0.0.1: the per-address limit would count them all as one.
      RATE_LIMIT_MAX: '1000000', LOG_IMPORT_ENABLED: 'true', LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_SECONDS: '0', SHUTDOWN_DRAIN_SECONDS: '2',
    };
    const centralCli = (args: string[], extra: Record<string, string> = {}) =>
      mustRun([node, 'central/dist/cli.js', ...args], { ...centralEnv, ...extra }, { named: [1, 3], quoted: 400 });
    const ready = (port: number, proc: Proc) => waitFor(`the process on ${port}`, 60_000, async () => {
      if (proc.child.exitCode !== null)
        throw new Error(`the process on ${port} exited ${proc.child.exitCode}: ` +
          `${fs.readFileSync(proc.log, 'utf8').trim().slice(-400)}`);
      return (await plain(port, '/readyz')).status === 200;
    });

    // ---- central ---------------------------------------------------------------------------------------
    let token = '';
    const up = await check('central: 2 instances on PostgreSQL behind HAProxy', async () => {
      await centralCli(['migrate']);
      await centralCli(['seed-demo'], { NODE_ENV: 'test' });
      const procs = ports.central.map((p) => start(`central-${p}`,
        [node, '--enable-source-maps', 'central/dist/server.js'], { ...centralEnv, PORT: String(p) }, logs));
      await Promise.all(procs.map((proc, i) => ready(ports.central[i], proc)));
      await startHaproxy({ tmp, logs, ports }, waitFor);
      const password = `Fleet-${crypto.randomBytes(6).toString('hex')}-A1`;
      await centralCli(['set-password', 'superadmin@superadmin.com', password]);
      const login = await call(proxy, '/auth/login', { method: 'POST',
        body: { lmsusername: 'superadmin@superadmin.com', lmsuserpassword: password } });
      if (login.status !== 200) throw new Error(`sign-in answered ${said(login)}`);
      token = (login.json().data as { accessToken: string }).accessToken;
      return `instances on ${ports.central.join(' and ')}, HAProxy on ${proxy}; superadmin signed in through it`;
    });
    if (!up) throw new Error('central did not start');
    const staff = { Authorization: `Bearer ${token}` };

    // ---- a second school, with learners, beside the demo school -------------------------------------
    const schoolB = { schoolid: crypto.randomUUID(), schoolname: 'Fleet Test School B' };
    const learnersOf: Record<string, string[]> = {
      [DEMO_IDS.schoolname]: DEMO_IDS.learners.map((l) => l.schoolusername),
      [schoolB.schoolname]: [],
    };
    const before: Record<string, number> = {};
    const second = await check("a second school at central, with a class and learners of its own", async () => {
      const db = central!;
      const demoSchool = (await db('schools').where({ schoolid: DEMO_IDS.schoolid }).first()) as Row;
      await db('schools').insert(asWritten({ ...demoSchool, ...schoolB }));
      const standardB = crypto.randomUUID();
      const demoClass = (await db('standards').where({ standardid: DEMO_IDS.standardid }).first()) as Row;
      await db('standards').insert(asWritten({ ...demoClass, standardid: standardB, ...schoolB }));
      for (const l of DEMO_IDS.learners.slice(0, 3)) {
        const su = (await db('schoolusers').where({ schooluserid: l.schooluserid }).first()) as Row;
        const st = (await db('students').where({ studentid: l.studentid }).first()) as Row;
        const schooluserid = crypto.randomUUID();
        const schoolusername = `fleetb.${l.schoolusername.split('.')[1]}`;
        await db('schoolusers').insert(asWritten({ ...su, schooluserid, schoolusername,
          schoolname: schoolB.schoolname }));
        await db('students').insert(asWritten({ ...st, studentid: crypto.randomUUID(), schooluserid,
          schoolname: schoolB.schoolname, standard: standardB }));
        learnersOf[schoolB.schoolname].push(schoolusername);
      }
      return `${schoolB.schoolname}: ${learnersOf[schoolB.schoolname].join(', ')} (the demo learners' password)`;
    });
    if (!second) throw new Error('the second school could not be made');
    for (const [table] of COMPARED) before[table] = await countOf(central, table);

    // ---- the boxes ---------------------------------------------------------------------------------
    const demo = { schoolid: DEMO_IDS.schoolid, schoolname: DEMO_IDS.schoolname };
    const plan: Array<Pick<Box, 'name' | 'schoolid' | 'schoolname' | 'profile' | 'clockShiftMs'>> = [
      { name: 'box-1', ...demo, profile: PROFILES['2g'], clockShiftMs: 0 },
      { name: 'box-2', ...demo, profile: PROFILES['2g'], clockShiftMs: -THREE_YEARS_MS },
      { name: 'box-3', ...schoolB, profile: PROFILES.offweek, clockShiftMs: 0 },
    ];
    const boxEnv = (b: Box): Record<string, string> => ({
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, NODE_ENV: 'production',
      JWT_SECRET: secret(), SERVER_SYNC_KEY: secret(), DATA_DIR: b.dir, RPI_PORT: String(b.port), HOST: '127.0.0.1',
      RATE_LIMIT_MAX: '1000000', LOG_LEVEL: 'info',
      FLEET_SYNC_INTERVAL_SECONDS: '2', FLEET_MIN_BACKOFF_SECONDS: '1', FLEET_MAX_BACKOFF_SECONDS: '4',
      FLEET_PIECE_ROWS: '100', FLEET_REQUEST_TIMEOUT_SECONDS: '20',
      LMS_CLOCK_SHIFT_MS: String(b.clockShiftMs),
    });
    const clockShift = path.join(repoRoot, 'scripts', 'dist', 'fleet-test', 'clock-shift.js');

    const enrolled = await check('3 boxes registered, enrolled through their links, serving on SQLite', async () => {
      const lines: string[] = [];
      for (const p of plan) {
        const b: Box = { ...p, dir: path.join(tmp, p.name), port: await freePort(), learners: learnersOf[p.schoolname],
          submitted: 0, submitFailures: 0 };
        await fsp.mkdir(b.dir);
        boxes.push(b);
        const env = boxEnv(b);
        await mustRun([node, 'classroom/dist/cli.js', 'migrate'], env, { named: [1, 3] });
        const reg = await call(proxy, '/fleet/boxes', { method: 'POST', headers: staff,
          body: { schoolid: b.schoolid, name: `Fleet test ${b.name}` } });
        if (reg.status !== 201) throw new Error(`POST /fleet/boxes answered ${said(reg)}`);
        const data = reg.json().data as { box: { boxid: string }; enrolmentcode: string };
        b.boxid = data.box.boxid;
        b.link = await startLink({ host: '127.0.0.1', port: proxy }, b.profile);
        // A cut can take the answer of a code central used: the operator makes a new code and the box tries again.
        let code = data.enrolmentcode;
        let tries = 0;
        for (;;) {
          tries += 1;
          const r = await mustRun([node, 'classroom/dist/cli.js', 'enroll', '--central',
            `http://127.0.0.1:${b.link.port}`, '--code', code], env, { named: [1, 3] })
            .then(() => '', (e: Error) => e.message);
          if (!r) break;
          if (tries >= 8) throw new Error(`${b.name} did not enrol in ${tries} tries: ${r}`);
          await sleep(1000);
          const again = await call(proxy, `/fleet/boxes/${b.boxid}/code`, { method: 'POST', headers: staff });
          code = (again.json().data as { enrolmentcode: string }).enrolmentcode;
        }
        const argv = [node, '--enable-source-maps', ...(b.clockShiftMs ? ['--require', clockShift] : []),
          'classroom/dist/server.js'];
        b.proc = start(b.name, argv, env, logs);
        await ready(b.port, b.proc);
        b.db = knexFactory({ client: 'better-sqlite3', connection: { filename: path.join(b.dir, 'classroom.sqlite') },
          useNullAsDefault: true, pool: { min: 0, max: 1 } });
        lines.push(`${b.name} (${b.schoolname}, ${b.profile.name}${b.clockShiftMs ? ', clock 3 years behind' : ''}, ` +
          `${tries} tr${tries > 1 ? 'ies' : 'y'})`);
      }
      return lines.join('; ');
    });
    if (!enrolled) throw new Error('the boxes did not start');

    const applied = async (b: Box, kind: string) =>
      Boolean(((await b.db!('fleetdown').where({ kind }).first()) as Row | undefined)?.appliedtag);
    await check('every box takes its school\'s package and rosters from central over its link', async () => {
      // A new box's first sync brings the media, the package and the roster with central's progress: over 2G,
      // cut every few seconds, that takes several runs.
      await waitFor('the package and rosters on every box', 480_000, async () => {
        for (const b of boxes) if (!(await applied(b, 'package')) || !(await applied(b, 'students'))) return false;
        return true;
      });
      for (const b of boxes) {
        b.held = {};
        for (const [table, key] of COMPARED) b.held[table] = new Set((await b.db!(table).pluck(key)).map(String));
      }
      const counts = await Promise.all(boxes.map(async (b) =>
        `${b.name}: ${Number(((await b.db!('students').count({ n: '*' }).first()) as Row).n)} learners, ` +
        `${Number(((await b.db!('lessons').count({ n: '*' }).first()) as Row).n)} lessons`));
      return counts.join('; ');
    });

    // ---- learners at work while the links misbehave ---------------------------------------------------
    const offBox = boxes.find((b) => b.profile === PROFILES.offweek)!;
    const newLessonName = `Counting to ten, revised ${crypto.randomBytes(3).toString('hex')}`;
    const newLearners: Record<string, string> = {};
    await check(`learners submit quiz results on every box for ${ACTIVITY_MS / 1000} s while the links misbehave`,
      async () => {
        offBox.link!.setOff(true);
        const stopAt = Date.now() + ACTIVITY_MS;
        const lessons = DEMO_IDS.lessons;
        const work = boxes.map(async (b) => {
          const tokens: string[] = [];
          for (const u of b.learners) {
            const r = await call(b.port, '/auth/login', { method: 'POST',
              body: { studentusername: u, studentpassword: DEMO_IDS.password } });
            if (r.status !== 200) throw new Error(`${b.name}: sign-in of ${u} answered ${said(r)}`);
            tokens.push((r.json().data as { accessToken: string }).accessToken);
          }
          // A quiz a learner passed already takes no further attempt (the answer is 200, no new row): central's
          // progress, which a new box takes, may hold such passes; those pairs are left out.
          const passed = new Set((await b.db!('studentprogress as p')
            .join('students as st', 'st.studentid', 'p.studentid')
            .join('schoolusers as u', 'u.schooluserid', 'st.schooluserid').where('p.ispass', true)
            .select('u.schoolusername', 'p.studentprogressreferenceid') as Row[])
            .map((r) => `${String(r.schoolusername)} ${String(r.studentprogressreferenceid)}`));
          let i = 0;
          while (Date.now() < stopAt) {
            const lesson = lessons[i % lessons.length];
            if (passed.has(`${b.learners[i % tokens.length]} ${lesson.lessonquizid}`)) {
              i += 1;
              await sleep(10);
              continue;
            }
            const starttime = Date.now() - 60_000;
            const result = lesson.lessonquizquestionids.map((lq, q) => ({
              iscorrect: (i + q) % 3 !== 0, lessonquizid: lesson.lessonquizid, lessonquizquestionid: lq,
              questionid: lesson.questionids[q],
            }));
            const r = await call(b.port, `/result/lesson/quiz/${lesson.lessonquizid}`, { method: 'POST',
              headers: { Authorization: `Bearer ${tokens[i % tokens.length]}` },
              body: { starttime, endtime: starttime + 30_000 + i, result } });
            if (r.status === 200) b.submitted += 1;
            else b.submitFailures += 1;
            i += 1;
            await sleep(500);
          }
        });
        // Halfway, an administrator renames a lesson and enrols a learner in each school, through central's API.
        const changes = async () => {
          await sleep(ACTIVITY_MS / 2);
          const lessonid = DEMO_IDS.lessons[0].lessonid;
          const got = await call(proxy, `/lesson/${lessonid}`, { headers: staff });
          const lesson = got.json().data as Row;
          const renamed = await call(proxy, `/lesson/${lessonid}`, { method: 'PUT', headers: staff, body: {
            lessonname: newLessonName, lessonorder: lesson.lessonorder, total_points: 100, levelid: lesson.levelid,
            passing_points: 0 } });
          if (renamed.status !== 200) throw new Error(`PUT /lesson/${lessonid} answered ${said(renamed)}`);
          for (const school of [demo, schoolB]) {
            const schoolusername = `fleetnew${crypto.randomBytes(3).toString('hex')}`;
            const standard = ((await central!('standards').where({ schoolname: school.schoolname }).first()) as Row)
              .standardid;
            const made = await call(proxy, '/student/create?online=false', { method: 'POST', headers: staff, body: {
              curriculumid: [DEMO_IDS.curriculumid], schoolid: school.schoolid, standard, students: [{
                studentfirstname: 'Newcomer', studentlastname: 'Fleet', dateofjoin: '05-01-2026', genderid: '1',
                city: 'Phnom Penh', country: DEMO_IDS.countryname, state: 'Phnom Penh', schoolusername,
                schooluserpasswordhash: DEMO_IDS.password }] } });
            if (made.status !== 200)
              throw new Error(`POST /student/create for ${school.schoolname} answered ${said(made)}`);
            newLearners[school.schoolname] = schoolusername;
          }
        };
        await Promise.all([...work, changes()]);
        const failed = boxes.filter((b) => b.submitFailures);
        if (failed.length)
          throw new Error(failed.map((b) => `${b.name}: ${b.submitFailures} submissions refused`).join('; '));
        return `${boxes.map((b) => `${b.name} ${b.submitted}`).join(', ')} results; ` +
          `${offBox.name}'s link off throughout`;
      });
    offBox.link!.setOff(false);

    // ---- everything reaches central ----------------------------------------------------------------
    const resultIds = async (b: Box) =>
      ((await b.db!('studentprogress').select('studentprogressid')) as Row[]).map((r) => String(r.studentprogressid));
    await check('every box\'s journal drains to central once its link lets it', async () => {
      await waitFor('every box acknowledged up to its last journal entry', 240_000, async () => {
        for (const b of boxes) {
          const waiting = Number(((await b.db!('fleetchanges').count({ n: '*' }).first()) as Row).n);
          if (waiting > 0) return false;
        }
        return true;
      });
      return boxes.map((b) => `${b.name}: journal empty`).join(', ');
    });

    await check('both central instances took pieces through HAProxy', async () => {
      const imported = ports.central.map((p) => fs.readFileSync(path.join(logs, `central-${p}.log`), 'utf8')
        .split('\n').filter((l) => l.includes('"fleet piece imported"')).length);
      if (imported.some((n) => n === 0)) throw new Error(`pieces imported per instance: ${imported.join(' and ')}`);
      return `pieces imported: ${imported.map((n, i) => `${n} by the instance on ${ports.central[i]}`).join(', ')}`;
    });

    let totals = { results: 0, questions: 0, access: 0 };
    await check('every row written on a box is at central exactly once, with the same contents', async () => {
      const problems: string[] = [];
      const seen: Record<string, number> = {};
      for (const [table, key] of COMPARED) {
        let fromBoxes = 0;
        for (const b of boxes) {
          // The rows written on the box: not those it took from central before its learners began.
          const mine = ((await b.db!(table).select('*')) as Row[]).filter((r) => !b.held?.[table]?.has(String(r[key])));
          fromBoxes += mine.length;
          const theirs = await rowsByIds(central!, table, key, mine.map((r) => String(r[key])));
          for (const row of mine) {
            const there = theirs.get(String(row[key]));
            if (!there) problems.push(`${b.name}: ${table} ${String(row[key])} missing at central`);
            else {
              const d = differences(row, there);
              if (d.length)
                problems.push(`${b.name}: ${table} ${String(row[key])} differs (${d.slice(0, 3).join('; ')})`);
            }
          }
          if (table === 'studentprogress' && mine.length !== b.submitted)
            problems.push(`${b.name}: ${mine.length} results on the box, ${b.submitted} submitted`);
        }
        // Nothing doubled: central holds what it held before the boxes began, plus exactly the boxes' rows.
        const now = await countOf(central!, table);
        if (now !== before[table] + fromBoxes)
          problems.push(`central holds ${now} ${table} rows, expected ${before[table]} + ${fromBoxes}`);
        seen[table] = fromBoxes;
      }
      totals = { results: seen.studentprogress, questions: seen.studentprogressquestions, access: seen.rpiuseraccess };
      if (problems.length) throw new Error(`${problems.length} problems: ${problems.slice(0, 5).join(' | ')}`);
      return `${totals.results} results, ${totals.questions} question rows and ${totals.access} sign-in rows, ` +
        'each at central once and equal column by column; central\'s counts grew by exactly these';
    });

    await check('nothing lost or doubled across many cuts', async () => {
      const sum = (k: 'outages' | 'cutConnections' | 'cutInFlight' | 'refused') =>
        boxes.reduce((n, b) => n + b.link!.stats[k], 0);
      const failedRuns = boxes.map((b) => failedRunsOf(b)).reduce((a, n) => a + n, 0);
      const seen = `${sum('outages')} outages, ${sum('cutConnections')} open connections cut (${sum('cutInFlight')} ` +
        `with bytes in flight), ${sum('refused')} connections refused while down, ${failedRuns} agent runs failed ` +
        'and were retried; the rows above arrived once each all the same';
      if (sum('outages') < 20 || sum('cutInFlight') < 10) throw new Error(`too few cuts to prove anything: ${seen}`);
      return seen;
    });

    await check('a lesson changed and a learner added at central reach every box', async () => {
      await waitFor('the lesson and the new learners on every box', 180_000, async () => {
        for (const b of boxes) {
          const lesson = (await b.db!('lessons').where({ lessonid: DEMO_IDS.lessons[0].lessonid }).first()) as Row;
          if (lesson?.lessonname !== newLessonName) return false;
          const learner = await b.db!('schoolusers').where({ schoolusername: newLearners[b.schoolname] }).first();
          if (!learner) return false;
        }
        return true;
      });
      // A box holds its own school's learners only.
      const leaks: string[] = [];
      for (const b of boxes) {
        for (const [school, u] of Object.entries(newLearners)) {
          if (school !== b.schoolname && (await b.db!('schoolusers').where({ schoolusername: u }).first()))
            leaks.push(`${b.name} holds ${u} of ${school}`);
        }
      }
      if (leaks.length) throw new Error(leaks.join('; '));
      return `"${newLessonName}" and ${Object.values(newLearners).join(', ')} on their schools' boxes, and on no other`;
    });

    const skewed = boxes.find((b) => b.clockShiftMs)!;
    await check('the box whose clock is three years behind lost nothing, and central measured its skew', async () => {
      const box = (await central!('boxes').where({ boxid: skewed.boxid }).first()) as Row;
      const skew = Number(box.clockskewms);
      if (Math.abs(skew - THREE_YEARS_MS) > 24 * 3600 * 1000)
        throw new Error(`central recorded a skew of ${skew} ms, not about ${THREE_YEARS_MS}`);
      // The box stamps sign-ins with its own clock: those rows say three years ago, at central as on the box.
      const signin = (await skewed.db!('rpiuseraccess').orderBy('logintime').first()) as Row | undefined;
      const there = signin && ((await central!('rpiuseraccess').where({ rpiuseraccessid: signin.rpiuseraccessid })
        .first()) as Row | undefined);
      if (!signin || !there) throw new Error(`the box's sign-in ${String(signin?.rpiuseraccessid)} is not at central`);
      const year = (v: unknown) => normal(v) as string;
      if (new Date(year(signin.logintime)).getTime() > Date.now() - THREE_YEARS_MS + 24 * 3600 * 1000)
        throw new Error(`the box stamped its sign-in ${year(signin.logintime)}: its clock was not behind`);
      return `central measured ${(skew / (365 * 24 * 3600 * 1000)).toFixed(2)} years; the box's sign-ins stamped ` +
        `${year(signin.logintime).slice(0, 10)} and its ${skewed.submitted} results are all at central (above)`;
    });

    // ---- one school's box credential against another school ---------------------------------------------
    await check("a box's credential is refused on another school's content, roster and activity", async () => {
      const reg = await call(proxy, '/fleet/boxes', { method: 'POST', headers: staff,
        body: { schoolid: DEMO_IDS.schoolid, name: 'Fleet test probe' } });
      const { box, enrolmentcode } = reg.json().data as { box: { boxid: string }; enrolmentcode: string };
      const probeSecret = crypto.randomBytes(32).toString('hex');
      const en = await call(proxy, '/fleet/enrol', { method: 'POST',
        headers: { Authorization: `Enrol ${enrolmentcode}` },
        body: { secret: probeSecret, version: '1.0.0', protocol: 1 } });
      if (en.status !== 200) throw new Error(`the probe's enrolment answered ${said(en)}`);
      const boxAuth = { Authorization: `Box ${box.boxid}.${probeSecret}` };
      const b3 = boxes.find((b) => b.schoolname === schoolB.schoolname)!;
      const bLearner = (await central!('students').where({ schoolname: schoolB.schoolname }).first()) as Row;
      const probes: Array<[string, string, unknown?]> = [
        ['GET', `/school/${schoolB.schoolid}`],
        ['GET', `/sync/content?schoolname=${encodeURIComponent(schoolB.schoolname)}`],
        ['GET', `/student/all?schoolname=${encodeURIComponent(schoolB.schoolname)}`],
        ['POST', '/student', { schoolname: schoolB.schoolname }],
        ['GET', `/student/stats/${String(bLearner.studentid)}/quiz`],
        ['GET', `/export/${encodeURIComponent(schoolB.schoolname)}/students`],
        ['POST', `/sync/cloud/${encodeURIComponent(schoolB.schoolname)}/students`],
        ['PUT', '/log/import'],
      ];
      const seen: string[] = [];
      for (const [method, p, body] of probes) {
        const r = await call(proxy, p, { method, headers: boxAuth, body });
        if (r.status !== 401 && r.status !== 403)
          throw new Error(`${method} ${p} with the box's credential answered ${said(r)}`);
        seen.push(`${method} ${p.split('?')[0]} ${r.status}`);
      }
      // Activity: a piece naming school B's learner, sent with the demo school's box credential.
      const template = (await b3.db!('studentprogress').first()) as Row;
      const questions = (await b3.db!('studentprogressquestions')
        .where({ studentprogressid: template.studentprogressid })) as Row[];
      const forgedId = crypto.randomUUID();
      const doc = { log: { result: [{ ...template, studentprogressid: forgedId,
        studentprogressquestions: questions.map((q) => ({ ...q, studentprogressquestionid: crypto.randomUUID(),
          studentprogressid: forgedId })) }],
        progress: Object.fromEntries(PROGRESS_KEYS.map((k) => [k, []])), access: [] } } as unknown as LogDocument;
      const zip = await streamToBuffer(writeLogZipFromDocument(doc));
      const boundary = `----fleet${crypto.randomBytes(6).toString('hex')}`;
      const form = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="importfile"; filename="piece.zip"\r\n` +
          'Content-Type: application/zip\r\n\r\n'),
        zip, Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      // What central holds for school B, and anything an import could leave: results, pending rows, syncs.
      const ofB = async () => [
        Number(((await central!('studentprogress as p').join('students as s', 's.studentid', 'p.studentid')
          .where('s.schoolname', schoolB.schoolname).count({ n: '*' }).first()) as Row).n),
        await countOf(central!, 'studentprogress'), await countOf(central!, 'logimportpending'),
      ].join('/');
      const before = await ofB();
      const piece = await call(proxy, '/fleet/box/log', { method: 'POST', body: form, headers: { ...boxAuth,
        'Content-Type': `multipart/form-data; boundary=${boundary}`, 'X-Fleet-First': '1', 'X-Fleet-Last': '1',
        'X-Fleet-Protocol': '1' } });
      const written = await central!('studentprogress').where({ studentprogressid: forgedId }).first();
      const after = await ofB();
      if (written || after !== before)
        throw new Error(`central kept school B's result sent by a demo school box (answer ${said(piece)})`);
      // The piece was read and its rows turned away (not merely a piece central could not read).
      const answer = piece.status === 200 ? (piece.json().data as { refused?: number }) : undefined;
      if (!answer?.refused) throw new Error(`the piece answered ${said(piece)}, not a refusal of its rows`);
      return `${seen.join(', ')}; a piece with ${schoolB.schoolname}'s learner's result: 200 with ` +
        `${answer.refused} rows refused, nothing written for that school (results/all results/pending ${after})`;
    });

    // ---- revocation ------------------------------------------------------------------------------------
    const revoked = 'a revoked box is refused on its next request, records it, and central takes nothing more';
    await check(revoked, async () => {
      const b = boxes[0];
      const rev = await call(proxy, `/fleet/boxes/${b.boxid}/revoke`, { method: 'POST', headers: staff });
      if (rev.status !== 200) throw new Error(`revoke answered ${said(rev)}`);
      const login = await call(b.port, '/auth/login', { method: 'POST',
        body: { studentusername: b.learners[0], studentpassword: DEMO_IDS.password } });
      const lt = (login.json().data as { accessToken: string }).accessToken;
      const lesson = DEMO_IDS.lessons[0];
      const starttime = Date.now() - 60_000;
      const r = await call(b.port, `/result/lesson/quiz/${lesson.lessonquizid}`, { method: 'POST',
        headers: { Authorization: `Bearer ${lt}` }, body: { starttime, endtime: starttime + 1000,
          result: lesson.lessonquizquestionids.map((lq, q) => ({ iscorrect: true, lessonquizid: lesson.lessonquizid,
            lessonquizquestionid: lq, questionid: lesson.questionids[q] })) } });
      if (r.status !== 200) throw new Error(`the submission after revoking answered ${said(r)}`);
      let words = '';
      await waitFor(`${b.name} records the refusal`, 120_000, async () => {
        words = String(((await b.db!('fleetidentity').first()) as Row).lasterror ?? '');
        return /revoked/.test(words);
      });
      const ids = await resultIds(b);
      const atCentral = await rowsByIds(central!, 'studentprogress', 'studentprogressid', ids);
      const missing = ids.filter((id) => !atCentral.has(id));
      if (missing.length !== 1)
        throw new Error(`${missing.length} of ${b.name}'s results are not at central, 1 expected`);
      const box = (await central!('boxes').where({ boxid: b.boxid }).first()) as Row;
      return `${b.name}: "${words}"; its result after revoking stayed on the box; central: ${String(box.state)}`;
    });

    // ---- summary -----------------------------------------------------------------------------------
    say('');
    say('| box | school | link | results on box | at central | pieces | outages | cuts (in flight) | failed runs ' +
      '| up bytes | down bytes |');
    say('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const b of boxes) {
      const ids = await resultIds(b);
      const at = (await rowsByIds(central!, 'studentprogress', 'studentprogressid', ids)).size;
      const pieces = await countOf(central!, 'syncs', { created_by: b.boxid });
      const s = b.link!.stats;
      say(`| ${b.name} | ${b.schoolname} | ${b.profile.name} | ${ids.length} | ${at} | ${pieces} | ${s.outages} | ` +
        `${s.cutConnections} (${s.cutInFlight}) | ${failedRunsOf(b)} | ${s.bytesUp} | ${s.bytesDown} |`);
    }
    say(`${totals.results} results, ${totals.questions} question rows, ${totals.access} sign-ins; ` +
      `${((Date.now() - t0) / 1000).toFixed(0)} s`);
  } catch (err) {
    say(`FAIL ${(err as Error).message}`);
    keep = true;
  } finally {
    for (const b of boxes) await b.db?.destroy();
    await central?.destroy();
    await stopChildren();
    for (const b of boxes) await b.link?.close();
    if (!keep && !anyCheckFailed())
      await admin.raw(`DROP DATABASE IF EXISTS ${tag}_central WITH (FORCE)`).catch(() => undefined);
    await admin.destroy();
  }
  printTable();
  const failed = keep || anyCheckFailed();
  if (failed) say(`\nlogs and data kept in ${tmp} (database ${tag}_central)`);
  else await fsp.rm(tmp, { recursive: true, force: true });
  return failed ? 1 : 0;
}

async function streamToBuffer(s: NodeJS.ReadableStream | Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

exitWith(main);
