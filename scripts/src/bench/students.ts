import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { central, readRows, repoRoot, type Knex, type TestDatabase } from '@lms/db';
import { createLogger, ROLE_IDS } from '@lms/shared';
import { benchDatabase, freePort, procMb, resetPeakRss, startCentral, stopServer } from './servers';

// `make bench`: the Students page (POST /student, a page of 100 of LEARNERS learners, with and without
// filters) and the learner CSV (GET /student/download-students of every learner), each against a plain
// SELECT of the same rows in the same run; the SQL statements one request runs (fixed, not one per
// learner); and the server's peak RSS growth while it streams the CSV (target: under 30 MB).

const LEARNERS = Number(process.env.BENCH_LEARNERS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SCHOOLS = 20;
const CLASSES = 4;
const TARGET_RSS_MB = 30;
const STAFF = { lmsusername: 'bench.admin@lms.local', password: 'BenchAdmin1' };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

interface World { curricula: string[]; schools: string[] }

const FIRST = ['Amina', 'Kofi', 'សុខា', 'สมชาย', 'مريم', 'प्रिया', 'Esi', 'Yaw'];

async function seed(db: Knex): Promise<World> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
    hashPassword(p: string): Promise<string>;
  };
  const countryid = crypto.randomUUID();
  const subjectid = crypto.randomUUID();
  const curricula = [crypto.randomUUID(), crypto.randomUUID()];
  await db('countries').insert({ countryid, countryname: 'Bench Country' });
  await db('subjects').insert({ subjectid, subjectname: 'Bench' });
  await db('curriculums').insert([
    { curriculumid: curricula[0], curriculumname: 'Reading', subjectid },
    { curriculumid: curricula[1], curriculumname: 'Numbers', subjectid },
  ]);
  const schools: string[] = [];
  const classes: Array<{ standardid: string; schoolname: string }> = [];
  for (let s = 0; s < SCHOOLS; s += 1) {
    const schoolname = `School ${String(s).padStart(2, '0')}`;
    const schoolid = crypto.randomUUID();
    schools.push(schoolname);
    await db('schools').insert({ schoolid, schoolname, countryid, curriculums: JSON.stringify(curricula) });
    for (let c = 0; c < CLASSES; c += 1) {
      const standardid = crypto.randomUUID();
      classes.push({ standardid, schoolname });
      await db('standards').insert({ standardid, standardname: `Class ${c + 1}`, schoolid, schoolname });
    }
  }
  const users: Array<Record<string, unknown>> = [];
  const learners: Array<Record<string, unknown>> = [];
  const access: Array<Record<string, unknown>> = [];
  for (let i = 0; i < LEARNERS; i += 1) {
    const klass = classes[i % classes.length];
    const schooluserid = crypto.randomUUID();
    users.push({
      schooluserid,
      schoolusername: `learner${i}`,
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
      schoolname: klass.schoolname,
    });
    learners.push({
      studentid: crypto.randomUUID(),
      schooluserid,
      studentfirstname: `${FIRST[i % FIRST.length]} ${i}`,
      studentlastname: 'Bench',
      mothername: 'Mother',
      fathername: 'Father',
      contact: i % 3 ? `+855 12 ${i}` : '',
      genderid: (i % 2) + 1,
      city: 'City',
      country: 'Bench Country',
      state: 'State',
      schoolname: klass.schoolname,
      standard: klass.standardid,
      curriculumid: curricula[i % 2],
      curriculumids: JSON.stringify(i % 5 ? [curricula[i % 2]] : curricula),
      isactive: true,
      dateofjoin: '2026-01-05T00:00:00.000Z',
      dateofbirth: '2016-03-02T00:00:00.000Z',
      wg_seeing: i % 4 ? 1 : null,
      type: 'offline',
    });
    if (i % 2)
      access.push({
        rpiuseraccessid: crypto.randomUUID(),
        userid: schooluserid,
        logintime: new Date(Date.UTC(2026, 2, 1 + (i % 28))).toISOString(),
        ipaddress: '10.0.0.1',
      });
  }
  await db.batchInsert('schoolusers', users, 500);
  await db.batchInsert('students', learners, 400);
  await db.batchInsert('rpiuseraccess', access, 500);
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
  await db('lmsusers_roles').insert({ lmsuserid, roleid: ROLE_IDS.admin });
  return { curricula, schools };
}

/** The request bodies measured: the page the admin UI opens, and a deep page with three filters. */
const PAGES = (w: World) => [
  {
    label: 'first page, no filter',
    body: { pagesize: 100, pageindex: 1, filter: [] as Array<{ key: string; value: string }> },
  },
  {
    // A school holds LEARNERS / SCHOOLS learners, about 60 % of them studying Numbers: page 2 is full at 20,000.
    label: 'page 2, school + curriculum + username filters',
    body: {
      pagesize: 100,
      pageindex: LEARNERS >= 10_000 ? 2 : 1,
      filter: [
        { key: 'schoolname', value: w.schools[7] },
        { key: 'curriculum.curriculumname', value: 'numbers' },
        { key: 'schooluser.schoolusername', value: 'learner' },
      ],
    },
  },
];

