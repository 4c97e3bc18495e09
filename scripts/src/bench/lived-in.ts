import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { central, DEMO, repoRoot, seedDemoContent, type Knex, type TestDatabase } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import {
  SIX_MONTH_SCHOOL,
  learnersOf,
  logSource,
  writeLogZipFile,
  type Learner,
  type LogShape,
} from './log-import-data';
import { collectRows, p99, pgCeiling, seedSchool, sqliteCeiling, TEACHER, uploadLog } from './log-import';
import { benchDatabase, procMb, resetPeakRss, startCentral, stopServer } from './servers';

// `make bench`: the log import on a server that has lived a while, not only on a fresh one. Central starts in
// production mode as `npm start` starts it; a staff member signs in and enrols a teacher and a school's 40
// learners through the API; 20 connections read GET /curriculum/all for 10 s; the teacher uploads the
// six-month log of those learners twice; then 500 more learners are enrolled in one request and the log is
// uploaded once more. The server's RSS (all its threads) is sampled throughout; target: at most 160 MB at
// any point. Then the scaling run: the reference log and a ten-times log (same 40 learners, ten times the
// rows) each imported into a fresh server; target: the ten-times import within 10.5x the reference import's
// time, with the slowest concurrent GET / under 50 ms.

const TARGETS = { rssMb: 160, scaling: 10.5, slowestMs: 50 };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 10);
const SCALE = Number(process.env.BENCH_LOG_SCALE ?? 10);
const STAFF = { lmsusername: 'bench.lived@lms.local', password: 'BenchLived1' };
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

async function call(
  origin: string,
  method: string,
  url: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ status: number; json: { data?: unknown; errormessage?: string } }> {
  const res = await fetch(`${origin}${url}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { data?: unknown; errormessage?: string } };
}

async function signIn(origin: string, url: string, lmsusername: string, lmsuserpassword: string): Promise<string> {
  const r = await call(origin, 'POST', url, undefined, { lmsusername, lmsuserpassword });
  const token = (r.json.data as { accessToken?: string } | undefined)?.accessToken;
  if (r.status !== 200 || !token) throw new Error(`${url} answered ${r.status} ${r.json.errormessage ?? ''}`);
  return token;
}

/** The server's RSS, sampled every 50 ms, and its kernel-kept peak: the largest of both within each phase. */
class RssWatch {
  private timer: NodeJS.Timeout;
  private sampled = 0;
  readonly phases: Array<{ name: string; seconds: number; endMb: number; peakMb: number }> = [];
  private started = process.hrtime.bigint();

  constructor(private readonly pid: number) {
    resetPeakRss(pid);
    this.timer = setInterval(() => { this.sampled = Math.max(this.sampled, procMb(pid, 'VmRSS')); }, 50);
  }

  /** Ends the current phase under `name`. */
  phase(name: string): void {
    const peakMb = Math.max(this.sampled, procMb(this.pid, 'VmHWM'), procMb(this.pid, 'VmRSS'));
    this.phases.push({
      name,
      seconds: Number(process.hrtime.bigint() - this.started) / 1e9,
      endMb: procMb(this.pid, 'VmRSS'),
      peakMb,
    });
    this.sampled = 0;
    resetPeakRss(this.pid);
    this.started = process.hrtime.bigint();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

const learnerRow = (schoolusername: string, i: number) => ({
  studentfirstname: `Learner ${i}`,
  studentlastname: 'Bench',
  dateofjoin: '05-01-2026',
  genderid: String(1 + (i % 2)),
  city: 'Accra',
  country: 'Ghana',
  state: 'Greater Accra',
  schoolusername,
  schooluserpasswordhash: `Pass${i}x`,
});

/** Enrols `n` learners through POST /student/create (at most 500 a request, the route's limit). */
async function enrol(origin: string, token: string, prefix: string, n: number): Promise<void> {
  for (let from = 0; from < n; from += 500) {
    const students = Array.from({ length: Math.min(500, n - from) }, (_, k) =>
      learnerRow(`${prefix}${from + k}`, from + k),
    );
    const r = await call(origin, 'POST', '/student/create', token, {
      curriculumid: [DEMO.curriculumid],
      schoolid: DEMO.schoolid,
      standard: DEMO.standardid,
      students,
    });
    if (r.status !== 200) throw new Error(`POST /student/create answered ${r.status} ${r.json.errormessage ?? ''}`);
  }
}

/** 20 connections of guarded reads for `seconds`, from the load generator's own process. */
function guardedReads(
  origin: string,
  token: string,
  seconds: number,
): Promise<{ requests: number; errors: number; rps: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        path.join(repoRoot, 'scripts/dist/bench/load.js'),
        `${origin}/curriculum/all`,
        '20',
        String(seconds),
        `Bearer ${token}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as { requests: number; errors: number; rps: number })
        : reject(new Error(`load generator exited with ${code}`)),
    );
  });
}

