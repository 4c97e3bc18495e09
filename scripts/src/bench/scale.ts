import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEMO, central, createKnex, repoRoot, type Knex, type TestDatabase } from '@lms/db';
import {
  LOG_PRIMARY_KEYS,
  PROGRESS_COLLECTIONS,
  PROGRESS_KEYS,
  ROLE_IDS,
  type LogSource,
  type LogTable,
} from '@lms/shared';
import { SIX_MONTH_SCHOOL, learnersOf, logSource, writeLogZipFile } from './log-import-data';
import { TEACHER, seedSchool as seedLogSchool, uploadLog } from './log-import';
import { seedContent } from './reports';
import { benchDatabase, startCentral, stopServer } from './servers';

// `BENCH=scale make bench` (PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL): 50 schools x 40 learners
// grown to 0.1 M, 1 M and 10 M results (BENCH_SCALE_STEPS) by server-side bulk inserts of the log's shape
// (results with five answers each, sign-ins, app use), and at each step, after a CHECKPOINT, fresh imports of
// the log benchmark's six-month school (145,000 rows, over HTTP; median of BENCH_SCALE_IMPORTS) and every
// report of the admin UI for a superadmin and an Admin narrowed to the 50 schools, medians of
// BENCH_SCALE_REQUESTS requests. Targets: each report within 1 s at every step and within 1.5x of its time
// at the first step; the import within 1.5x too. Every timed import carries rows the database has never seen
// (new random keys, as tablets make them, and a random seed for their values, also on a BENCH_SCALE_FROM
// schema); each prints the rows it inserted and updated (the server's tuple counters of the log's tables),
// and the run fails when one inserted fewer rows than it sent. A re-send of a log already imported is timed
// apart and reported as such.

const STEPS = (process.env.BENCH_SCALE_STEPS ?? '100000,1000000,10000000').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 3);
const SCHOOLS = 50;
const LEARNERS = 40;
const ANSWERS = Number(process.env.BENCH_SCALE_ANSWERS ?? 5);
// Fresh imports timed at each step (their median is the step's figure).
const IMPORTS = Number(process.env.BENCH_SCALE_IMPORTS ?? 3);
const TARGETS = { reportMs: 1000, ratio: 1.5 };
// BENCH_SCALE_KEEP=1 leaves the grown schema in place (its URL is printed) for reading plans afterwards.
const KEEP = process.env.BENCH_SCALE_KEEP === '1';
// BENCH_SCALE_FROM=<a kept schema's URL> times one step on it as it is (no growth), and keeps it.
const FROM = process.env.BENCH_SCALE_FROM;
const STAFF = { password: 'BenchScale1' };

const GROWN = [
  'studentprogress',
  'studentprogressquestions',
  'studentquizresults',
  'studentappusagetotals',
  'rpiuseraccess',
  'studentappusages',
  'studentlessonsprogress',
  'studentlevelsprogress',
  'studentgradesprogress',
  'students',
  'schoolusers',
];

/** Tables kept by triggers on the grown ones, one row per learner and quiz (or account). */
const SUMMARY = ['studentquizresults', 'studentappusagetotals'];

