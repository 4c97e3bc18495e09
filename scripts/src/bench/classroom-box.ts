import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { classroom, createKnex, repoRoot } from '@lms/db';
import { DEMO_IDS } from '@lms/shared';
import { freePort, onCpu, pinsCpus, procMb, serviceStart } from './servers';

// `make bench`: a classroom of 40 tablets against the classroom server started as `npm start -w classroom`
// starts it (production mode, SQLite, its start script's memory settings), the server on one CPU. Each tablet
// runs the learner app's own call sequence (sign-in, branding, subjects, grades, levels, lessons, the lesson,
// its video's first range, video progress, practice questions and result, quiz questions and result), with
// think time, for BOX_SECONDS (default 60); then the most quiz results per second the server takes is found
// (every tablet back to back, 5 s) and results arrive at 80 % of that rate for BOX_SATURATION_SECONDS (default 20).
// Reported: p50/p99 of each call; the server's RSS idle (BOX_IDLE_SECONDS, default 30, after start, beside `node`
// running nothing), under each load and after; 40 sign-ins at once, beside their 40 argon2id checks alone on the
// same CPU; the bytes the server wrote per result submission; and the same machine's bare `GET /` throughput,
// all measured in the same run.

const TABLETS = 40;
const SECONDS = Number(process.env.BOX_SECONDS ?? 60);
const SATURATION_SECONDS = Number(process.env.BOX_SATURATION_SECONDS ?? 20);
/** When idle RSS is read, after the server answers its first request. */
const IDLE_SECONDS = Number(process.env.BOX_IDLE_SECONDS ?? 30);
const THINK_MS: [number, number] = [200, 800];
const PASSWORD = 'tablet-pass';
const SATURATION_SHARE = 0.8;

// A fresh pool for each phase: a socket left idle past the server's keep-alive time is closed under a request.
// FIFO: every pooled socket is used in turn, so that none idles past the server's keep-alive time.
let agent = new http.Agent({ keepAlive: true, maxSockets: 200, scheduling: 'fifo' });
const freshAgent = () => {
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: 200, scheduling: 'fifo' });
};
let origin = '';

interface Answer { status: number; body: string; ms: number }

function call(
  method: string,
  p: string,
  o: { token?: string; body?: unknown; headers?: Record<string, string>; via?: http.Agent } = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
    const t0 = process.hrtime.bigint();
    const url = new URL(p, origin);
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent: o.via ?? agent,
        headers: {
          ...(o.token ? { Authorization: o.token } : {}),
          ...(o.headers ?? {}),
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(parts).toString(),
            ms: Number(process.hrtime.bigint() - t0) / 1e6,
          }),
        );
      },
    );
    req.on('error', (err) => resolve({ status: 0, body: String(err), ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    req.end(payload);
  });
}

class Stats {
  private readonly byCall = new Map<string, number[]>();
  errors = 0;
  readonly errorSamples: string[] = [];
  add(name: string, a: Answer, ok = [200, 206]): void {
    if (!ok.includes(a.status)) {
      this.errors += 1;
      if (this.errorSamples.length < 5) this.errorSamples.push(`${name}: ${a.status} ${a.body.slice(0, 120)}`);
      return;
    }
    let list = this.byCall.get(name);
    if (!list) this.byCall.set(name, (list = []));
    list.push(a.ms);
  }
  rows(): Array<{ name: string; n: number; p50: number; p99: number }> {
    return [...this.byCall].map(([name, list]) => {
      const s = [...list].sort((x, y) => x - y);
      const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(s.length * q) - 1)];
      return { name, n: s.length, p50: at(0.5), p99: at(0.99) };
    });
  }
  of(name: string) { return this.rows().find((r) => r.name === name); }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const think = () => sleep(THINK_MS[0] + Math.random() * (THINK_MS[1] - THINK_MS[0]));