/** One PUT /log/import with GET / probed meanwhile. */
async function upload(
  origin: string,
  token: string,
  zipFile: string,
): Promise<{ seconds: number; p99Ms: number; slowestMs: number }> {
  const { seconds, latencies } = await uploadLog(origin, token, zipFile);
  return { seconds, p99Ms: p99(latencies), slowestMs: Math.max(...latencies) };
}

async function seedStaff(db: Knex): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
    hashPassword(p: string): Promise<string>;
  };
  const lmsuserid = crypto.randomUUID();
  await db('lmsusers').insert({
    lmsuserid,
    lmsusername: STAFF.lmsusername,
    lmsuserpasswordhash: await hashPassword(STAFF.password),
    firstname: 'Bench',
    lmsuserrole: ROLE_IDS.superadmin,
    isverified: true,
    isdisabled: false,
  });
  await db('lmsusers_roles').insert({ lmsuserid, roleid: ROLE_IDS.superadmin });
}

const CONTENT = {
  curriculumid: DEMO.curriculumid,
  gradeid: DEMO.gradeid,
  levelid: DEMO.levelid,
  lessonid: DEMO.lessonid,
};

/** The whole lived-in sequence on one fresh database and server; the phases with their RSS. */
async function livedIn(pgUrl: string | undefined, work: string): Promise<RssWatch['phases']> {
  const tdb: TestDatabase = await benchDatabase(central, pgUrl);
  const objectDir = await fsp.mkdtemp(path.join(work, 'objects-'));
  let child: ChildProcess | undefined;
  let watch: RssWatch | undefined;
  try {
    await seedDemoContent(tdb.db);
    await seedStaff(tdb.db);
    const server = await startCentral(tdb.url, {
      LOG_IMPORT_ENABLED: '1',
      OBJECT_DIR: objectDir,
      MAX_UPLOAD_MB: '500',
    });
    child = server.child;
    const { origin } = server;
    watch = new RssWatch(child.pid!);
    await new Promise((r) => setTimeout(r, 1000));
    watch.phase('started, idle 1 s');

    const staff = await signIn(origin, '/auth/login', STAFF.lmsusername, STAFF.password);
    const teacher = await call(origin, 'POST', '/teacher/create', staff, {
      schoolname: DEMO.schoolname,
      teachers: [{ schoolusername: TEACHER.schoolusername, schooluserpasswordhash: TEACHER.password }],
    });
    if (teacher.status !== 200)
      throw new Error(`POST /teacher/create answered ${teacher.status} ${teacher.json.errormessage ?? ''}`);
    await enrol(origin, staff, 'lived', SIX_MONTH_SCHOOL.learners);
    watch.phase(`staff sign-in, a teacher and ${SIX_MONTH_SCHOOL.learners} learners enrolled`);

    const reads = await guardedReads(origin, staff, READ_SECONDS);
    if (reads.errors) throw new Error(`guarded reads: ${reads.errors} errors`);
    watch.phase(`${READ_SECONDS} s of GET /curriculum/all, 20 connections (${fmt(reads.rps)} req/s)`);

    // The six-month log of the learners just enrolled (written by this process while the server idles).
    const learners: Learner[] = await tdb
      .db('students as s')
      .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .where('u.schoolusername', 'like', 'lived%')
      .orderBy('u.schoolusername')
      .select('s.studentid', 's.schooluserid');
    const zipFile = path.join(work, 'lived-log.zip');
    await writeLogZipFile(zipFile, logSource(SIX_MONTH_SCHOOL, learners, CONTENT));
    const token = await signIn(origin, '/auth/school/login', TEACHER.schoolusername, TEACHER.password);
    watch.phase('log written, teacher sign-in');

    const first = await upload(origin, token, zipFile);
    watch.phase(`first import (${fmt(first.seconds, 2)} s)`);
    const again = await upload(origin, token, zipFile);
    watch.phase(`re-import (${fmt(again.seconds, 2)} s)`);
    await enrol(origin, staff, 'bulk', 500);
    watch.phase('500 learners enrolled in one request');
    const third = await upload(origin, token, zipFile);
    watch.phase(`re-import after the bulk enrolment (${fmt(third.seconds, 2)} s)`);
    return watch.phases;
  } finally {
    watch?.stop();
    if (child) await stopServer(child);
    await tdb.dispose().catch(() => undefined);
    await fsp.rm(objectDir, { recursive: true, force: true });
  }
}

