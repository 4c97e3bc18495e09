import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { central, repoRoot, type Knex, type TestDatabase } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { benchDatabase, freePort, startCentral, stopServer } from './servers';

// `BENCH=access make bench`: the overhead of the access record of learner data on the read routes that
// write it (the learner list, the learner CSV, a learner report), side by side in one run: two central
// servers on the same database, one recording and one with ACCESS_RECORD_OFF (honoured in test only),
// called in turn, medians of ROUNDS. Target: the record adds at most 5 % (ratio on / off ≤ 1.05); a miss
// exits 1.

const LEARNERS = Number(process.env.BENCH_LEARNERS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const SCHOOLS = 10;
const TARGET = 1.05;
/** BENCH_ACCESS_CONTROL=1: both servers without the record, to see how far two identical servers land apart. */
const CONTROL = process.env.BENCH_ACCESS_CONTROL === '1';
const STAFF = { lmsusername: 'bench.super@lms.local', password: 'BenchSuper1' };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const schoolName = (s: number) => `School ${String(s).padStart(2, '0')}`;

async function seed(db: Knex): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
    hashPassword(p: string): Promise<string>;
  };
  const countryid = crypto.randomUUID();
  const subjectid = crypto.randomUUID();
  const curriculumid = crypto.randomUUID();
  await db('countries').insert({ countryid, countryname: 'Bench Country' });
  await db('subjects').insert({ subjectid, subjectname: 'Bench' });
  await db('curriculums').insert({ curriculumid, curriculumname: 'Reading', subjectid });
  const classes: Array<{ standardid: string; schoolname: string }> = [];
  for (let s = 0; s < SCHOOLS; s += 1) {
    const schoolid = crypto.randomUUID();
    const standardid = crypto.randomUUID();
    await db('schools')
      .insert({ schoolid, schoolname: schoolName(s), countryid, curriculums: JSON.stringify([curriculumid]) });
    await db('standards').insert({ standardid, standardname: 'Class 1', schoolid, schoolname: schoolName(s) });
    classes.push({ standardid, schoolname: schoolName(s) });
  }
  const users: Array<Record<string, unknown>> = [];
  const learners: Array<Record<string, unknown>> = [];
  for (let i = 0; i < LEARNERS; i += 1) {
    const klass = classes[i % classes.length];
    const schooluserid = crypto.randomUUID();
    users.push({ schooluserid, schoolusername: `learner${i}`, schooluserpasswordhash: 'x', schooluserrole: 4,
      schoolname: klass.schoolname });
    learners.push({
      studentid: crypto.randomUUID(), schooluserid, studentfirstname: `Amina ${i}`, studentlastname: 'Bench',
      mothername: 'Mother', fathername: 'Father', contact: `+855 12 ${i}`, genderid: (i % 2) + 1,
      city: 'City', state: 'State', country: 'Bench Country', schoolname: klass.schoolname,
      standard: klass.standardid, curriculumid,
      curriculumids: JSON.stringify([curriculumid]), isactive: true, dateofjoin: '2026-01-05T00:00:00.000Z',
      dateofbirth: '2016-03-02T00:00:00.000Z', type: 'offline',
    });
  }
  await db.batchInsert('schoolusers', users, 500);
  await db.batchInsert('students', learners, 400);
  const lmsuserid = crypto.randomUUID();
  await db('lmsusers').insert({
    lmsuserid, lmsusername: STAFF.lmsusername, lmsuserpasswordhash: await hashPassword(STAFF.password),
    firstname: 'Bench', lmsuserrole: ROLE_IDS.superadmin, isverified: true, isdisabled: false,
  });
  await db('lmsusers_roles').insert({ lmsuserid, roleid: ROLE_IDS.superadmin });
}

interface Call { label: string; method: string; url: string; body?: unknown }
const CALLS: Call[] = [
  { label: `GET /student/all (one school, ${fmt(LEARNERS / SCHOOLS)} learners)`, method: 'GET',
    url: `/student/all?schoolname=${encodeURIComponent(schoolName(3))}` },
  { label: `GET /student/download-students (${fmt(LEARNERS)} learners)`, method: 'GET',
    url: '/student/download-students' },
  { label: 'POST /report/studentstatus (one school, a page of 100)', method: 'POST', url: '/report/studentstatus',
    body: { pageindex: 1, pagesize: 100, filter: [{ key: 'schoolname', value: schoolName(5) }] } },
];

