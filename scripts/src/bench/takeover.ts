import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { central, repoRoot, takeover, type TestDatabase } from '@lms/db';
import { benchDatabase, procMb } from './servers';

// `make bench`: `npm run migrate-from-mysql -w central` on a generated source of RESULTS learner results (plus
// their learners), against a plain bulk write of the same rows into the same kind of target in the same run
// (SQLite: one prepared INSERT run per row in one transaction; PostgreSQL: COPY). Target: at least half the
// plain write's throughput, and a peak RSS of the copying process under 200 MB.

const RESULTS = Number(process.env.BENCH_TAKEOVER_RESULTS ?? 1_000_000);
const LEARNERS = 2000;
/** New results added to the source before the `--again` run. */
const DELTA = 1000;
const TARGET_RATIO = 0.5;
const TARGET_RSS_MB = 200;
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

const IDS = {
  country: 'b0000000-0000-4000-8000-000000000001',
  subject: 'b0000000-0000-4000-8000-000000000002',
  curriculum: 'b0000000-0000-4000-8000-000000000003',
  school: 'b0000000-0000-4000-8000-000000000004',
  grade: 'b0000000-0000-4000-8000-000000000005',
  level: 'b0000000-0000-4000-8000-000000000006',
  lesson: 'b0000000-0000-4000-8000-000000000007',
};
/** Ids spread like random UUIDs (the copy pages through them in key order), the same in SQL and here. */
const md5Id = (seed: string) => {
  const h = crypto.createHash('md5').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
const SQL_MD5_ID = (seed: string) =>
  `CONCAT(SUBSTR(MD5(${seed}),1,8),'-',SUBSTR(MD5(${seed}),9,4),'-4',SUBSTR(MD5(${seed}),14,3),` +
  `'-8',SUBSTR(MD5(${seed}),18,3),'-',SUBSTR(MD5(${seed}),21,12))`;
const studentId = (n: number) => `b1000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const userId = (n: number) => `b2000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Result `n` (1-based) exactly as the SQL below generates it. */
function result(n: number): Record<string, unknown> {
  const start = new Date(Date.UTC(2026, 0, 1) + (n % 150) * 86_400_000 + (n % 86_400) * 1000);
  return {
    studentprogressid: md5Id(`r${n}`),
    studentid: studentId(n % LEARNERS),
    ispass: n % 3 !== 0,
    studentprogressreferenceid: IDS.lesson,
    starttime: start.toISOString(),
    endtime: new Date(start.getTime() + 300_000).toISOString(),
    progresstype: (n % 3) + 1,
    resultpercentage: n % 101,
    points: n % 11,
    fullpoints: 10,
    marks: n % 11,
    scores: n % 4,
  };
}

async function buildSource(conn: takeover.ScratchMysql['conn']): Promise<void> {
  await takeover.createOriginalSchema(conn, { service: 'central' });
  const put = (table: string, rows: Array<Record<string, unknown>>) => takeover.insertOriginalRows(conn, table, rows);
  await put('countries', [{ countryid: IDS.country, countryname: 'Bench', isdeleted: 0 }]);
  await put('subjects', [{ subjectid: IDS.subject, subjectname: 'Bench', isdeleted: 0 }]);
  await put('curriculums', [
    { curriculumid: IDS.curriculum, curriculumname: 'Bench', subjectid: IDS.subject, isdeleted: 0 },
  ]);
  await put('schools', [
    {
      schoolid: IDS.school,
      schoolname: 'Bench School',
      curriculums: JSON.stringify([IDS.curriculum]),
      countryid: IDS.country,
      isdeleted: 0,
    },
  ]);
  await put('grades', [
    { gradeid: IDS.grade, curriculumid: IDS.curriculum, gradename: 'G1', gradeorder: 1, isdeleted: 0 },
  ]);
  await put('levels', [{ levelid: IDS.level, gradeid: IDS.grade, levelname: 'L1', levelorder: 1, isdeleted: 0 }]);
  await put('lessons', [
    { lessonid: IDS.lesson, levelid: IDS.level, lessonname: 'Lesson', lessonorder: 1, isdeleted: 0 },
  ]);
  const users = [];
  const learners = [];
  for (let i = 0; i < LEARNERS; i++) {
    users.push({
      schooluserid: userId(i),
      schoolusername: `learner${i}`,
      schooluserpasswordhash: crypto.createHash('md5').update(`pw${i}`).digest('hex'),
      schooluserrole: 4,
      schooluserstatus: 1,
      schoolname: 'Bench School',
      isdisabled: 0,
      isdeleted: 0,
    });
    learners.push({
      studentid: studentId(i),
      studentfirstname: `L${i}`,
      genderid: 1,
      city: 'C',
      country: 'Bench',
      state: 'S',
      curriculumid: IDS.curriculum,
      curriculumids: JSON.stringify([IDS.curriculum]),
      schooluserid: userId(i),
      isactive: 1,
      isdeleted: 0,
    });
  }
  await put('schoolusers', users);
  await put('students', learners);
  // MariaDB's sequence tables make a million rows in one statement.
  const sid = `CONCAT('b1000000-0000-4000-8000-', LPAD(seq % ${LEARNERS}, 12, '0'))`;
  const start = `TIMESTAMP('2026-01-01') + INTERVAL (seq % 150) DAY + INTERVAL (seq % 86400) SECOND`;
  for (let from = 1; from <= RESULTS; from += 250_000) {
    const to = Math.min(RESULTS, from + 249_999);
    await conn.query(
      `INSERT INTO studentprogress (studentprogressid, studentid, ispass, studentprogressreferenceid, starttime, ` +
        `endtime, progresstype, resultpercentage, points, fullpoints, marks, scores)
       SELECT ${SQL_MD5_ID("CONCAT('r', seq)")}, ${sid}, seq % 3 <> 0, '${IDS.lesson}', ${start}, ${start} + ` +
         `INTERVAL 300 SECOND, (seq % 3) + 1, seq % 101, seq % 11, 10, seq % 11, seq % 4
       FROM seq_${from}_to_${to}`,
    );
  }
}

/**
 * The results' numbers in the order of their ids, the order the copy reads and writes them in (key order: a
 * B-tree grows at its end instead of at random places), so that both writes do the same work.
 */
function keyOrder(): Uint32Array {
  const ids = new Array<[string, number]>(RESULTS);
  for (let n = 1; n <= RESULTS; n++) ids[n - 1] = [md5Id(`r${n}`), n];
  ids.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return Uint32Array.from(ids, ([, n]) => n);
}

/** The plain bulk write: the same learner results straight into a migrated target's studentprogress. */
async function plainWrite(tdb: TestDatabase): Promise<number> {
  const cols = Object.keys(result(1));
  // Their learners first, outside the timing (the results reference them).
  const learners = [];
  const users = [];
  for (let i = 0; i < LEARNERS; i++) {
    users.push({
      schooluserid: userId(i),
      schoolusername: `learner${i}`,
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
    });
    learners.push({
      studentid: studentId(i),
      studentfirstname: `L${i}`,
      genderid: 1,
      city: 'C',
      country: 'B',
      state: 'S',
      curriculumid: IDS.curriculum,
      schooluserid: userId(i),
    });
  }
  await tdb.db('subjects').insert({ subjectid: IDS.subject, subjectname: 'Bench' });
  await tdb.db('curriculums').insert({ curriculumid: IDS.curriculum, curriculumname: 'Bench', subjectid: IDS.subject });
  await tdb.db.batchInsert('schoolusers', users, 200);
  await tdb.db.batchInsert('students', learners, 100);
  if (tdb.target.dialect === 'sqlite') {
    await tdb.db.destroy();
    const conn = new Database(tdb.target.connection);
    conn.pragma('journal_mode = WAL');
    conn.pragma('synchronous = NORMAL');
    conn.pragma('foreign_keys = ON');
    const order = keyOrder();
    const started = process.hrtime.bigint();
    const stmt = conn.prepare(
      `INSERT INTO studentprogress (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
    );
    const all = conn.transaction(() => {
      for (const n of order) {
        const r = result(n);
        stmt.run(cols.map((c) => { const v = r[c]; return v === true ? 1 : v === false ? 0 : v; }));
      }
    });
    all();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    conn.close();
    return seconds;
  }
  const client = new pg.Client({ connectionString: tdb.target.connection });
  await client.connect();
  await client.query(`SET search_path TO "${tdb.target.schema}"`);
  const order = keyOrder();
  const started = process.hrtime.bigint();
  await client.query('BEGIN');
  const stream = client.query(copyFrom(`COPY studentprogress (${cols.join(',')}) FROM STDIN`));
  const esc = (v: unknown) => (v === null || v === undefined ? '\\N' : String(v));
  await new Promise<void>((resolve, reject) => {
    let i = 0;
    const pump = () => {
      while (i < order.length) {
        const r = result(order[i++]);
        if (!stream.write(`${cols.map((c) => esc(r[c])).join('\t')}\n`)) { stream.once('drain', pump); return; }
      }
      stream.end();
    };
    stream.on('finish', resolve);
    stream.on('error', reject);
    pump();
  });
  await client.query('COMMIT');
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await client.end();
  return seconds;
}

/** The copy as an operator runs it: the central command line in a process of its own, its peak RSS sampled. */
async function takeoverRun(
  sourceUrl: string,
  databaseUrl: string,
  extra: string[] = [],
): Promise<{ seconds: number; peakMb: number; lines: string[] }> {
  // Started as `npm run migrate-from-mysql -w central` starts it: the script's allocator setting and node flags.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const script = (require(path.join(repoRoot, 'central/package.json')) as { scripts: Record<string, string> }).scripts[
    'migrate-from-mysql'
  ]
    .trim()
    .split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(script[0] ?? '')) {
    const [name, ...value] = script.shift()!.split('=');
    env[name] = value.join('=');
  }
  const args = script.slice(1).map((a) => (a.startsWith('dist/') ? path.join(repoRoot, 'central', a) : a));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [...args, '--source', sourceUrl, ...extra], {
    env: { ...process.env, ...env, DATABASE_URL: databaseUrl, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let peakMb = 0;
  const timer = setInterval(() => {
    peakMb = Math.max(peakMb, procMb(child.pid, 'VmHWM'));
  }, 100);
  const lines: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`migrate-from-mysql exited ${code}:\n${lines.slice(-20).join('\n')}`);
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, peakMb, lines };
}

export async function runTakeoverBench(): Promise<void> {
  const server = takeover.testMysqlUrl();
  if (!(await takeover.mysqlAnswers(server))) {
    process.stdout.write(`no MySQL/MariaDB at ${server} (TEST_MYSQL_URL): takeover benchmark not run\n`);
    return;
  }
  const src = await takeover.createScratchMysql(server, 'lms_bench');
  try {
    let t = Date.now();
    await buildSource(src.conn);
    process.stdout.write(
      `source: ${fmt(RESULTS)} learner results and ${fmt(LEARNERS)} learners generated in MariaDB ` +
        `in ${((Date.now() - t) / 1000).toFixed(1)} s\n`,
    );
    // BENCH_TAKEOVER_DATABASES=sqlite or pg runs one of them.
    const only = process.env.BENCH_TAKEOVER_DATABASES;
    const targets: Array<[string, string | undefined]> = only === 'pg' ? [] : [['SQLite', undefined]];
    const pgUrl = process.env.BENCH_PG_URL ?? process.env.TEST_DATABASE_URL;
    if (pgUrl && only !== 'sqlite') targets.push(['PostgreSQL', pgUrl]);
    for (const [name, url] of targets) {
      const plainDb = await benchDatabase(central, url);
      const plain = await plainWrite(plainDb);
      await plainDb.dispose().catch(() => undefined);
      const target = await benchDatabase(central, url);
      await target.db.destroy();
      t = Date.now();
      const run = await takeoverRun(src.url, target.url);
      const rows = Number(
        /(\d+) rows read/.exec(run.lines.find((l) => / rows read, /.test(l) && l.startsWith('central:')) ?? '')?.[1] ??
          0,
      );
      const plainRate = RESULTS / plain;
      const rate = rows / run.seconds;
      process.stdout.write(
        `${name}: migrate-from-mysql ${fmt(rows)} rows in ${run.seconds.toFixed(1)} s (${fmt(rate)} rows/s, whole ` +
          `command incl. start and MySQL reads); ` +
          `plain bulk write of the ${fmt(RESULTS)} results ${plain.toFixed(1)} s (${fmt(plainRate)} rows/s); ` +
          `ratio ${(rate / plainRate).toFixed(2)} (target >= ${TARGET_RATIO}); ` +
          `peak RSS ${run.peakMb.toFixed(0)} MB (target < ${TARGET_RSS_MB})\n`,
      );
      const progress = run.lines.filter((l) => l.startsWith('progress:'));
      if (progress.length) process.stdout.write(`  last progress line: ${progress[progress.length - 1]}\n`);
      // The cutover's freeze: --again after a day's new results in the source.
      await src.conn.query(
        `INSERT INTO studentprogress (studentprogressid, studentid, ispass, studentprogressreferenceid, starttime, ` +
          `endtime, progresstype, resultpercentage, points, fullpoints, marks, scores)
         SELECT ${SQL_MD5_ID(`CONCAT('d${name}', seq)`)}, CONCAT('b1000000-0000-4000-8000-', LPAD(seq % ${LEARNERS}, ` +
           `12, '0')), 1, '${IDS.lesson}', '2026-06-01', '2026-06-01 00:05:00', 2, 50, 5, 10, 5, 1
         FROM seq_1_to_${DELTA}`,
      );
      const delta = await takeoverRun(src.url, target.url, ['--again']);
      const line = delta.lines.find((l) => l.startsWith('studentprogress '))?.trim().split(/\s+/) ?? [];
      process.stdout.write(
        `${name}: --again after ${fmt(DELTA)} new results: ${delta.seconds.toFixed(1)} s (studentprogress ` +
          `read ${line[1]}, copied ${line[2]}, unchanged ${line[3]}); peak RSS ${delta.peakMb.toFixed(0)} MB\n`,
      );
      await dropTarget(target);
    }
  } finally {
    await src.drop();
  }
}

async function dropTarget(target: TestDatabase): Promise<void> {
  // The target's knex was closed before the command ran; dispose opens nothing and removes the file or schema.
  await target.dispose().catch(() => undefined);
}
