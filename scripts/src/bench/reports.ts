import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { central, repoRoot, type Knex } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { SIX_MONTH_SCHOOL, learnersOf, logSource, type LogShape } from './log-import-data';
import { benchDatabase, procMb, resetPeakRss, startCentral, stopServer } from './servers';

// `make bench`: every report route against the reference data set: the log benchmark's six-month school
// plus 50 generated schools of 40 learners with six months of attempts each, written straight into a
// central database (SQLite, as a school's server runs; PostgreSQL too when BENCH_DATABASE_URL or
// TEST_DATABASE_URL is set). Per route: p50 and p95 over sequential requests, against one indexed read of a
// single learner's attempts over HTTP on the same server in the same run (target: every JSON report within
// 10x of it); and the server's peak RSS growth while it writes the largest CSV (target: < 30 MB).
// BENCH_REPORT_SCHOOLS and BENCH_REPORT_SCALE make the data set smaller for a quick look.

const SCHOOLS = Number(process.env.BENCH_REPORT_SCHOOLS ?? 50);
/** A fraction of the six-month school's rows per school (1 = the full log benchmark's shape). */
const SCALE = Number(process.env.BENCH_REPORT_SCALE ?? 1);
const REQUESTS = Number(process.env.BENCH_REPORT_REQUESTS ?? 30);
const TARGETS = { ratio: 10, csvRssMb: 30 };
const STAFF = { lmsusername: 'bench.reports@lms.local', password: 'BenchReports1' };

const GRADES = 3;
const LEVELS = 4;
const LESSONS = 5;

interface Content {
  curriculumid: string;
  grades: string[];
  levels: Array<{ levelid: string; gradeid: string }>;
  lessons: Array<{ lessonid: string; levelid: string; gradeid: string; quizid: string }>;
}

interface School {
  schoolid: string;
  schoolname: string;
  standardid: string;
  learners: Array<{ studentid: string; schooluserid: string }>;
}

const id = () => crypto.randomUUID();

async function insertMany(db: Knex, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  // SQLite binds at most 32,766 values and (Knex's multi-row insert) 500 compound selects per statement.
  const per = Math.min(400, Math.max(1, Math.floor(30_000 / Math.max(1, Object.keys(rows[0] ?? { a: 1 }).length))));
  for (let i = 0; i < rows.length; i += per) await db(table).insert(rows.slice(i, i + per));
}

export async function seedContent(db: Knex): Promise<Content> {
  const c: Content = { curriculumid: id(), grades: [], levels: [], lessons: [] };
  const subjectid = id();
  const questions = Array.from({ length: 5 }, () => id());
  await db('subjects').insert({ subjectid, subjectname: 'Mathematics' });
  await db('curriculums').insert({ curriculumid: c.curriculumid, curriculumname: 'Bench Maths', subjectid });
  await db('questions').insert(
    questions.map((questionid, i) => ({ questionid, templatetypeid: 1, questionidentifier: `bench${i}` })),
  );
  for (let g = 0; g < GRADES; g += 1) {
    const gradeid = id();
    c.grades.push(gradeid);
    await db('grades').insert({
      gradeid,
      curriculumid: c.curriculumid,
      gradename: `Grade ${g + 1}`,
      gradeorder: g + 1,
    });
    for (let l = 0; l < LEVELS; l += 1) {
      const levelid = id();
      c.levels.push({ levelid, gradeid });
      await db('levels').insert({ levelid, gradeid, levelname: `Level ${g + 1}.${l + 1}`, levelorder: l + 1 });
      await insertMany(
        db,
        'levelquizquestions',
        questions.map((questionid, n) => ({
          levelquizquestionid: id(),
          levelid,
          questionid,
          levelquizquestionorder: n + 1,
        })),
      );
      for (let s = 0; s < LESSONS; s += 1) {
        const lessonid = id();
        const quizid = id();
        c.lessons.push({ lessonid, levelid, gradeid, quizid });
        await db('lessons').insert({
          lessonid,
          levelid,
          lessonname: `Lesson ${g + 1}.${l + 1}.${s + 1}`,
          lessonorder: s + 1,
        });
        await db('lessonquizzes').insert({
          lessonquizid: quizid,
          lessonid,
          lessonquizorder: 1,
          lessonquizname: 'Quiz',
          lessonquizdescription: '',
        });
        await insertMany(
          db,
          'lessonquizquestions',
          questions.map((questionid, n) => ({
            lessonquizquestionid: id(),
            lessonquizid: quizid,
            questionid,
            lessonquizquestionorder: n + 1,
          })),
        );
      }
    }
  }
  return c;
}