/** Bytes the process has caused to be written to storage so far (Linux /proc/<pid>/io). */
function writtenBytes(pid: number): number {
  try {
    return Number(/^write_bytes:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return Number.NaN;
  }
}

async function prepare(dataDir: string, env: NodeJS.ProcessEnv): Promise<Array<{ username: string; hash: string }>> {
  const cli = path.join(repoRoot, 'classroom', 'dist', 'cli.js');
  for (const cmd of ['migrate', 'seed-demo']) {
    const r = spawnSync(process.execPath, [cli, cmd], { env: { ...env, NODE_ENV: 'test' }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`classroom ${cmd}: ${r.stderr}`);
  }
  // Forty learners of the demo class, as a roster push leaves them (one argon2id hash of the box's cost each).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'classroom', 'dist', 'auth', 'passwords.js')) as {
    hashPassword: (p: string) => Promise<string>;
  };
  const db = createKnex(
    { dialect: 'sqlite', connection: path.join(dataDir, 'classroom.sqlite') },
    { kinds: classroom.kinds },
  );
  try {
    const template = await db('students').where('studentid', DEMO_IDS.learners[0].studentid).first();
    const learners = [];
    for (let i = 0; i < TABLETS; i++) {
      const schooluserid = crypto.randomUUID();
      const username = `tablet.${String(i + 1).padStart(2, '0')}`;
      const hash = await hashPassword(PASSWORD);
      await db('schoolusers').insert({
        schooluserid,
        schoolusername: username,
        schooluserpasswordhash: hash,
        schooluserrole: 4,
        schooluserstatus: true,
        schoolname: DEMO_IDS.schoolname,
        isdisabled: false,
        isdeleted: false,
      });
      const { studentid: _s, schooluserid: _u, created_at: _c, updated_at: _up, ...rest } = template;
      await db('students').insert({
        ...rest,
        studentid: crypto.randomUUID(),
        schooluserid,
        studentfirstname: `Tablet${i + 1}`,
        curriculumids: JSON.stringify(template.curriculumids ?? [DEMO_IDS.curriculumid]),
      });
      learners.push({ username, hash });
    }
    return learners;
  } finally {
    await db.destroy();
  }
}

async function startServer(env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const start = serviceStart('classroom');
  const run = onCpu(0, start.args);
  const child = spawn(run.command, run.args, {
    env: { ...start.env, ...env, RPI_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`classroom exited with ${child.exitCode}`);
    if ((await call('GET', '/')).status === 200) return child;
    await sleep(100);
  }
  child.kill();
  throw new Error('classroom did not start');
}

/** The learner app's round through one lesson: what its screens call, in order, with think time between. */
async function tabletRound(
  s: Stats,
  token: string,
  via: http.Agent,
  lessonIndex: number,
  pace: boolean,
): Promise<void> {
  const L = DEMO_IDS.lessons[lessonIndex % DEMO_IDS.lessons.length];
  const step = async (name: string, method: string, p: string, body?: unknown, headers?: Record<string, string>) => {
    const a = await call(method, p, { token, body, headers, via });
    s.add(name, a);
    if (pace) await think();
    return a;
  };
  await step('GET /school/branding', 'GET', `/school/branding?schoolname=${encodeURIComponent(DEMO_IDS.schoolname)}`);
  await step('GET /curriculum/subjects', 'GET', '/curriculum/subjects');
  await step('GET /grade/curriculum/:id', 'GET', `/grade/curriculum/${DEMO_IDS.curriculumid}`);
  await step('GET /level/grade/:id', 'GET', `/level/grade/${DEMO_IDS.gradeid}`);
  await step('GET /lesson/level/:id', 'GET', `/lesson/level/${DEMO_IDS.levelid}`);
  await step('GET /lesson/:id/learning', 'GET', `/lesson/${L.lessonid}/learning`);
  await step('GET /lesson/learning/:id', 'GET', `/lesson/learning/${L.lessonlearningid}`);
  await step('GET /media/<video> (64 kB range)', 'GET', `/media/${L.documentname}`, undefined, {
    Range: 'bytes=0-65535',
  });
  await step('POST /lesson/learning/:id/progress', 'POST', `/lesson/learning/${L.lessonlearningid}/progress`, {
    content_length: 90,
    date: Date.now(),
    ended: false,
    time: 30 + Math.floor(Math.random() * 40),
  });
  await step('GET /question/practice/:id', 'GET', `/question/practice/${L.lessonpracticeid}`);
  const start = Date.now() - 60_000 - Math.floor(Math.random() * 1e6);
  // The practice screen sends the questions answered right (here two of four: not passed, so every round writes).
  await step('POST /result/lesson/practice/:id', 'POST', `/result/lesson/practice/${L.lessonpracticeid}`, {
    starttime: start,
    endtime: start + 40_000,
    result: L.lessonpracticequestionids.slice(0, 2).map((q, i) => ({
      iscorrect: true,
      lessonpracticeid: L.lessonpracticeid,
      lessonpracticequestionid: q,
      questionid: L.questionids[i],
      tries: 1,
    })),
  });
  await step('GET /question/quiz/:id', 'GET', `/question/quiz/${L.lessonquizid}`);
  await step(
    'POST /result/lesson/quiz/:id',
    'POST',
    `/result/lesson/quiz/${L.lessonquizid}`,
    quizBody(lessonIndex, start + 50_000),
  );
}

function quizBody(lessonIndex: number, starttime: number) {
  const L = DEMO_IDS.lessons[lessonIndex % DEMO_IDS.lessons.length];
  // Every question answered, half of them right: not passed, so each submission is a new attempt.
  return {
    starttime,
    endtime: starttime + 45_000,
    result: L.lessonquizquestionids.map((q, i) => ({
      iscorrect: i % 2 === 0,
      lessonquizid: L.lessonquizid,
      lessonquizquestionid: q,
      questionid: L.questionids[i],
    })),
  };
}

/** A bare `GET /` load, as the other benchmarks' baseline: 20 connections for 5 s from its own process. */
/**
 * `node` running nothing, started with the server's own flags and environment on the same CPU: the floor of
 * the idle RSS, read at the same moment as the server's.
 */
function startBareNode(env: NodeJS.ProcessEnv): ChildProcess {
  const start = serviceStart('classroom');
  const run = onCpu(0, [...start.args.slice(0, -1), '-e', 'setInterval(() => {}, 60_000)']);
  return spawn(run.command, run.args, { env: { ...start.env, ...env }, stdio: 'ignore' });
}

/**
 * The floor of 40 sign-ins: their 40 argon2id verifications one after another in a process of their own on the
 * server's CPU, the box's cost, nothing else. Milliseconds.
 */
function argon2Floor(hash: string): number {
  const passwords = path.join(repoRoot, 'classroom', 'dist', 'auth', 'passwords.js');
  const script =
    `const { verifyPassword } = require(${JSON.stringify(passwords)});` +
    `(async () => { await verifyPassword(process.argv[1], ${JSON.stringify(PASSWORD)});` +
    `const t = performance.now(); for (let i = 0; i < ${TABLETS}; i++) await verifyPassword(process.argv[1], ` +
    `${JSON.stringify(PASSWORD)}); console.log(performance.now() - t); })();`;
  const run = onCpu(0, ['-e', script, hash]);
  const env = { ...process.env, ...serviceStart('classroom').env };
  const r = spawnSync(run.command, run.args, { encoding: 'utf8', env });
  return Number(r.stdout.trim());
}

function bareThroughput(): { rps: number; p50: number; p99: number } {
  const loader = path.join(repoRoot, 'scripts', 'dist', 'bench', 'load.js');
  const run = onCpu(1, [loader, `${origin}/`, '20', '5']);
  const r = spawnSync(run.command, run.args, { encoding: 'utf8' });
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

export async function runClassroomBoxBench(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-bench-box-'));
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const secret = () => crypto.randomBytes(32).toString('hex');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    JWT_SECRET: secret(),
    SERVER_SYNC_KEY: secret(),
    // Every tablet here shares the loopback address; in a classroom each has its own. The sign-in limiter keeps its
    // default.
    RATE_LIMIT_MAX: '100000000',
  };
  let child: ChildProcess | undefined;
  try {
    const learners = await prepare(dataDir, env);
    const bareNode = startBareNode(env);
    child = await startServer(env, port);
    const pid = child.pid!;
    await sleep(IDLE_SECONDS * 1000);
    const idleRss = procMb(pid, 'VmRSS');
    const idleAnon = procMb(pid, 'RssAnon');
    const bareRss = procMb(bareNode.pid!, 'VmRSS');
    bareNode.kill();
    const floorMs = argon2Floor(learners[0].hash);

    const bare = bareThroughput();

    // 40 sign-ins at once (the tablets of one class, the lesson starting).
    freshAgent();
    const t0 = Date.now();
    const signIns = await Promise.all(
      learners.map((l) =>
        call('POST', '/auth/login', {
          body: { studentusername: l.username, studentpassword: PASSWORD, logintime: Date.now() },
        }),
      ),
    );
    const allSignedInMs = Date.now() - t0;
    const signInErrors = signIns.filter((a) => a.status !== 200).length;
    if (signInErrors)
      throw new Error(
        `sign-ins refused: ${signIns
          .filter((a) => a.status !== 200)
          .slice(0, 3)
          .map((a) => `${a.status} ${a.body.slice(0, 200)}`)
          .join('; ')}`,
      );
    const tokens = signIns.map((a) => `Bearer ${JSON.parse(a.body).data?.accessToken}`);
    const signInP99 = Math.max(...signIns.map((a) => a.ms));

    // With think time.
    const paced = new Stats();
    let peakPaced = 0;
    const sampler = setInterval(() => { peakPaced = Math.max(peakPaced, procMb(pid, 'VmRSS')); }, 250);
    const until = Date.now() + SECONDS * 1000;
    // Each tablet on its own connection, as in a classroom.
    const tablets = tokens.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    await Promise.all(tokens.map(async (token, i) => {
      await sleep(Math.random() * 1000);
      let round = i;
      while (Date.now() < until) await tabletRound(paced, token, tablets[i], round++, true);
    }));
    for (const a of tablets) a.destroy();
    clearInterval(sampler);
    const afterPaced = procMb(pid, 'VmRSS');

    // Saturation: first the most result submissions/s the server takes (every tablet back to back, 5 s), then
    // submissions arriving at 80 % of that rate (open loop, spread over the tablets) for BOX_SATURATION_SECONDS:
    // at the full rate the queue grows without bound, and p99 says only how long the run was.
    freshAgent();
    let stamp = Date.parse('2026-02-01T08:00:00Z');
    const capacity = new Stats();
    const capEnd = Date.now() + 5000;
    let capCount = 0;
    const capStart = Date.now();
    await Promise.all(tokens.map(async (token, i) => {
      while (Date.now() < capEnd) {
        stamp += 1000;
        capacity.add(
          'capacity',
          await call('POST', `/result/lesson/quiz/${DEMO_IDS.lessons[i % 2].lessonquizid}`, {
            token,
            body: quizBody(i, stamp),
          }),
        );
        capCount += 1;
      }
    }));
    const maxRate = capCount / ((Date.now() - capStart) / 1000);
    const flat = new Stats();
    let peakFlat = 0;
    const sampler2 = setInterval(() => { peakFlat = Math.max(peakFlat, procMb(pid, 'VmRSS')); }, 250);
    const written0 = writtenBytes(pid);
    let submissions = 0;
    const satStart = Date.now();
    const sent: Array<Promise<void>> = [];
    for (let n = 0; Date.now() - satStart < SATURATION_SECONDS * 1000; n++) {
      const due = satStart + (n * 1000) / (maxRate * SATURATION_SHARE);
      if (due > Date.now()) await sleep(due - Date.now());
      const i = n % tokens.length;
      stamp += 1000;
      sent.push(
        call('POST', `/result/lesson/quiz/${DEMO_IDS.lessons[i % 2].lessonquizid}`, {
          token: tokens[i],
          body: quizBody(i, stamp),
        }).then((a) => {
          flat.add('POST /result/lesson/quiz/:id (saturation)', a);
          submissions += 1;
        }),
      );
    }
    await Promise.all(sent);
    const satSeconds = (Date.now() - satStart) / 1000;
    clearInterval(sampler2);
    const written = writtenBytes(pid) - written0;
    await sleep(5000);
    const afterRss = procMb(pid, 'VmRSS');
    const logBytes = fs
      .readdirSync(path.join(dataDir, 'logs'))
      .reduce((sum, n) => sum + fs.statSync(path.join(dataDir, 'logs', n)).size, 0);

    const out = (l: string) => process.stdout.write(`${l}\n`);
    out(
      `server pinned to one CPU: ${pinsCpus() ? 'yes' : 'no'}; ${TABLETS} tablets; think ` +
        `time ${THINK_MS[0]}-${THINK_MS[1]} ms for ${SECONDS} s, then 5 s of result submissions back to back (the ` +
        `most the server takes) and ${SATURATION_SECONDS} s of them arriving at ${SATURATION_SHARE * 100} % of that ` +
        `rate`,
    );
    out(
      `baseline, bare GET / on this machine: ${f0(bare.rps)} requests/s (p50 ${f1(bare.p50)} ms, p99 ${f1(bare.p99)} ` +
        `ms)`,
    );
    out('');
    out('| call (with think time) | n | p50 ms | p99 ms |');
    out('|---|---|---|---|');
    for (const r of paced.rows()) out(`| ${r.name} | ${r.n} | ${f1(r.p50)} | ${f1(r.p99)} |`);
    const sat = flat.of('POST /result/lesson/quiz/:id (saturation)');
    out(
      `| POST /result/lesson/quiz/:id at saturation (80 % of the most it takes) | ${sat?.n ?? 0} ` +
        `| ${f1(sat?.p50 ?? NaN)} | ${f1(sat?.p99 ?? NaN)} |`,
    );
    out('');
    const errorSamples = [...paced.errorSamples, ...flat.errorSamples];
    const samples = errorSamples.length ? ` (${errorSamples.join('; ')})` : '';
    out(`errors: ${paced.errors + flat.errors + signInErrors}${samples}`);
    out(
      `saturation: at most ${f0(maxRate)} result submissions/s with every tablet back to back ` +
        `(${((maxRate / bare.rps) * 100).toFixed(1)} % of the bare GET / rate); ` +
        `then ${f0(submissions / satSeconds)}/s arriving (80 % of it); storage ` +
        `written ${f1(written / Math.max(1, submissions) / 1024)} kB per submission (/proc write_bytes: WAL, ` +
        `database, logs)`,
    );
    out(`log files after the run: ${f1(logBytes / 1024)} kB in ${path.join('DATA_DIR', 'logs')}`);
    const submitP99 = Math.max(
      paced.of('POST /result/lesson/quiz/:id')?.p99 ?? NaN,
      paced.of('POST /result/lesson/practice/:id')?.p99 ?? NaN,
    );
    const rows: Array<[string, string, string, boolean]> = [
      ['p99 of a result submission, with think time', '≤ 50 ms', `${f1(submitP99)} ms`, submitP99 <= 50],
      [
        'p99 of a result submission, at saturation',
        '≤ 50 ms',
        `${f1(sat?.p99 ?? NaN)} ms`,
        (sat?.p99 ?? Infinity) <= 50,
      ],
      [
        `RSS idle (${IDLE_SECONDS} s after start)`,
        '≤ 60 MB',
        `${f1(idleRss)} MB (${f1(idleAnon)} MB anonymous; node running nothing: ${f1(bareRss)} MB)`,
        idleRss <= 60,
      ],
      ['RSS peak with think time', '≤ 100 MB', `${f1(peakPaced)} MB`, peakPaced <= 100],
      ['RSS peak at saturation', '≤ 100 MB', `${f1(peakFlat)} MB`, peakFlat <= 100],
      [
        `${TABLETS} sign-ins at once: all answered`,
        '≤ 1 s',
        `${allSignedInMs} ms (slowest ${f0(signInP99)} ms, ${signInErrors} refused; their ${TABLETS} argon2id ` +
          `checks alone: ${f0(floorMs)} ms, ${(allSignedInMs / floorMs).toFixed(2)}x)`,
        allSignedInMs <= 1000 && signInErrors === 0,
      ],
    ];
    out('');
    out('| target | goal | measured | |');
    out('|---|---|---|---|');
    for (const [what, goal, got, met] of rows) out(`| ${what} | ${goal} | ${got} | ${met ? 'met' : 'missed'} |`);
    out(`RSS after the load (5 s later): ${f1(afterRss)} MB; after the think-time phase: ${f1(afterPaced)} MB`);
  } finally {
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child!.once('exit', r));
      child.kill();
      await Promise.race([gone, sleep(10_000)]);
    }
    agent.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
