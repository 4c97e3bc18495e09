import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { central, classroom, DEMO, repoRoot, type Knex, type TestDatabase } from '@lms/db';
import { streamToBuffer, writeLogZipFromDocument, type LogDocument } from '@lms/shared';
import { benchDatabase, freePort, procMb, serviceStart } from './servers';

// `make bench`: a bounded soak of both services in production mode on loopback (default 3 minutes,
// SOAK_SECONDS): guarded reads, sign-ins, log imports and refused oversize bodies at once. Reported per
// minute: requests served and each server's RSS at the start and end of the minute. Targets: RSS at the end
// within 10 % of the end of the first minute, no 5xx, and every import's rows all there.

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const ROWS_PER_IMPORT = 500;
const secret = () => crypto.randomBytes(32).toString('hex');

interface Server { name: string; child: ChildProcess; origin: string }

async function start(name: 'central' | 'classroom', env: Record<string, string>, portVar: string): Promise<Server> {
  const port = await freePort();
  const command = serviceStart(name);
  const child = spawn(process.execPath, command.args, {
    env: {
      ...command.env,
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '100000000',
      LOGIN_RATE_LIMIT_MAX: '100000',
      [portVar]: String(port),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    if (await fetch(`${origin}/`).then((r) => r.ok, () => false)) return { name, child, origin };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`${name} did not start`);
}

function logOf(learners: Array<{ studentid: string; schooluserid: string }>, n: number): LogDocument {
  const at = Date.UTC(2026, 9, 1);
  const empty = {
    studentlearningprogress: [],
    studentgradesprogress: [],
    studentlevelsprogress: [],
    studentlessonsprogress: [],
    studentpoints: [],
    studentappusages: [],
  };
  return {
    log: {
      result: [],
      progress: {
        ...empty,
        studentactives: Array.from({ length: n }, (_, i) => ({
          studentactiveid: crypto.randomUUID(),
          studentid: learners[i % learners.length].studentid,
          referenceid: DEMO.lessonid,
          referencetype: 3,
          created_at: new Date(at + i * 1000).toISOString(),
        })),
      },
      access: [],
    },
  } as unknown as LogDocument;
}

async function login(url: string, body: object): Promise<string> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { data: { accessToken: string } }).data.accessToken;
}

