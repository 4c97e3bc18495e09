import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { procMb, resetPeakRss, startCentral, stopServer } from './servers';
import { DEMO, central, createTestDatabase, repoRoot, seedDemoContent, type Knex, type TestDatabase } from '@lms/db';
import { LOG_COLUMNS, readLogZip, withZip, type LogTable } from '@lms/shared';
import { SIX_MONTH_SCHOOL, learnersOf, logSource, writeLogZipFile, type Learner } from './log-import-data';

// `make bench`: a six-month log of one school imported over HTTP into a fresh central database twice (first
// load, idempotent re-load), next to a ceiling measured in the same run on the same kind of database.

export const TEACHER = { schoolusername: 'benchteacher', password: 'BenchPass1' };
const TARGETS = { ratio: 0.5, rssMb: 160, p99Ms: 50 };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];

type Rows = Map<LogTable, Array<Record<string, unknown>>>;

interface RunResult {
  label: string;
  rows: number;
  seconds: number;
  rssMb: number;
  p99Ms: number;
  probes: number;
}

export async function seedSchool(db: Knex, learners: Learner[]): Promise<void> {
  // The compiled central API is what the benchmark runs, so the password hash comes from it too.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
    hashPassword(p: string): Promise<string>;
  };
  await seedDemoContent(db);
  await db('schoolusers').insert({
    schooluserid: '00000000-0000-4000-8000-00000000beef', schoolusername: TEACHER.schoolusername,
    schooluserpasswordhash: await hashPassword(TEACHER.password), schooluserrole: 3, schoolname: DEMO.schoolname,
  });
  for (const [i, l] of learners.entries()) {
    await db('schoolusers').insert({
      schooluserid: l.schooluserid,
      schoolusername: `learner${i}`,
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
      schoolname: DEMO.schoolname,
    });
    await db('students').insert({
      studentid: l.studentid,
      studentfirstname: `Learner ${i}`,
      genderid: 1,
      city: 'C',
      country: 'X',
      state: 'S',
      curriculumid: DEMO.curriculumid,
      schooluserid: l.schooluserid,
      schoolname: DEMO.schoolname,
    });
  }
}

function withDatabaseEnv<T>(pgUrl: string | undefined, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.TEST_DATABASE_URL;
  if (pgUrl) process.env.TEST_DATABASE_URL = pgUrl;
  else delete process.env.TEST_DATABASE_URL;
  return fn().finally(() => {
    if (saved === undefined) delete process.env.TEST_DATABASE_URL;
    else process.env.TEST_DATABASE_URL = saved;
  });
}

/** GET / in a loop, one at a time, for as long as `running()`; returns the latencies in ms. */
async function probe(origin: string, running: () => boolean): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  while (running()) {
    const t0 = process.hrtime.bigint();
    await new Promise<void>((resolve, reject) => {
      http.get(`${origin}/`, { agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      }).on('error', reject);
    });
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    // About 50 requests a second: enough samples for a p99, without the probe itself loading the server.
    await new Promise((r) => setTimeout(r, 20));
  }
  agent.destroy();
  return samples;
}

export const p99 = (xs: number[]): number => {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)];
};