const SETTINGS = ['shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'effective_cache_size'];

const id = () => crypto.randomUUID();
const LOG_TABLES = Object.keys(LOG_PRIMARY_KEYS) as LogTable[];
type Rows = Iterable<Record<string, unknown>>;

/**
 * The rows of `source` under new random keys (a result's answers under its new key), counted per table as
 * the ZIP is written: however the values were seeded, no key can be one the database already holds.
 */
function freshKeys(source: LogSource, sent: Map<LogTable, number>): LogSource {
  const count = (table: LogTable) => sent.set(table, (sent.get(table) ?? 0) + 1);
  function* results() {
    for (const r of source.result as Rows) {
      const studentprogressid = id();
      count('studentprogress');
      const questions = ((r.studentprogressquestions ?? []) as Array<Record<string, unknown>>).map((q) => {
        count('studentprogressquestions');
        return { ...q, studentprogressid, studentprogressquestionid: id() };
      });
      yield { ...r, studentprogressid, studentprogressquestions: questions };
    }
  }
  function* rows(table: LogTable, from: Rows) {
    const pk = LOG_PRIMARY_KEYS[table];
    for (const r of from) {
      count(table);
      yield { ...r, [pk]: id() };
    }
  }
  return {
    result: results(),
    access: rows('rpiuseraccess', source.access as Rows),
    progress: Object.fromEntries(
      PROGRESS_KEYS.map((k) => [k, rows(PROGRESS_COLLECTIONS[k], source.progress[k] as Rows)]),
    ) as unknown as LogSource['progress'],
  };
}

type Tuples = Map<string, { ins: number; upd: number }>;

/**
 * Rows inserted and updated so far in the log's tables (pg_stat_user_tables; an upsert that updates counts as
 * an update, one that finds the row unchanged as neither). A server's sessions report them within a second
 * or so of going idle, so they are read until two readings a second apart agree.
 */
async function tupleCounts(db: Knex): Promise<Tuples> {
  const read = async () => {
    const { rows } = (await db.raw(
      `select relname, n_tup_ins::bigint as ins, n_tup_upd::bigint as upd from pg_stat_user_tables
       where schemaname = current_schema() and relname = any(?)`,
      [LOG_TABLES],
    )) as { rows: Array<{ relname: string; ins: number; upd: number }> };
    return new Map(rows.map((r) => [r.relname, { ins: Number(r.ins), upd: Number(r.upd) }]));
  };
  let last = await read();
  for (let i = 0; i < 20; i += 1) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await read();
    if (LOG_TABLES.every((t) => now.get(t)?.ins === last.get(t)?.ins && now.get(t)?.upd === last.get(t)?.upd)) {
      return now;
    }
    last = now;
  }
  return last;
}

/** What an import did to each table between two readings. */
function written(before: Tuples, after: Tuples): Map<LogTable, { inserted: number; updated: number }> {
  return new Map(
    LOG_TABLES.map((t) => [
      t,
      {
        inserted: (after.get(t)?.ins ?? 0) - (before.get(t)?.ins ?? 0),
        updated: (after.get(t)?.upd ?? 0) - (before.get(t)?.upd ?? 0),
      },
    ]),
  );
}

const sum = (xs: Iterable<number>) => [...xs].reduce((a, b) => a + b, 0);
const n = (x: number) => x.toLocaleString('en-US');
/** Whole pages written to the WAL since the server started (the first change of a page after a checkpoint). */
const fullPageImages = async (db: Knex) => Number((await db.raw('select wal_fpi from pg_stat_wal')).rows[0].wal_fpi);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

interface World {
  countryid: string;
  schools: Array<{ schoolid: string; schoolname: string; standardid: string; learners: string[] }>;
  quizzes: string[];
  practices: string[];
  levels: string[];
}