function call(origin: string, c: Call, token: string): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const data = c.body === undefined ? undefined : Buffer.from(JSON.stringify(c.body));
    const t0 = process.hrtime.bigint();
    const req = http.request(`${origin}${c.url}`, {
      method: c.method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}),
      },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function login(origin: string): Promise<string> {
  const res = await fetch(`${origin}/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ lmsusername: STAFF.lmsusername, lmsuserpassword: STAFF.password }),
  });
  return ((await res.json()) as { data: { accessToken: string } }).data.accessToken;
}

const entries = async (db: Knex) => Number((await db('accessrecord').count({ n: '*' }).first())?.n ?? 0);

async function benchOne(pgUrl: string | undefined) {
  const tdb: TestDatabase = await benchDatabase(central, pgUrl);
  const children: ChildProcess[] = [];
  try {
    await seed(tdb.db);
    const closed = await freePort();
    const common = { NODE_ENV: 'test', RPI_CLOUD: `http://127.0.0.1:${closed}` };
    const on = await startCentral(tdb.url, CONTROL ? { ...common, ACCESS_RECORD_OFF: 'true' } : common);
    children.push(on.child);
    const off = await startCentral(tdb.url, { ...common, ACCESS_RECORD_OFF: 'true' });
    children.push(off.child);
    const tokens = { on: await login(on.origin), off: await login(off.origin) };
    const rows = CALLS.map((c) => ({ ...c, on: [] as number[], off: [] as number[], written: 0 }));
    for (const r of rows) {
      // Warm both: statements prepared, caches filled.
      await call(on.origin, r, tokens.on);
      await call(off.origin, r, tokens.off);
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const r of rows) {
        // Alternate which goes first, so that neither always finds the database's cache the warmer.
        const order = round % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const);
        for (const side of order) {
          const before = side === 'on' ? await entries(tdb.db) : 0;
          const res = await call(side === 'on' ? on.origin : off.origin, r, tokens[side]);
          if (res.status !== 200) throw new Error(`${r.label} (${side}): ${res.status}`);
          r[side].push(res.ms);
          if (side === 'on') r.written = (await entries(tdb.db)) - before;
        }
      }
    }
    // The floor of any entry answered only once durable: one single-row transaction's commit on this database.
    await tdb.db.schema.createTable('benchcommitprobe', (t) => t.integer('x'));
    const commits: number[] = [];
    for (let i = 0; i < 50; i += 1) {
      const t0 = process.hrtime.bigint();
      await tdb.db.transaction((trx) => trx('benchcommitprobe').insert({ x: i }));
      commits.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await tdb.db.schema.dropTable('benchcommitprobe');
    return { rows, commitMs: median(commits) };
  } finally {
    for (const c of children) await stopServer(c);
    await tdb.dispose().catch(() => undefined);
  }
}

export async function runAccessRecordBench(): Promise<void> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(`machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}; ` +
    `${fmt(LEARNERS)} learners in ${SCHOOLS} schools, ${ROUNDS} rounds (medians), target on / off ≤ ${TARGET}` +
    `${CONTROL ? '; CONTROL: the "on" server records nothing either' : ''}`);
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  let missed = false;
  for (const dialect of pgUrl ? (['sqlite', 'pg'] as const) : (['sqlite'] as const)) {
    const r = await benchOne(dialect === 'pg' ? pgUrl : undefined);
    out('');
    out(dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL');
    out(`one single-row transaction commits in ${fmt(r.commitMs, 2)} ms (median of 50, same database, same run)`);
    out('| request | record off ms | record on ms | on / off | on − off ms | entries written per request |');
    out('|---|---:|---:|---:|---:|---:|');
    for (const row of r.rows) {
      const ratio = median(row.on) / median(row.off);
      if (ratio > TARGET) missed = true;
      out(`| ${row.label} | ${fmt(median(row.off), 1)} | ${fmt(median(row.on), 1)} | ${fmt(ratio, 3)}` +
        `${ratio > TARGET ? ' MISSES' : ''} | ${fmt(median(row.on) - median(row.off), 1)} | ${row.written} |`);
    }
  }
  out('');
  out(missed ? `MISSES the target (on / off ≤ ${TARGET}) on at least one route`
    : `meets on / off ≤ ${TARGET} everywhere`);
  if (missed) process.exitCode = 1;
}