/** The same rows without the API: one SELECT of the page (filters as SQL), on the bench's own connection. */
async function plainPage(db: Knex, body: ReturnType<typeof PAGES>[number]['body']): Promise<number> {
  const q = db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .where('s.isdeleted', false);
  for (const f of body.filter) {
    if (f.key === 'schoolname') q.where('s.schoolname', f.value);
    if (f.key === 'schooluser.schoolusername') q.whereRaw('lower(u.schoolusername) like ?', [`%${f.value}%`]);
    if (f.key === 'curriculum.curriculumname')
      q.whereIn(
        's.curriculumid',
        db('curriculums')
          .whereRaw('lower(curriculumname) like ?', [`%${f.value}%`])
          .select('curriculumid'),
      );
  }
  const t0 = process.hrtime.bigint();
  await readRows(
    q
      .orderBy(['s.schoolname', 's.studentfirstname', 's.studentid'])
      .limit(body.pagesize)
      .offset((body.pageindex - 1) * body.pagesize)
      .select('s.*', 'u.schoolusername'),
  );
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function plainAll(db: Knex): Promise<number> {
  const t0 = process.hrtime.bigint();
  const rows = await readRows(
    db('students as s')
      .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .leftJoin('standards as c', 'c.standardid', 's.standard')
      .where({ 's.isdeleted': false, 's.isactive': true })
      .orderBy(['s.schoolname', 's.studentfirstname', 's.studentid'])
      .select('s.*', 'u.schoolusername', 'c.standardname'),
  );
  if (rows.length !== LEARNERS) throw new Error(`plain SELECT read ${rows.length} learners`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function request(
  origin: string,
  method: string,
  url: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; ms: number; bytes: number; lines: number; text?: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const t0 = process.hrtime.bigint();
    const req = http.request(
      `${origin}${url}`,
      {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}),
        },
      },
      (res) => {
        let bytes = 0;
        let lines = 0;
        const keep: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          for (const b of c) if (b === 10) lines += 1;
          if (bytes < 1 << 20) keep.push(c);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: Number(process.hrtime.bigint() - t0) / 1e6,
            bytes,
            lines,
            text: Buffer.concat(keep).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/**
 * SQL statements one request runs, counted in the driver of an in-process copy of the API on the same
 * database: every statement better-sqlite3 executes (Knex's and the direct reads alike) or every query
 * a pg client sends.
 */
async function statementsPerRequest(
  tdb: TestDatabase,
  calls: Array<{ method: string; url: string; body?: unknown }>,
): Promise<number[]> {
  let count = 0;
  const undo: Array<() => void> = [];
  const wrap = (proto: Record<string, unknown>, name: string) => {
    const original = proto[name] as (...a: unknown[]) => unknown;
    proto[name] = function wrapped(this: unknown, ...a: unknown[]) {
      count += 1;
      return original.apply(this, a);
    };
    undo.push(() => {
      proto[name] = original;
    });
  };
  if (tdb.target.dialect === 'sqlite') {
    const probe = new Database(':memory:');
    const statement = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
    probe.close();
    for (const m of ['all', 'get', 'run', 'iterate']) wrap(statement, m);
  } else {
    wrap(pg.Client.prototype as unknown as Record<string, unknown>, 'query');
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createApp } = require(path.join(repoRoot, 'central/dist/app.js')) as {
    createApp(c: unknown, d: unknown): http.RequestListener;
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadConfig } = require(path.join(repoRoot, 'central/dist/config.js')) as {
    loadConfig(env: Record<string, string>): unknown;
  };
  const closed = await freePort();
  const server = http.createServer(
    createApp(
      loadConfig({
        NODE_ENV: 'test',
        DATABASE_URL: tdb.url,
        RPI_CLOUD: `http://127.0.0.1:${closed}`,
        RATE_LIMIT_MAX: '100000000',
      }),
      { db: tdb.db, logger: createLogger({ name: 'bench', level: 'silent' }) },
    ),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const login = await fetch(`${origin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lmsusername: STAFF.lmsusername, lmsuserpassword: STAFF.password }),
    });
    const local = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
    const out: number[] = [];
    for (const c of calls) {
      await request(origin, c.method, c.url, local, c.body); // warm: statements prepared, caches filled
      count = 0;
      const res = await request(origin, c.method, c.url, local, c.body);
      if (res.status !== 200) throw new Error(`${c.method} ${c.url}: ${res.status}`);
      out.push(count);
    }
    return out;
  } finally {
    await new Promise((r) => server.close(r));
    for (const u of undo) u();
  }
}

async function benchOne(dialect: 'sqlite' | 'pg', pgUrl: string | undefined) {
  const tdb: TestDatabase = await benchDatabase(central, pgUrl);
  let child: ChildProcess | undefined;
  try {
    const t0 = Date.now();
    const w = await seed(tdb.db);
    const seedSeconds = (Date.now() - t0) / 1000;
    const closed = await freePort(); // RPI_CLOUD nobody listens on: the classroom's sign-in times are refused at once
    const server = await startCentral(tdb.url, { RPI_CLOUD: `http://127.0.0.1:${closed}` });
    child = server.child;
    const { origin } = server;
    const login = await fetch(`${origin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lmsusername: STAFF.lmsusername, lmsuserpassword: STAFF.password }),
    });
    const token = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
    const pid = child.pid as number;

    const pages = PAGES(w).map((p) => ({ ...p, api: [] as number[], plain: [] as number[] }));
    const csv = { api: [] as number[], plain: [] as number[], rss: [] as number[], bytes: 0 };
    let peakResettable = true;
    for (const p of pages) await request(origin, 'POST', '/student', token, p.body); // warm-up
    for (let r = 0; r < ROUNDS; r += 1) {
      for (const p of pages) {
        const res = await request(origin, 'POST', '/student', token, p.body);
        if (res.status !== 200) throw new Error(`POST /student answered ${res.status}`);
        p.api.push(res.ms);
        p.plain.push(await plainPage(tdb.db, p.body));
      }
      const before = procMb(pid, 'VmRSS');
      peakResettable = resetPeakRss(pid) && peakResettable;
      const res = await request(origin, 'GET', '/student/download-students', token);
      if (res.status !== 200 || res.lines !== LEARNERS) throw new Error(`CSV: ${res.status}, ${res.lines} lines`);
      csv.api.push(res.ms);
      csv.rss.push(procMb(pid, 'VmHWM') - before);
      csv.bytes = res.bytes;
      csv.plain.push(await plainAll(tdb.db));
    }
    const [pageStatements, filteredStatements, smallPageStatements, csvStatements] = await statementsPerRequest(tdb, [
      { method: 'POST', url: '/student', body: pages[0].body },
      { method: 'POST', url: '/student', body: pages[1].body },
      { method: 'POST', url: '/student', body: { pagesize: 10, pageindex: 1, filter: [] } },
      { method: 'GET', url: '/student/download-students' },
    ]);
    return {
      seedSeconds,
      pages,
      csv,
      peakResettable,
      statements: { pageStatements, filteredStatements, smallPageStatements, csvStatements },
    };
  } finally {
    if (child) await stopServer(child);
    await tdb.dispose().catch(() => undefined);
  }
}

export async function runStudentsBench(): Promise<void> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(
    `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ` +
      `Node ${process.version}; ${fmt(LEARNERS)} learners in ${SCHOOLS} schools, ${ROUNDS} rounds (medians; RSS ` +
      `growth the largest)`,
  );
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const verdicts: string[] = [];
  for (const dialect of pgUrl ? (['sqlite', 'pg'] as const) : (['sqlite'] as const)) {
    const name = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const r = await benchOne(dialect, dialect === 'pg' ? pgUrl : undefined);
    out('');
    out(`${name} (seeded in ${fmt(r.seedSeconds, 1)} s)`);
    out('| request | API ms | plain SELECT ms | API / SELECT | SQL statements per request |');
    out('|---|---:|---:|---:|---:|');
    const s = r.statements;
    for (const [i, p] of r.pages.entries()) {
      const api = median(p.api);
      const plain = median(p.plain);
      out(
        `| POST /student, ${p.label} | ${fmt(api, 1)} | ${fmt(plain, 1)} | ${fmt(api / plain, 1)} ` +
          `| ${i === 0 ? s.pageStatements : s.filteredStatements} |`,
      );
    }
    const api = median(r.csv.api);
    const plain = median(r.csv.plain);
    const rss = Math.max(...r.csv.rss);
    out(
      `| GET /student/download-students (${fmt(LEARNERS)} rows, ${fmt(r.csv.bytes / 2 ** 20, 1)} MB) ` +
        `| ${fmt(api, 0)} | ${fmt(plain, 0)} | ${fmt(api / plain, 1)} | ${s.csvStatements} |`,
    );
    out(
      `a page of 10 runs ${s.smallPageStatements} statements, a page of 100 ${s.pageStatements}: fixed, not one per ` +
        `learner; the CSV reads ${fmt(1000)} learners per statement`,
    );
    const mark = rss < TARGET_RSS_MB ? 'meets' : 'MISSES';
    verdicts.push(
      `${name}: CSV of ${fmt(LEARNERS)} learners, server peak RSS growth ${fmt(rss, 1)} MB (${mark} ` +
        `< ${TARGET_RSS_MB} MB)${r.peakResettable ? '' : ' [peak counter not resettable here: ' +
        'growth over the process life]'}`,
    );
  }
  out('');
  for (const v of verdicts) out(v);
}