async function seedWorld(db: Knex): Promise<World> {
  const content = await seedContent(db);
  // The log school's demo curriculum brings its own subject of that name.
  await db('subjects').update({ subjectname: 'Scale Mathematics' });
  const countryid = id();
  await db('countries').insert({ countryid, countryname: 'Scaleland', expectedusage: 30 });
  const w: World = {
    countryid,
    schools: [],
    quizzes: content.lessons.map((l) => l.quizid),
    practices: content.lessons.map(() => id()),
    levels: content.levels.map((l) => l.levelid),
  };
  // A practice per lesson: a practice result refers to one of the curriculum's, as a tablet's does.
  await db('lessonpractices').insert(
    content.lessons.map((l, n) => ({
      lessonpracticeid: w.practices[n],
      lessonid: l.lessonid,
      lessonpracticeorder: 1,
      lessonpracticename: 'Practice',
      lessonpracticedescription: '',
    })),
  );
  for (let n = 0; n < SCHOOLS; n += 1) {
    const s = { schoolid: id(), schoolname: `Scale School ${n}`, standardid: id(), learners: [] as string[] };
    await db('schools').insert({
      schoolid: s.schoolid,
      schoolname: s.schoolname,
      countryid,
      curriculums: JSON.stringify([content.curriculumid]),
    });
    await db('standards').insert({
      standardid: s.standardid,
      standardname: 'Class 1',
      schoolid: s.schoolid,
      schoolname: s.schoolname,
    });
    const users = [];
    const students = [];
    for (let i = 0; i < LEARNERS; i += 1) {
      const schooluserid = id();
      const studentid = id();
      s.learners.push(studentid);
      users.push({
        schooluserid,
        schoolusername: `sc${n}l${i}`,
        schooluserpasswordhash: 'x',
        schooluserrole: 4,
        schoolname: s.schoolname,
      });
      students.push({
        studentid,
        studentfirstname: `Learner ${i}`,
        genderid: 1 + (i % 2),
        city: 'C',
        country: 'Scaleland',
        state: 'S',
        curriculumid: content.curriculumid,
        schooluserid,
        schoolname: s.schoolname,
        standard: s.standardid,
        isactive: true,
        type: 'offline',
      });
    }
    await db('schoolusers').insert(users);
    await db('students').insert(students);
    w.schools.push(s);
  }
  // A progress row per learner and lesson, level and grade (what a learner who went through the curriculum has).
  await db.raw(
    `insert into studentlessonsprogress (studentlessonprogressid, studentid, lessonid, levelid, gradeid, curid,
      progress, scores)
    select gen_random_uuid()::text, s.studentid, l.lessonid, l.levelid, lv.gradeid, ?, 100, 3
    from students s cross join lessons l join levels lv on lv.levelid = l.levelid where s.curriculumid = ?`,
    [content.curriculumid, content.curriculumid],
  );
  await db.raw(
    `insert into studentlevelsprogress (studentlevelprogressid, studentid, levelid, gradeid, curid, progress, scores)
    select gen_random_uuid()::text, s.studentid, lv.levelid, lv.gradeid, ?, 100, 3
    from students s cross join levels lv join grades g on g.gradeid = lv.gradeid where s.curriculumid = ? and
      g.curriculumid = ?`,
    [content.curriculumid, content.curriculumid, content.curriculumid],
  );
  await db.raw(
    `insert into studentgradesprogress (studentgradeprogressid, studentid, gradeid, curriculumid, progress, scores)
    select gen_random_uuid()::text, s.studentid, g.gradeid, ?, 50, 3 from students s cross join grades g
    where s.curriculumid = ? and g.curriculumid = ?`,
    [content.curriculumid, content.curriculumid, content.curriculumid],
  );
  return w;
}

/**
 * Hours between two rounds of one result per learner, going back in time from now: the first step's 0.1 M
 * results (50 rounds) then span 31 days, so that a report of the last month reads a full month at every step
 * and the later steps add years behind it (10 M results: 8.6 years), as a deployment's history grows.
 */
const ROUND_HOURS = 15;

/**
 * Results `from`..`to` (exclusive) of the 2,000 learners, spread back in time from now one round
 * (ROUND_HOURS) at a time; two in three a lesson quiz, one in six a level quiz, one in six a practice, each
 * referring to the curriculum's; ANSWERS answers each; one sign-in and one app-use row per four results.
 * Written by the server from generate_series: a bulk load, not the import path.
 */