export async function runSoakBench(): Promise<void> {
  const dbs: TestDatabase[] = [];
  const servers: Server[] = [];
  const objectDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-soak-'));
  try {
    // SQLite, as a school's server runs.
    const cdb = await benchDatabase(central);
    const rdb = await benchDatabase(classroom);
    dbs.push(cdb, rdb);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const seedCentral = require(path.join(repoRoot, 'central/dist/seed/demo.js')) as {
      seedDemo(db: Knex): Promise<string[]>;
    };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const seedClassroom = require(path.join(repoRoot, 'classroom/dist/seed/demo.js')) as {
      seedDemo(db: Knex): Promise<string[]>;
    };
    await seedCentral.seedDemo(cdb.db);
    await seedClassroom.seedDemo(rdb.db);
    const teacher = await cdb.db('schoolusers').where({ schoolusername: 'demo.teacher' }).first('schoolname');
    const learners = (await cdb
      .db('students')
      .where({ schoolname: teacher.schoolname, isdeleted: false })
      .select('studentid', 'schooluserid')) as Array<{ studentid: string; schooluserid: string }>;
    if (!learners.length) throw new Error('the demo teacher\'s school has no learners');

    const c = await start(
      'central',
      {
        DATABASE_URL: cdb.url,
        LOG_IMPORT_ENABLED: '1',
        OBJECT_DIR: objectDir,
        JWT_SECRET: secret(),
        APPLICATION_API_KEY: secret(),
        SERVER_SYNC_KEY: secret(),
        RPI_SECRET: secret(),
      },
      'PORT',
    );
    servers.push(c);
    const r = await start('classroom', {
      DATABASE_URL: rdb.url, JWT_SECRET: secret(), SERVER_SYNC_KEY: secret(), LOG_DIR: path.join(objectDir, 'logs'),
    }, 'RPI_PORT');
    servers.push(r);

    const staff = await login(`${c.origin}/auth/login`, {
      lmsusername: 'superadmin@demo.lms',
      lmsuserpassword: 'DemoSuper1',
    });
    const teacherToken = await login(`${c.origin}/auth/school/login`, {
      lmsusername: 'demo.teacher',
      lmsuserpassword: 'demo',
    });
    const learnerBody = { studentusername: 'demo.student', studentpassword: 'demo', logintime: Date.now() };
    const learnerToken = await login(`${r.origin}/auth/login`, learnerBody);

    const ends = Date.now() + SECONDS * 1000;
    const counts = { central: 0, classroom: 0, fiveHundreds: 0, imports: 0, refused: 0, unexpected: [] as string[] };
    const tally = (server: 'central' | 'classroom', status: number, what: string) => {
      counts[server] += 1;
      if (status >= 500) {
        counts.fiveHundreds += 1;
        if (counts.unexpected.length < 5) counts.unexpected.push(`${what}: ${status}`);
      }
    };
    const loop = async (what: string, pauseMs: number, step: () => Promise<void>) => {
      while (Date.now() < ends) {
        await step().catch((err: unknown) => {
          if (counts.unexpected.length < 5)
            counts.unexpected.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
        });
        if (pauseMs) await new Promise((res) => setTimeout(res, pauseMs));
      }
    };
    const get = async (server: Server, p: string, token: string) => {
      const res = await fetch(`${server.origin}${p}`, { headers: { authorization: `Bearer ${token}` } });
      await res.arrayBuffer();
      tally(server === c ? 'central' : 'classroom', res.status, `GET ${p}`);
    };
    const big = Buffer.alloc(2 * 1024 * 1024, 0x20);
    const oversize = async (server: Server) => {
      const res = await fetch(`${server.origin}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: big,
      }).catch(() => undefined);
      // A reset connection is a refusal too: the server answered 413 before the body ended.
      if (res) {
        await res.arrayBuffer().catch(() => undefined);
        tally(server === c ? 'central' : 'classroom', res.status, 'oversize body');
        if (res.status !== 413) counts.unexpected.push(`oversize body: ${res.status}`);
      }
      counts.refused += 1;
    };
    const importOnce = async () => {
      const zip = await streamToBuffer(writeLogZipFromDocument(logOf(learners, ROWS_PER_IMPORT), []));
      const form = new FormData();
      form.append('importfile', new Blob([zip], { type: 'application/zip' }), 'studentlog');
      const res = await fetch(`${c.origin}/log/import`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${teacherToken}` },
        body: form,
      });
      await res.arrayBuffer();
      tally('central', res.status, 'PUT /log/import');
      if (res.status === 200) counts.imports += 1;
      else counts.unexpected.push(`PUT /log/import: ${res.status}`);
    };

    const samples: Array<{
      at: number;
      central: number;
      classroom: number;
      servedCentral: number;
      servedClassroom: number;
    }> = [];
    const started = Date.now();
    const sampler = setInterval(() => {
      samples.push({
        at: Date.now() - started,
        central: procMb(c.child.pid, 'VmRSS'),
        classroom: procMb(r.child.pid, 'VmRSS'),
        servedCentral: counts.central,
        servedClassroom: counts.classroom,
      });
    }, 1000);
    samples.push({
      at: 0,
      central: procMb(c.child.pid, 'VmRSS'),
      classroom: procMb(r.child.pid, 'VmRSS'),
      servedCentral: 0,
      servedClassroom: 0,
    });
    await Promise.all([
      ...Array.from({ length: 4 }, () => loop('central read', 0, () => get(c, '/curriculum/all', staff))),
      ...Array.from({ length: 2 }, () => loop('classroom read', 0, () => get(r, '/curriculum/all', learnerToken))),
      loop('central sign-in', 250, async () => {
        const res = await fetch(`${c.origin}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ lmsusername: 'superadmin@demo.lms', lmsuserpassword: 'DemoSuper1' }),
        });
        await res.arrayBuffer();
        tally('central', res.status, 'POST /auth/login');
      }),
      loop('classroom sign-in', 250, async () => {
        const res = await fetch(`${r.origin}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...learnerBody, logintime: Date.now() }),
        });
        await res.arrayBuffer();
        tally('classroom', res.status, 'POST /auth/login');
      }),
      loop('log import', 3000, importOnce),
      loop('oversize', 1000, async () => { await oversize(c); await oversize(r); }),
    ]);
    clearInterval(sampler);
    samples.push({
      at: Date.now() - started,
      central: procMb(c.child.pid, 'VmRSS'),
      classroom: procMb(r.child.pid, 'VmRSS'),
      servedCentral: counts.central,
      servedClassroom: counts.classroom,
    });

    const rows = Number((await cdb.db('studentactives').count({ n: '*' }).first())?.n ?? 0);
    const syncs = Number((await cdb.db('syncs').count({ n: '*' }).first())?.n ?? 0);
    const at = (ms: number) =>
      samples.reduce((best, s) => (Math.abs(s.at - ms) < Math.abs(best.at - ms) ? s : best), samples[0]);
    const minutes = Math.ceil(SECONDS / 60);
    process.stdout.write(
      `${SECONDS} s; 4 + 2 reading connections, sign-ins every 250 ms on each service, a ${ROWS_PER_IMPORT}-row log ` +
        `import every 3 s, a 2 MB body to each sign-in route every second; production mode, SQLite\n`,
    );
    process.stdout.write(
      '| minute | central req | classroom req | central RSS start → end MB | classroom RSS start → end MB ' +
        '|\n|---|---|---|---|---|\n',
    );
    for (let m = 0; m < minutes; m += 1) {
      const a = at(m * 60_000);
      const b = at(Math.min((m + 1) * 60_000, SECONDS * 1000));
      process.stdout.write(
        `| ${m + 1} | ${b.servedCentral - a.servedCentral} | ${b.servedClassroom - a.servedClassroom} ` +
          `| ${a.central.toFixed(0)} → ${b.central.toFixed(0)} | ${a.classroom.toFixed(0)} ` +
          `→ ${b.classroom.toFixed(0)} |\n`,
      );
    }
    const firstMinute = at(Math.min(60_000, SECONDS * 1000));
    const last = samples[samples.length - 1];
    const growth = (end: number, ref: number) => (ref ? (end - ref) / ref : 0);
    const gc = growth(last.central, firstMinute.central);
    const gr = growth(last.classroom, firstMinute.classroom);
    const ok = (b: boolean) => (b ? 'OK' : 'MISSED');
    process.stdout.write(
      `RSS at the end vs end of minute 1: central ${(gc * 100).toFixed(1)} %, classroom ${(gr * 100).toFixed(1)} % ` +
        `(target within 10 %): ${ok(gc <= 0.1 && gr <= 0.1)}\n`,
    );
    process.stdout.write(`5xx answers: ${counts.fiveHundreds} (target 0): ${ok(counts.fiveHundreds === 0)}\n`);
    process.stdout.write(
      `log imports: ${counts.imports}, ${syncs} sync rows, ${rows} of ${counts.imports * ROWS_PER_IMPORT} rows ` +
        `(target all): ${ok(syncs === counts.imports && rows === counts.imports * ROWS_PER_IMPORT)}\n`,
    );
    process.stdout.write(`oversize bodies refused: ${counts.refused}\n`);
    if (counts.unexpected.length) process.stdout.write(`unexpected: ${counts.unexpected.slice(0, 5).join('; ')}\n`);
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    await new Promise((res) => setTimeout(res, 500));
    for (const d of dbs) await d.dispose();
    fs.rmSync(objectDir, { recursive: true, force: true });
  }
}