/** One log imported twice into a fresh database and server: the two times and the probe's figures. */
async function importFresh(pgUrl: string | undefined, work: string, learners: Learner[], zipFile: string) {
  const tdb: TestDatabase = await benchDatabase(central, pgUrl);
  const objectDir = await fsp.mkdtemp(path.join(work, 'objects-'));
  let child: ChildProcess | undefined;
  try {
    await seedSchool(tdb.db, learners);
    const server = await startCentral(tdb.url, {
      LOG_IMPORT_ENABLED: '1',
      OBJECT_DIR: objectDir,
      MAX_UPLOAD_MB: '1000',
    });
    child = server.child;
    const token = await signIn(server.origin, '/auth/school/login', TEACHER.schoolusername, TEACHER.password);
    resetPeakRss(child.pid!);
    const first = await upload(server.origin, token, zipFile);
    const again = await upload(server.origin, token, zipFile);
    return { first, again, peakMb: procMb(child.pid, 'VmHWM') };
  } finally {
    if (child) await stopServer(child);
    await tdb.dispose().catch(() => undefined);
    await fsp.rm(objectDir, { recursive: true, force: true });
  }
}

/**
 * The plain ceiling of a log's rows (prepared INSERT loop on SQLite, COPY on PostgreSQL) into a fresh database, in
 * seconds.
 */
async function ceilingOf(pgUrl: string | undefined, learners: Learner[], zipFile: string): Promise<number> {
  const rows = await collectRows(zipFile);
  const tdb: TestDatabase = await benchDatabase(central, pgUrl);
  try {
    await seedSchool(tdb.db, learners);
    if (pgUrl) return await pgCeiling(tdb.url, rows);
    await tdb.db.destroy();
    return sqliteCeiling(tdb.target.connection, rows);
  } finally {
    await tdb.dispose().catch(() => undefined);
  }
}