/**
 * One school's six months, from the log benchmark's generator (the same rows a classroom log of that
 * shape carries), its content ids spread over the bench curriculum: lesson quizzes, level quizzes and the
 * progress rows of the lessons, levels and grades the attempts are at.
 */
export async function seedSchool(db: Knex, c: Content, n: number, shape: LogShape, countryid: string): Promise<School> {
  const school: School = {
    schoolid: id(),
    schoolname: `Bench School ${n}`,
    standardid: id(),
    learners: learnersOf(shape, 7 + n),
  };
  await db('schools').insert({
    schoolid: school.schoolid,
    schoolname: school.schoolname,
    countryid,
    curriculums: JSON.stringify([c.curriculumid]),
  });
  await db('standards').insert({
    standardid: school.standardid,
    standardname: 'Class 1',
    schoolid: school.schoolid,
    schoolname: school.schoolname,
  });
  await db('schoolusers').insert({
    schooluserid: id(),
    schoolusername: `teacher${n}`,
    schooluserpasswordhash: 'x',
    schooluserrole: 3,
    schoolname: school.schoolname,
  });
  await insertMany(
    db,
    'schoolusers',
    school.learners.map((l, i) => ({
      schooluserid: l.schooluserid,
      schoolusername: `s${n}l${i}`,
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
      schoolname: school.schoolname,
    })),
  );
  await insertMany(
    db,
    'students',
    school.learners.map((l, i) => ({
      studentid: l.studentid,
      studentfirstname: `Learner ${i}`,
      genderid: 1 + (i % 2),
      city: 'C',
      country: 'Benchland',
      state: 'S',
      curriculumid: c.curriculumid,
      schooluserid: l.schooluserid,
      schoolname: school.schoolname,
      standard: school.standardid,
      isactive: true,
      type: i % 3 ? 'offline' : 'online',
    })),
  );
  const source = logSource(
    shape,
    school.learners,
    {
      curriculumid: c.curriculumid,
      gradeid: c.grades[0],
      levelid: c.levels[0].levelid,
      lessonid: c.lessons[0].lessonid,
    },
    Date.now(),
    11 + n,
  );
  let k = 0;
  const attempts: Array<Record<string, unknown>> = [];
  for (const r of source.result as Iterable<Record<string, unknown>>) {
    const { studentprogressquestions: _questions, ...row } = r;
    const lesson = c.lessons[k % c.lessons.length];
    k += 1;
    // The log generator's types 1..4: lesson quizzes and level quizzes point at real content.
    if (row.progresstype === 2) row.studentprogressreferenceid = lesson.quizid;
    else if (row.progresstype === 3) row.studentprogressreferenceid = lesson.levelid;
    attempts.push(row);
  }
  await insertMany(db, 'studentprogress', attempts);
  const progress = source.progress as unknown as Record<string, Iterable<Record<string, unknown>>>;
  const spread = (
    rows: Iterable<Record<string, unknown>>,
    f: (r: Record<string, unknown>, l: Content['lessons'][number]) => void,
  ) => {
    const out: Array<Record<string, unknown>> = [];
    let i = 0;
    for (const r of rows) {
      f(r, c.lessons[i % c.lessons.length]);
      i += 1;
      out.push(r);
    }
    return out;
  };
  await insertMany(
    db,
    'studentlessonsprogress',
    spread(progress.studentlessonsprogress, (r, l) =>
      Object.assign(r, { lessonid: l.lessonid, levelid: l.levelid, gradeid: l.gradeid }),
    ),
  );
  await insertMany(
    db,
    'studentlevelsprogress',
    spread(progress.studentlevelsprogress, (r, l) => Object.assign(r, { levelid: l.levelid, gradeid: l.gradeid })),
  );
  await insertMany(
    db,
    'studentgradesprogress',
    spread(progress.studentgradesprogress, (r, l) => Object.assign(r, { gradeid: l.gradeid })),
  );
  await insertMany(db, 'studentappusages', [...progress.studentappusages]);
  await insertMany(db, 'rpiuseraccess', [...(source.access as Iterable<Record<string, unknown>>)]);
  return school;
}