async function grow(db: Knex, w: World, from: number, to: number): Promise<void> {
  const learners = w.schools.flatMap((s) => s.learners);
  const users = (await db('students')
    .whereIn(
      'standard',
      w.schools.map((s) => s.standardid),
    )
    .select('studentid', 'schooluserid')) as Array<{ studentid: string; schooluserid: string }>;
  const userOf = new Map(users.map((u) => [u.studentid, u.schooluserid]));
  const accounts = learners.map((l) => userOf.get(l)!);
  const chunk = 500_000;
  for (let a = from; a < to; a += chunk) {
    const b = Math.min(to, a + chunk);
    await db.transaction(async (trx) => {
      await trx.raw(
        `create temporary table grown on commit drop as
        select g, md5('r' || g || ?)::uuid::text as id, (?::text[])[1 + g % ?] as studentid,
          case when g % 6 < 4 then (?::text[])[1 + (g / ?) % ?] when g % 6 = 4 then (?::text[])[1 + (g / ?) % ?]
            else (?::text[])[1 + (g / ?) % ?] end as ref,
          case when g % 6 < 4 then 2 when g % 6 = 4 then 3 else 1 end as progresstype,
          now() - ((g / ?) * interval '${ROUND_HOURS} hours') as starttime, (g * 7919) % 101 as pct
        from generate_series(?::bigint, ?::bigint) g`,
        [
          String(from),
          learners,
          learners.length,
          w.quizzes,
          learners.length,
          w.quizzes.length,
          w.levels,
          learners.length,
          w.levels.length,
          w.practices,
          learners.length,
          w.practices.length,
          learners.length,
          a,
          b - 1,
        ],
      );
      await trx.raw(`insert into studentprogress (studentprogressid, studentid, ispass, studentprogressreferenceid,
        starttime, endtime,
          progresstype, resultpercentage, points, fullpoints, marks, scores)
        select id, studentid, pct >= 80, ref, starttime, starttime + interval '3 minutes', progresstype, pct, pct /
          10, 10, pct / 20, pct / 10
        from grown`);
      if (ANSWERS > 0) {
        await trx.raw(
          `insert into studentprogressquestions (studentprogressquestionid, studentprogressid, tries, iscorrect,
            referencequestionid)
          select md5(id || q)::uuid::text, id, 1 + q % 2, (pct + q) % 3 > 0, md5('q' || q)::uuid::text from grown
            cross join generate_series(1, ?) q`,
          [ANSWERS],
        );
      }
      await trx.raw(
        `insert into rpiuseraccess (rpiuseraccessid, userid, logintime, ipaddress, logouttime, timespent, status)
        select md5('a' || id)::uuid::text, (?::text[])[1 + g % ?], starttime, '10.0.0.1', starttime + interval
          '20 minutes', 1200, 1
        from grown where g % 4 = 0`,
        [accounts, accounts.length],
      );
      await trx.raw(
        `insert into studentappusages (studentappusageid, schooluserid, time_spent, last_updated, created_at)
        select md5('u' || id)::uuid::text, (?::text[])[1 + g % ?], 900, starttime, starttime from grown where g % 4
          = 1`,
        [accounts, accounts.length],
      );
    });
    // Every attempt writes a new version of its quiz's summary row, and the versions one transaction left
    // behind can be reused only once it ended and a vacuum came by: without this, 10 M results grown in
    // chunks of 500,000 back to back leave the summary table mostly free space, which no school's import
    // does (20,000 results a transaction, autovacuum between them).
    for (const table of SUMMARY) await db.raw('vacuum ??', [table]);
  }
}

/** The summary table's size and the share of it that holds no live row (its live rows' bytes against its pages). */
async function summaryFree(db: Knex): Promise<string> {
  const r = (
    (await db.raw(`select pg_relation_size('studentquizresults')::bigint as heap, count(*)::bigint as rows,
      coalesce(sum(pg_column_size(q.*) + 4), 0)::bigint as live from studentquizresults q`)) as {
      rows: Array<{ heap: number; rows: number; live: number }>;
    }
  ).rows[0];
  const heap = Number(r.heap);
  return `${(heap / 2 ** 20).toFixed(1)} MiB, ${n(Number(r.rows))} rows, ` +
    `${heap ? Math.max(0, Math.round(100 * (1 - Number(r.live) / heap))) : 0} % free`;
}

async function addStaff(db: Knex, name: string, schools?: string[]): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
    hashPassword(p: string): Promise<string>;
  };
  const lmsuserid = id();
  const roleid = schools ? ROLE_IDS.admin : ROLE_IDS.superadmin;
  await db('lmsusers').insert({
    lmsuserid,
    lmsusername: name,
    lmsuserpasswordhash: await hashPassword(STAFF.password),
    firstname: 'Bench',
    lmsuserrole: roleid,
    isverified: true,
    isdisabled: false,
    schools: schools ? JSON.stringify(schools) : null,
  });
  await db('lmsusers_roles').insert({ lmsuserid, roleid });
}