export async function runLivedInBench(): Promise<void> {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-bench-lived-'));
  const out = (s: string) => process.stdout.write(`${s}\n`);
  try {
    const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    const databases: Array<[string, string | undefined]> = [
      ['SQLite', undefined],
      ...(pgUrl ? [['PostgreSQL', pgUrl] as [string, string]] : []),
    ];
    out(
      `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}; ${ROUNDS} ` +
        `round${ROUNDS === 1 ? '' : 's'} per database (RSS: the largest of the rounds)`,
    );
    const verdicts: string[] = [];
    for (const [name, url] of ROUNDS > 0 ? databases : []) {
      const rounds: Array<RssWatch['phases']> = [];
      for (let i = 0; i < ROUNDS; i += 1) rounds.push(await livedIn(url, work));
      out('');
      out(`| ${name}: phase | RSS at its end | peak RSS in it |`);
      out('|---|---:|---:|');
      for (const [k, p] of rounds[0].entries()) {
        out(
          `| ${p.name} | ${fmt(Math.max(...rounds.map((r) => r[k].endMb)))} MB ` +
            `| ${fmt(Math.max(...rounds.map((r) => r[k].peakMb)))} MB |`,
        );
      }
      const peak = Math.max(...rounds.flatMap((r) => r.map((p) => p.peakMb)));
      verdicts.push(
        `${name}, lived-in sequence: peak RSS ${fmt(peak)} MB (${peak <= TARGETS.rssMb ? 'meets' : 'MISSES'} ` +
          `<= ${TARGETS.rssMb} MB)`,
      );
    }

    // Scaling: the reference log and one of SCALE times its rows (the same 40 learners), each into a fresh server.
    if (SCALE > 1) await scaling(databases, work, out, verdicts);
    out('');
    for (const v of verdicts) out(v);
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}

async function scaling(
  databases: Array<[string, string | undefined]>,
  work: string,
  out: (s: string) => void,
  verdicts: string[],
): Promise<void> {
  {
    const learners = learnersOf(SIX_MONTH_SCHOOL);
    const big: LogShape = {
      ...SIX_MONTH_SCHOOL,
      results: SIX_MONTH_SCHOOL.results * SCALE,
      progressRows: SIX_MONTH_SCHOOL.progressRows * SCALE,
      accessRows: SIX_MONTH_SCHOOL.accessRows * SCALE,
    };
    const refZip = path.join(work, 'reference.zip');
    const bigZip = path.join(work, `x${SCALE}.zip`);
    await writeLogZipFile(refZip, logSource(SIX_MONTH_SCHOOL, learners, CONTENT));
    const bigBytes = await writeLogZipFile(bigZip, logSource(big, learners, CONTENT));
    out('');
    out(
      `scaling: the reference log and one of ${SCALE}x its rows (ZIP ${fmt(bigBytes / 2 ** 20, 1)} MB), each ` +
        `imported twice into a fresh server`,
    );
    out(
      '| database | log | ceiling | first import | re-import | GET / p99 / slowest (first import) | server peak RSS |',
    );
    out('|---|---|---:|---:|---:|---:|---:|');
    for (const [name, url] of databases) {
      const ref = await importFresh(url, work, learners, refZip);
      const x = await importFresh(url, work, learners, bigZip);
      // The same rows the plain way, at both sizes: how the database itself scales, whatever the import does.
      const ceilings = [await ceilingOf(url, learners, refZip), await ceilingOf(url, learners, bigZip)];
      for (const [k, [label, r]] of (
        [
          ['reference', ref],
          [`${SCALE}x`, x],
        ] as const
      ).entries()) {
        out(
          `| ${name} | ${label} | ${fmt(ceilings[k], 2)} s | ${fmt(r.first.seconds, 2)} s ` +
            `| ${fmt(r.again.seconds, 2)} s | ${fmt(r.first.p99Ms, 1)} / ${fmt(r.first.slowestMs, 1)} ms ` +
            `| ${fmt(r.peakMb)} MB |`,
        );
      }
      out(
        `| ${name} | ${SCALE}x / reference | ${fmt(ceilings[1] / ceilings[0], 1)}x ` +
          `| ${fmt(x.first.seconds / ref.first.seconds, 1)}x | ${fmt(x.again.seconds / ref.again.seconds, 1)}x | | |`,
      );
      const ratio = x.first.seconds / ref.first.seconds;
      const ratioAgain = x.again.seconds / ref.again.seconds;
      const slowest = Math.max(x.first.slowestMs, x.again.slowestMs);
      const mark = (ok: boolean) => (ok ? 'meets' : 'MISSES');
      verdicts.push(
        `${name}, ${SCALE}x log: first import ${fmt(ratio, 1)}x the reference's time, ` +
          `re-import ${fmt(ratioAgain, 1)}x (${mark(Math.max(ratio, ratioAgain) <= TARGETS.scaling)} ` +
          `<= ${TARGETS.scaling}x; the plain ceiling ${fmt(ceilings[1] / ceilings[0], 1)}x); ` +
          `slowest GET / meanwhile ${fmt(slowest, 1)} ms (${mark(slowest < TARGETS.slowestMs)} ` +
          `< ${TARGETS.slowestMs} ms)`,
      );
    }
  }
}