/** One request, its time in ms and the bytes of its answer (read to the end). */
function timed(
  origin: string,
  token: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ ms: number; status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const t0 = process.hrtime.bigint();
    const req = http.request(
      `${origin}${url}`,
      {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
        });
        res.on('end', () =>
          resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, status: res.statusCode ?? 0, bytes }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * q) - 1))];
};

/** VmRSS and VmHWM (peak) of a process, in MB (Linux). */
function memoryOf(pid: number): { rss: number; peak: number } {
  return { rss: procMb(pid, 'VmRSS'), peak: procMb(pid, 'VmHWM') };
}

interface RouteFigure {
  method: string;
  url: string;
  p50: number;
  p95: number;
  bytes: number;
  json: boolean;
}

/**
 * One run on one database: build the data set, start the server, time every route. The HTTP baseline
 * (`GET /student/stats/:studentid/quiz`: an authenticated request whose handler checks the learner is in
 * the caller's scope, by primary key, then reads that learner's quiz attempts on the studentid index) is
 * sent right after each report request, so both see the same machine load; the in-process baseline (the
 * same learner's attempts read through Knex, no HTTP) is printed for information.
 */
async function benchOne(dialect: 'sqlite' | 'pg', pgUrl: string | undefined): Promise<void> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const tdb = await benchDatabase(central, pgUrl);
  let api: ChildProcess | undefined;
  try {
    const db = tdb.db;
    const started = Date.now();
    const shape: LogShape = {
      learners: SIX_MONTH_SCHOOL.learners,
      results: Math.round(SIX_MONTH_SCHOOL.results * SCALE),
      questionsPerResult: 0,
      progressRows: Math.round(SIX_MONTH_SCHOOL.progressRows * SCALE),
      accessRows: Math.round(SIX_MONTH_SCHOOL.accessRows * SCALE),
    };
    const content = await seedContent(db);
    const countryid = id();
    await db('countries').insert({ countryid, countryname: 'Benchland', expectedusage: 30 });
    const schools: School[] = [];
    // One transaction per school: a commit per school rather than per statement.
    for (let n = 0; n <= SCHOOLS; n += 1)
      schools.push(await db.transaction((trx) => seedSchool(trx, content, n, shape, countryid)));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
      hashPassword(p: string): Promise<string>;
    };
    const lmsuserid = id();
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
    // The state autovacuum reaches soon after a bulk load (statistics and the visibility map), not the moment after it.
    if (dialect === 'pg') await db.raw('vacuum analyze');
    const attempts = Number((await db('studentprogress').count({ n: '*' }).first())?.n);
    const builtSeconds = (Date.now() - started) / 1000;

    const one = schools[0].learners[0].studentid;
    const inProcess: number[] = [];
    for (let i = 0; i < Math.max(REQUESTS, 50); i += 1) {
      const t0 = process.hrtime.bigint();
      await db('studentprogress').where({ studentid: one }).select();
      inProcess.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const oneQuizzes = Number(
      (await db('studentprogress').where({ studentid: one, progresstype: 2 }).count({ n: '*' }).first())?.n,
    );

    const { child, origin } = await startCentral(tdb.url);
    api = child;
    const login = await fetch(`${origin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lmsusername: STAFF.lmsusername, lmsuserpassword: STAFF.password }),
    });
    const token = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
    const startRss = procMb(child.pid, 'VmRSS');

    const baseUrl = `/student/stats/${one}/quiz`;
    const baseFirst = await timed(origin, token, 'GET', baseUrl);
    if (baseFirst.status !== 200) throw new Error(`GET ${baseUrl} answered ${baseFirst.status}`);
    const httpBase: number[] = [];

    const s0 = schools[0];
    const f = (filters: Record<string, unknown>, pagesize = 20) => ({
      pageindex: 1,
      pagesize,
      filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
    });
    const learner = f({ studentid: s0.learners[0].studentid });
    const cls = f({ standard: s0.standardid });
    const json: Array<[string, string, unknown?]> = [
      ['GET', '/report/dashboard?countryid=all'],
      ['GET', '/report/gender?countryid=all&schoolname='],
      ['GET', '/report/disability?countryid=all&schoolname='],
      ['GET', '/report/offlineonline?countryid=&schoolname='],
      ['GET', `/report/dashboard/country/${countryid}`],
      ['GET', `/report/dashboard/school/${encodeURIComponent(s0.schoolname)}`],
      ['GET', '/report/studentusage'],
      ['POST', '/report/techdowntime', {}],
      ['POST', '/report/studentprogress', learner],
      ['POST', '/report/studentprogress/class', cls],
      ['POST', '/report/studentlevelquiz', learner],
      ['POST', '/report/studentlevelquiz/class', cls],
      ['POST', '/report/studentlastcompletedquiz', cls],
      ['POST', '/report/studentstatus', f({ countryid })],
      ['POST', '/report/student-grade-progress', cls],
      ['POST', '/report/student-level-progress', learner],
      ['POST', '/report/student-lesson-progress', learner],
      ['POST', '/report/syncrecords', { pageindex: 1, pagesize: 20 }],
      ['GET', '/report/syncstatus'],
    ];
    const everyClass = f({ standard: schools.map((s) => s.standardid) }, 1000);
    const csv: Array<[string, string, unknown]> = [
      ['POST', '/report/studentprogress/download', learner],
      ['POST', '/report/studentprogress/class/download', cls],
      ['POST', '/report/studentlevelquiz/download', learner],
      ['POST', '/report/studentlevelquiz/class/download', cls],
      ['POST', '/report/studentstatus/download', f({ countryid }, 1000)],
      // The largest download: every learner of every school with the quiz each reached.
      ['POST', '/report/studentlastcompletedquiz/download', everyClass],
    ];

    const figures: RouteFigure[] = [];
    let big = { bytes: 0, ms: 0, before: 0, peak: 0, growth: 0, resettable: true };
    for (const [method, url, body] of [...json, ...csv]) {
      const largest = url === '/report/studentlastcompletedquiz/download';
      // The largest CSV's memory is read on its first request (the peak reset first, so that it is this
      // download's, not an earlier request's) and again on its last: the larger growth is reported.
      const watch = async () => {
        big.resettable = resetPeakRss(child.pid!) && big.resettable;
        const before = memoryOf(child.pid!);
        const r = await timed(origin, token, method, url, body);
        const after = memoryOf(child.pid!);
        const growth = Math.max(0, after.peak - before.rss);
        if (growth >= big.growth)
          big = { ...big, bytes: r.bytes, ms: r.ms, before: before.rss, peak: after.peak, growth };
        return r;
      };
      const first = largest ? await watch() : await timed(origin, token, method, url, body); // warm-up
      if (first.status !== 200) throw new Error(`${method} ${url} answered ${first.status}`);
      const times: number[] = [];
      for (let i = 0; i < REQUESTS; i += 1) {
        times.push((await timed(origin, token, method, url, body)).ms);
        httpBase.push((await timed(origin, token, 'GET', baseUrl)).ms);
      }
      if (largest) await watch();
      figures.push({
        method,
        url: url.split('?')[0],
        p50: quantile(times, 0.5),
        p95: quantile(times, 0.95),
        bytes: first.bytes,
        json: !url.endsWith('/download'),
      });
    }

    const base = quantile(httpBase, 0.5);
    const baseIn = quantile(inProcess, 0.5);
    const name = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    out('');
    out(
      `${name}: ${schools.length} schools x ${shape.learners} learners, ${attempts} attempts (data set built ` +
        `in ${builtSeconds.toFixed(1)} s)`,
    );
    out(`${REQUESTS} sequential requests per route after one warm-up, each followed by one baseline request`);
    out(
      `baseline over HTTP: GET /student/stats/:studentid/quiz (token check, learner scope check, one indexed read of ` +
        `the learner's ${oneQuizzes} quiz attempts with their lesson, level and grade) = ${base.toFixed(2)} ms ` +
        `p50, ${quantile(httpBase, 0.95).toFixed(2)} ms p95 over ${httpBase.length} requests`,
    );
    out(
      `baseline in-process (for information): Knex read of the same ` +
        `learner's ${Math.round(attempts / (schools.length * shape.learners))} attempts, no HTTP ` +
        `= ${baseIn.toFixed(2)} ms p50 over ${inProcess.length} reads`,
    );
    out('| route | p50 ms | p95 ms | p50 / HTTP baseline | p50 / in-process read | bytes |');
    out('|---|---:|---:|---:|---:|---:|');
    let worst: RouteFigure | undefined;
    for (const r of figures) {
      if (r.json && (!worst || r.p50 > worst.p50)) worst = r;
      out(
        `| ${r.method} ${r.url}${r.json ? '' : ' (CSV)'} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} ` +
          `| ${(r.p50 / base).toFixed(1)} | ${(r.p50 / baseIn).toFixed(1)} | ${r.bytes} |`,
      );
    }
    const ratio = worst ? worst.p50 / base : 0;
    out(
      `${name}: slowest JSON report ${worst?.method} ${worst?.url} = ${ratio.toFixed(1)} x the HTTP baseline (target ` +
        `<= ${TARGETS.ratio}): ${ratio <= TARGETS.ratio ? 'OK' : 'ABOVE TARGET'}`,
    );
    out(
      `${name}: largest CSV (${big.bytes} bytes in ${big.ms.toFixed(0)} ms): server RSS ${startRss.toFixed(1)} MB ` +
        `after start, ${big.before.toFixed(1)} MB before it, peak ${big.peak.toFixed(1)} MB, ` +
        `growth ${big.growth.toFixed(1)} MB (target ` +
        `< ${TARGETS.csvRssMb}): ${big.growth < TARGETS.csvRssMb ? 'OK' : 'ABOVE TARGET'}${big.resettable ? '' : ' ' +
        '[peak counter not resettable here: growth over the process life]'}`,
    );
  } finally {
    if (api) await stopServer(api);
    await tdb.dispose();
  }
}

/**
 * SQLite always; PostgreSQL too when BENCH_DATABASE_URL or TEST_DATABASE_URL is set (BENCH_REPORT_DATABASES=sqlite or
 * pg picks one).
 */
export async function runReportsBench(): Promise<void> {
  process.stdout.write(
    `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}, load ` +
      `average ${os.loadavg()[0].toFixed(2)} at start\n`,
  );
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const wanted = (process.env.BENCH_REPORT_DATABASES ?? 'sqlite,pg').split(',');
  for (const dialect of ['sqlite', 'pg'] as const) {
    if (!wanted.includes(dialect) || (dialect === 'pg' && !pgUrl)) continue;
    await benchOne(dialect, dialect === 'pg' ? pgUrl : undefined);
  }
}