/** A fresh access token (taken again at each step: growing 10 M results outlasts a token's life). */
async function signIn(origin: string, route: string, name: string, password: string): Promise<string> {
  const res = await fetch(`${origin}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ lmsusername: name, lmsuserpassword: password }),
  });
  const token = ((await res.json()) as { data?: { accessToken?: string } }).data?.accessToken;
  if (!token) throw new Error(`${name}: sign-in answered ${res.status}`);
  return token;
}

/** The world of a kept schema (BENCH_SCALE_FROM): its 50 schools, their class and learners. */
async function worldOf(db: Knex): Promise<World> {
  const schools = (await db('schools').where('schoolname', 'like', 'Scale School %').select('schoolid', 'schoolname'))
    .map((r) => r as { schoolid: string; schoolname: string })
    .sort((a, b) => Number(a.schoolname.split(' ')[2]) - Number(b.schoolname.split(' ')[2]));
  const w: World = { countryid: '', schools: [], quizzes: [], practices: [], levels: [] };
  for (const sc of schools) {
    const standard = await db('standards').where({ schoolid: sc.schoolid }).first('standardid');
    const standardid = standard.standardid as string;
    const rows = await db('students').where({ standard: standardid }).orderBy('studentid').select('studentid');
    const learners = rows.map((r) => (r as { studentid: string }).studentid);
    w.schools.push({ ...sc, standardid, learners });
  }
  return w;
}

async function timed(
  origin: string,
  token: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ ms: number; bytes: number }> {
  const t0 = process.hrtime.bigint();
  const res = await fetch(`${origin}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const bytes = (await res.arrayBuffer()).byteLength;
  if (res.status !== 200) throw new Error(`${method} ${url} answered ${res.status}`);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, bytes };
}

function requests(w: World): Array<[string, string, string, unknown?]> {
  const f = (filters: Record<string, unknown>, pagesize = 20) => ({
    pageindex: 1,
    pagesize,
    filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
  });
  const classes = w.schools.map((s) => s.standardid);
  const all = f({ standard: classes });
  const cls = f({ standard: classes[0] });
  const learner = f({ studentid: w.schools[0].learners[0] });
  return [
    ['current level, 50 classes', 'POST', '/report/studentlastcompletedquiz', all],
    ['current level CSV, 50 classes', 'POST', '/report/studentlastcompletedquiz/download', all],
    ['quiz scores, one class', 'POST', '/report/studentprogress/class', cls],
    ['quiz scores CSV, one class', 'POST', '/report/studentprogress/class/download', cls],
    ['level quiz, one class', 'POST', '/report/studentlevelquiz/class', cls],
    ['quiz scores, one learner', 'POST', '/report/studentprogress', learner],
    ['level quiz, one learner', 'POST', '/report/studentlevelquiz', learner],
    ['grade progress, 50 classes', 'POST', '/report/student-grade-progress', all],
    ['lesson progress, one learner', 'POST', '/report/student-lesson-progress', learner],
    ['active status, 50 classes', 'POST', '/report/studentstatus', all],
    ['active status CSV, 50 classes', 'POST', '/report/studentstatus/download', all],
    ['reach dashboard', 'GET', '/report/dashboard?countryid=all'],
    ['gender', 'GET', '/report/gender?countryid=all&schoolname='],
    ['app usage', 'GET', '/report/studentusage'],
  ];
}