/** One PUT /log/import of `zipFile` with GET / probed meanwhile: its seconds and the probe's latencies. */
export async function uploadLog(
  origin: string,
  token: string,
  zipFile: string,
): Promise<{ seconds: number; latencies: number[] }> {
  let running = true;
  const probing = probe(origin, () => running);
  const form = new FormData();
  form.append('importfile', await fs.openAsBlob(zipFile, { type: 'application/zip' }), 'studentlog');
  const t0 = process.hrtime.bigint();
  const res = await fetch(`${origin}/log/import`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${token}` },
    body: form,
  });
  const body = await res.text();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  running = false;
  const latencies = await probing;
  if (res.status !== 200) throw new Error(`PUT /log/import answered ${res.status} ${body}`);
  return { seconds, latencies };
}

async function importOnce(
  label: string,
  origin: string,
  pid: number,
  token: string,
  zipFile: string,
  rows: number,
): Promise<RunResult> {
  resetPeakRss(pid);
  const { seconds, latencies } = await uploadLog(origin, token, zipFile).catch((err: Error) => {
    throw new Error(`${label}: ${err.message}`);
  });
  return { label, rows, seconds, rssMb: procMb(pid, 'VmHWM'), p99Ms: p99(latencies), probes: latencies.length };
}

export async function collectRows(zipFile: string): Promise<Rows> {
  const rows: Rows = new Map();
  await readLogZip({ path: zipFile }, {
    onBatch: (b) => {
      const table = b.table as LogTable;
      const list = rows.get(table) ?? [];
      for (const r of b.rows) list.push(r as Record<string, unknown>);
      rows.set(table, list);
    },
  });
  return rows;
}

const countRows = (rows: Rows): number => [...rows.values()].reduce((n, l) => n + l.length, 0);
const columnsOf = (table: LogTable): string[] => Object.keys(LOG_COLUMNS[table]);

/** The fastest plain way on SQLite: one prepared INSERT per table, run in a loop inside one transaction. */
export function sqliteCeiling(file: string, rows: Rows): number {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const t0 = process.hrtime.bigint();
  db.transaction(() => {
    for (const [table, list] of rows) {
      const cols = columnsOf(table);
      const stmt = db.prepare(
        `INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(',')}) VALUES (${cols.map(() => '?').join(',')})`,
      );
      for (const r of list) stmt.run(cols.map((c) => (typeof r[c] === 'boolean' ? (r[c] ? 1 : 0) : (r[c] ?? null))));
    }
  })();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  db.close();
  return seconds;
}

const copyText = (v: unknown): string => {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  return String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
};

/** The fastest plain way on PostgreSQL: COPY into each table inside one transaction. */
export async function pgCeiling(url: string, rows: Rows): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t0 = process.hrtime.bigint();
  await client.query('BEGIN');
  for (const [table, list] of rows) {
    const cols = columnsOf(table);
    const stream = client.query(copyFrom(`COPY "${table}" (${cols.map((c) => `"${c}"`).join(',')}) FROM STDIN`));
    await new Promise<void>((resolve, reject) => {
      stream.on('error', reject);
      stream.on('finish', resolve);
      let i = 0;
      const pump = () => {
        while (i < list.length) {
          const r = list[i++];
          if (!stream.write(`${cols.map((c) => copyText(r[c])).join('\t')}\n`)) {
            stream.once('drain', pump);
            return;
          }
        }
        stream.end();
      };
      pump();
    });
  }
  await client.query('COMMIT');
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await client.end();
  return seconds;
}

async function countImported(db: Knex): Promise<number> {
  let n = 0;
  for (const table of Object.keys(LOG_COLUMNS)) n += Number((await db(table).count({ n: '*' }))[0].n);
  return n;
}

async function benchOne(
  dialect: 'sqlite' | 'pg',
  pgUrl: string | undefined,
  zipFile: string,
  rows: Rows,
  learners: Learner[],
  work: string,
) {
  const expected = countRows(rows);
  // Ceiling: the same rows into a fresh database of the same kind.
  const ceilingSeconds = await withDatabaseEnv(pgUrl, async () => {
    const tdb = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    try {
      await seedSchool(tdb.db, learners);
      if (dialect === 'sqlite') {
        await tdb.db.destroy();
        return sqliteCeiling(tdb.target.connection, rows);
      }
      return await pgCeiling(tdb.url, rows);
    } finally {
      await tdb.dispose().catch(() => undefined);
    }
  });

  const tdb: TestDatabase = await withDatabaseEnv(pgUrl, () =>
    createTestDatabase({ kinds: central.kinds, migrations: central.migrations }),
  );
  const objectDir = await fsp.mkdtemp(path.join(work, 'objects-'));
  let server: { child: ChildProcess; origin: string } | undefined;
  try {
    await seedSchool(tdb.db, learners);
    // Production mode, as a school's server runs (no API docs built); throw-away secrets for this run only.
    server = await startCentral(tdb.url, {
      LOG_IMPORT_ENABLED: '1',
      OBJECT_DIR: objectDir,
      MAX_UPLOAD_MB: '200',
      RATE_LIMIT_MAX: '10000000',
    });
    const login = await fetch(`${server.origin}/auth/school/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ lmsusername: TEACHER.schoolusername, lmsuserpassword: TEACHER.password }),
    });
    const token = ((await login.json()) as { data?: { accessToken?: string } }).data?.accessToken;
    if (!token) throw new Error(`school login failed: ${login.status}`);
    const pid = server.child.pid!;
    const runs: RunResult[] = [];
    runs.push(await importOnce('first import', server.origin, pid, token, zipFile, expected));
    if ((await countImported(tdb.db)) !== expected)
      throw new Error('first import: the database does not hold every row of the log');
    runs.push(await importOnce('re-import (idempotent)', server.origin, pid, token, zipFile, expected));
    if ((await countImported(tdb.db)) !== expected) throw new Error('re-import: the row count changed');
    return { ceilingSeconds, runs, expected };
  } finally {
    if (server) {
      // The server finishes its shutdown (a checkpoint thread may still run) before its database goes.
      await stopServer(server.child);
    }
    await tdb.dispose().catch(() => undefined);
  }
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

export async function runLogImportBench(): Promise<void> {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-bench-log-'));
  try {
    const shape = SIX_MONTH_SCHOOL;
    const learners = learnersOf(shape);
    const zipFile = path.join(work, 'studentlog.zip');
    const content = {
      curriculumid: DEMO.curriculumid,
      gradeid: DEMO.gradeid,
      levelid: DEMO.levelid,
      lessonid: DEMO.lessonid,
    };
    const zipBytes = await writeLogZipFile(zipFile, logSource(shape, learners, content));
    const rows = await collectRows(zipFile);
    const iniBytes = await withZip({ path: zipFile }, {}, async (zip) => {
      for await (const e of zip.entries()) if (e.name === 'log.ini') return e.size;
      return 0;
    });
    const out = (s: string) => process.stdout.write(`${s}\n`);
    out(
      `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB ` +
        `RAM, ${os.type()} ${os.release()}, Node ${process.version}`,
    );
    out(
      `log: ${shape.learners} learners, ${fmt(countRows(rows))} rows ` +
        `(${[...rows].map(([t, l]) => `${t} ${fmt(l.length)}`).join(', ')})`,
    );
    out(`     log.ini ${fmt(iniBytes / 2 ** 20, 1)} MB, ZIP ${fmt(zipBytes / 2 ** 20, 1)} MB`);
    out('');
    out(`${ROUNDS} rounds; seconds, ratios and p99 are medians over the rounds, peak RSS the largest`);
    out('| database | run | seconds | rows/s | vs ceiling | server peak RSS | GET / p99 (n) |');
    out('|---|---|---:|---:|---:|---:|---:|');
    const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    const dialects: Array<'sqlite' | 'pg'> = pgUrl ? ['sqlite', 'pg'] : ['sqlite'];
    const verdicts: string[] = [];
    for (const dialect of dialects) {
      // Rounds of ceiling, first import and re-import, each on fresh databases and a fresh server: a slow
      // spell of a shared machine then falls on one round, and each figure is the median over the rounds
      // (the speed ratio the median of the rounds' own ratios; peak RSS the largest of any round).
      const rounds: Array<Awaited<ReturnType<typeof benchOne>>> = [];
      for (let i = 0; i < ROUNDS; i += 1)
        rounds.push(await benchOne(dialect, dialect === 'pg' ? pgUrl : undefined, zipFile, rows, learners, work));
      const expected = rounds[0].expected;
      const ceilingSeconds = median(rounds.map((r) => r.ceilingSeconds));
      const ceilingRate = expected / ceilingSeconds;
      const name = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
      out(
        `| ${name} | ceiling (${dialect === 'sqlite' ? 'prepared INSERT loop' : 'COPY'}) | ${fmt(ceilingSeconds, 2)} ` +
          `| ${fmt(ceilingRate)} | 1.00 | | |`,
      );
      for (const [k, label] of rounds[0].runs.map((r, j) => [j, r.label] as const)) {
        const seconds = median(rounds.map((r) => r.runs[k].seconds));
        const ratio = median(rounds.map((r) => r.ceilingSeconds / r.runs[k].seconds));
        const rss = Math.max(...rounds.map((r) => r.runs[k].rssMb));
        const p99s = median(rounds.map((r) => r.runs[k].p99Ms));
        const probes = median(rounds.map((r) => r.runs[k].probes));
        out(
          `| ${name} | ${label} | ${fmt(seconds, 2)} | ${fmt(expected / seconds)} | ${fmt(ratio, 2)} | ${fmt(rss)} ` +
            `MB | ${fmt(p99s, 1)} ms (${probes}) |`,
        );
      }
      const speed = median(rounds.map((r) => r.ceilingSeconds / r.runs[0].seconds));
      const rss = Math.max(...rounds.flatMap((r) => r.runs.map((x) => x.rssMb)));
      const p99s = Math.max(...rounds[0].runs.map((_, k) => median(rounds.map((r) => r.runs[k].p99Ms))));
      const mark = (ok: boolean) => (ok ? 'meets' : 'MISSES');
      const spread = (xs: number[]) => `${fmt(Math.min(...xs) * 100)}–${fmt(Math.max(...xs) * 100)} %`;
      verdicts.push(
        `${name}: first import ${fmt(speed * 100)} % of ceiling ` +
          `(rounds ${spread(rounds.map((r) => r.ceilingSeconds / r.runs[0].seconds))}; ` +
          `${mark(speed >= TARGETS.ratio)} >= ${TARGETS.ratio * 100} %), ` +
          `peak RSS ${fmt(rss)} MB (${mark(rss < TARGETS.rssMb)} < ${TARGETS.rssMb} MB), ` +
          `GET / p99 ${fmt(p99s, 1)} ms (${mark(p99s < TARGETS.p99Ms)} < ${TARGETS.p99Ms} ms)`,
      );
    }
    out('');
    for (const v of verdicts) out(v);
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}