export async function runScaleBench(): Promise<void> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!pgUrl) throw new Error('the scale benchmark runs on PostgreSQL: set BENCH_DATABASE_URL or TEST_DATABASE_URL');
  out(
    `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}`,
  );
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-bench-scale-'));
  const tdb: TestDatabase = FROM
    ? (() => {
        const db = createKnex({ dialect: 'pg', connection: FROM }, { kinds: central.kinds });
        return { db, url: FROM, dispose: () => db.destroy() } as unknown as TestDatabase;
      })()
    : await benchDatabase(central, pgUrl);
  let api: ChildProcess | undefined;
  try {
    const db = tdb.db;
    // The server settings the import's figures depend on (docs/benchmarks.md#scale), printed with them.
    const settings = (await db.raw(
      `select name, current_setting(name) as value from pg_settings where name = any(?) order by name`,
      [SETTINGS],
    )) as { rows: Array<{ name: string; value: string }> };
    out(`PostgreSQL ${(await db.raw('show server_version')).rows[0].server_version}: ` +
      settings.rows.map((r) => `${r.name} ${r.value}`).join(', '));
    const t0 = Date.now();
    const w = FROM ? await worldOf(db) : await seedWorld(db);
    const logLearners = learnersOf(SIX_MONTH_SCHOOL);
    if (!FROM) await seedLogSchool(db, logLearners);
    const server = await startCentral(tdb.url, {
      LOG_IMPORT_ENABLED: '1',
      OBJECT_DIR: path.join(work, 'objects'),
      MAX_UPLOAD_MB: '200',
      RATE_LIMIT_MAX: '10000000',
    });
    api = server.child;
    const origin = server.origin;
    if (!FROM) {
      await addStaff(db, 'scale.super@lms.local');
      await addStaff(
        db,
        'scale.admin@lms.local',
        w.schools.map((s) => s.schoolid),
      );
    }
    const content = {
      curriculumid: DEMO.curriculumid,
      gradeid: DEMO.gradeid,
      levelid: DEMO.levelid,
      lessonid: DEMO.lessonid,
    };
    const list = requests(w);
    const figures = new Map<string, number[]>();
    const importSeconds: number[] = [];
    const importWal: number[] = [];
    const resendSeconds: number[] = [];
    const stale: string[] = [];
    const sizes: Array<{ results: number; bytes: number; seconds: number }> = [];
    let grown = FROM ? Number((await db('studentprogress').count({ n: '*' }).first())?.n) : 0;
    for (const [step, target] of (FROM ? [grown] : STEPS).entries()) {
      const g0 = Date.now();
      await grow(db, w, grown, target);
      grown = target;
      // What autovacuum does soon after a bulk load, on this schema's grown tables only (the server is shared).
      for (const table of GROWN) await db.raw('vacuum analyze ??', [table]);
      const results = Number((await db('studentprogress').count({ n: '*' }).first())?.n);
      const bytes = Number(
        (
          (await db.raw(`select sum(pg_total_relation_size(c.oid))::bigint as n from pg_class c
        join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'`)) as {
            rows: Array<{ n: string }>;
          }
        ).rows[0].n,
      );
      sizes.push({ results, bytes, seconds: (Date.now() - g0) / 1000 });
      out(`quiz summary table after the growth: ${await summaryFree(db)}`);
      // The growth's dirty pages written out first, so that the imports do not race the flushing of a bulk
      // load no school ever sends in one piece; a server in service checkpoints every few minutes anyway.
      await db.raw('checkpoint');
      const tokens = {
        superadmin: await signIn(origin, '/auth/login', 'scale.super@lms.local', STAFF.password),
        'narrowed admin': await signIn(origin, '/auth/login', 'scale.admin@lms.local', STAFF.password),
      };
      const teacher = await signIn(origin, '/auth/school/login', TEACHER.schoolusername, TEACHER.password);
      // Fresh logs (new random row keys, values from a new random seed), the same size and shape: the import
      // a school's upload of a new term is.
      const seconds: number[] = [];
      const walBytes: number[] = [];
      const fpis: number[] = [];
      const timeImport = async (zip: string, sent: Map<LogTable, number>, what: string) => {
        const before = await tupleCounts(db);
        const lsn0 = (await db.raw('select pg_current_wal_lsn() as l')).rows[0].l as string;
        const fpi0 = await fullPageImages(db);
        const took = (await uploadLog(origin, teacher, zip)).seconds;
        const wal = Number((await db.raw('select pg_wal_lsn_diff(pg_current_wal_lsn(), ?) as n', [lsn0])).rows[0].n);
        // The server's statistics reach pg_stat_wal and pg_stat_user_tables within a second or so of the commit.
        const did = written(before, await tupleCounts(db));
        const fpi = (await fullPageImages(db)) - fpi0;
        const inserted = sum([...did.values()].map((d) => d.inserted));
        const updated = sum([...did.values()].map((d) => d.updated));
        out(
          `  ${what}: ${took.toFixed(1)} s; sent ${n(sum(sent.values()))} rows, inserted ${n(inserted)}, ` +
            `updated ${n(updated)}; WAL ${(wal / 2 ** 20).toFixed(0)} MB; full-page images ${n(fpi)}`,
        );
        return { took, wal, fpi, did };
      };
      let resend: { zip: string; sent: Map<LogTable, number> } | undefined;
      for (let i = 0; i < IMPORTS; i += 1) {
        const zip = path.join(work, `log-${step}-${i}.zip`);
        const sent = new Map<LogTable, number>();
        const seed = crypto.randomInt(1, 2 ** 31);
        await writeLogZipFile(
          zip,
          freshKeys(logSource(SIX_MONTH_SCHOOL, logLearners, content, Date.now(), seed), sent),
        );
        const r = await timeImport(zip, sent, `fresh import ${i + 1}`);
        seconds.push(r.took);
        walBytes.push(r.wal);
        fpis.push(r.fpi);
        // A "fresh" import that did not insert every row it sent measured something else (a re-send's merge).
        for (const [table, rows] of sent) {
          const inserted = r.did.get(table)?.inserted ?? 0;
          if (inserted < rows) {
            stale.push(`step ${step + 1}, fresh import ${i + 1}: ${table} inserted ${n(inserted)} of ${n(rows)} sent`);
          }
        }
        if (resend) await fsp.rm(resend.zip);
        resend = { zip, sent };
      }
      importSeconds.push(median(seconds));
      importWal.push(median(walBytes));
      out(
        `imports: ${seconds.map((x) => `${x.toFixed(1)} s`).join(', ')}; ` +
          `WAL ${walBytes.map((b) => `${(b / 2 ** 20).toFixed(0)} MB`).join(', ')}; ` +
          `full-page images ${fpis.map((x) => n(x)).join(', ')}`,
      );
      // The same ZIP again, byte for byte: what a log sent twice costs (nothing new is written).
      if (resend) {
        resendSeconds.push((await timeImport(resend.zip, resend.sent, 're-send of the last one')).took);
        await fsp.rm(resend.zip);
      }
      for (const [who, token] of Object.entries(tokens)) {
        for (const [label, method, url, body] of list) {
          await timed(origin, token, method, url, body);
          const times: number[] = [];
          for (let i = 0; i < REQUESTS; i += 1) times.push((await timed(origin, token, method, url, body)).ms);
          const key = `${label} (${who})`;
          figures.set(key, [...(figures.get(key) ?? []), median(times)]);
        }
      }
      out(`quiz summary table after the imports: ${await summaryFree(db)}`);
      out(
        `step ${step + 1}: ${results.toLocaleString('en-US')} results, ` +
          `grown in ${sizes[step].seconds.toFixed(0)} s, ${(Date.now() - t0) / 1000} s so far`,
      );
    }
    const head = sizes.map((s) => `${(s.results / 1e6).toFixed(1)} M results`);
    out('');
    out(`| | ${head.join(' | ')} | last / first | target |`);
    out(`|---|${head.map(() => '---:|').join('')}---:|---|`);
    let misses = 0;
    const row = (label: string, xs: number[], unit: string, limit?: number) => {
      const ratio = xs[xs.length - 1] / xs[0];
      const ok = ratio <= TARGETS.ratio && (limit === undefined || xs.every((x) => x <= limit));
      if (!ok) misses += 1;
      const target = `<= ${TARGETS.ratio}x${limit === undefined ? '' : `, <= ${limit} ${unit}`}`;
      out(
        `| ${label} | ${xs.map((x) => `${x.toFixed(unit === 's' ? 1 : 0)} ${unit}`).join(' | ')} | ` +
          `${ratio.toFixed(2)} | ${target} ${ok ? 'OK' : 'MISSED'} |`,
      );
    };
    row(`one fresh import of the six-month log (145,000 rows), median of ${IMPORTS}`, importSeconds, 's');
    out(`| WAL written by that import | ${importWal.map((b) => `${(b / 2 ** 20).toFixed(0)} MB`).join(' | ')} | | |`);
    if (resendSeconds.length) {
      out(
        `| a re-send of an imported log (no new rows; not a target) | ` +
          `${resendSeconds.map((x) => `${x.toFixed(1)} s`).join(' | ')} | ` +
          `${(resendSeconds[resendSeconds.length - 1] / resendSeconds[0]).toFixed(2)} | |`,
      );
    }
    for (const [label, xs] of figures) row(label, xs, 'ms', TARGETS.reportMs);
    out(`| database size | ${sizes.map((s) => `${(s.bytes / 2 ** 30).toFixed(2)} GB`).join(' | ')} | | |`);
    out(`| bytes per result | ${sizes.map((s) => `${Math.round(s.bytes / s.results)}`).join(' | ')} | | |`);
    out(misses ? `${misses} figure(s) missed their target` : 'every target met');
    for (const line of stale) out(`not a fresh import: ${line}`);
    if (misses || stale.length) process.exitCode = 1;
  } finally {
    if (api) await stopServer(api);
    if (KEEP || FROM) {
      out(`kept: ${tdb.url}`);
      await tdb.db.destroy();
    }
    else await tdb.dispose().catch(() => undefined);
    await fsp.rm(work, { recursive: true, force: true });
  }
}
