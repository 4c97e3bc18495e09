import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classroom, createKnex, repoRoot, type Knex } from '@lms/db';
import { DEMO_IDS, streamToBuffer, writeContentZip, type ContentKey } from '@lms/shared';
import { demoContentPackage } from '../src/seed/demo';

// The box loses power: the real server (a child process) is killed with SIGKILL while learners hand in
// results and while a curriculum import runs, again and again. Every result it acknowledged is there after
// the restart, no attempt is half-written, an import is all there or not at all, and the server starts on
// the database it finds. SQLite only: that is what a box runs on.

const isPg = !!process.env.TEST_DATABASE_URL;
const SERVER = path.join(repoRoot, 'classroom', 'dist', 'server.js');
const CLI = path.join(repoRoot, 'classroom', 'dist', 'cli.js');
const RESULT_ROUNDS = 8;
const IMPORT_ROUNDS = 6;
const MAX_IMPORT_ROUNDS = 16;
const EXTRA_QUESTIONS = 10_000;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-power-cut-'));
const dbFile = path.join(tmp, 'classroom.sqlite');
let port = 0;
const env = () => ({
  ...process.env,
  NODE_ENV: 'test',
  DATA_DIR: tmp,
  HOST: '127.0.0.1',
  RPI_PORT: String(port),
  LOG_LEVEL: 'warn',
  JWT_SECRET: 'jwt_power_cut_0123456789',
  SERVER_SYNC_KEY: 'sk_power_cut_0123456789',
  LOGIN_RATE_LIMIT_MAX: '100000',
  RATE_LIMIT_MAX: '1000000',
});

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function call(
  method: string,
  p: string,
  o: { token?: string; body?: unknown; raw?: Buffer; type?: string; onSent?: () => void } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = o.raw ?? (o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body)));
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method,
        agent,
        headers: {
          ...(o.token ? { Authorization: o.token } : {}),
          ...(payload ? { 'Content-Type': o.type ?? 'application/json', 'Content-Length': payload.length } : {}),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.on('finish', () => o.onSent?.());
    req.end(payload);
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

let child: ChildProcess | undefined;

async function start(): Promise<void> {
  // A new port at every start: while the server was down, another process may have taken the last one.
  port = await freePort();
  child = spawn(process.execPath, [SERVER], { env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  // A minute: on a busy machine the first start (modules, the database) takes longer than on a quiet one.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited on start: ${stderr}`);
    try {
      if ((await call('GET', '/')).status === 200) return;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`the server did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function killHard(): Promise<void> {
  const c = child!;
  if (c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGKILL');
  await gone;
  agent.destroy();
}

/**
 * The /proc/locks line by which `pid` holds SQLite's WAL write lock (byte 120 of the database's -shm file,
 * taken for the whole of a write transaction), or undefined.
 */
function walWriteLock(pid: number): string | undefined {
  let ino: number;
  try {
    ino = fs.statSync(`${dbFile}-shm`).ino;
  } catch {
    return undefined;
  }
  return fs.readFileSync('/proc/locks', 'utf8').split('\n').find((line) => {
    // "1: POSIX  ADVISORY  WRITE 345 fd:00:1234 120 120"; a waiter's line has "->" and holds nothing.
    const f = line.trim().split(/\s+/);
    if (f[1] === '->' || f[3] !== 'WRITE' || Number(f[4]) !== pid || Number(f[5]?.split(':')[2]) !== ino) return false;
    return Number(f[6]) <= 120 && (f[7] === 'EOF' || 120 <= Number(f[7]));
  });
}

/**
 * Kills the server inside a write transaction: waits until it holds the WAL write lock, stops it
 * (SIGSTOP), and kills it if the lock is still held while it stands still; true when it did.
 */
async function killInsideWrite(withinMs: number): Promise<boolean> {
  const c = child!;
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (walWriteLock(c.pid!)) {
      c.kill('SIGSTOP');
      if (walWriteLock(c.pid!)) {
        await killHard();
        return true;
      }
      c.kill('SIGCONT');
    }
    await new Promise((r) => setImmediate(r));
  }
  await killHard();
  return false;
}

/** The database as the next start finds it, read by a connection of its own. */
async function withDb<T>(fn: (db: Knex) => Promise<T>): Promise<T> {
  const db = createKnex({ dialect: 'sqlite', connection: dbFile }, { kinds: classroom.kinds });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

beforeAll(async () => {
  if (isPg) return;
  port = await freePort();
  for (const cmd of ['migrate', 'seed-demo']) {
    const r = spawnSync(process.execPath, [CLI, cmd], { env: env(), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`);
  }
}, 60_000);

afterAll(async () => {
  if (child) await killHard();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(isPg)('power cuts on the box (SIGKILL of the real server)', () => {
  it(`keeps every acknowledged result and never half an attempt, ` +
    `over ${RESULT_ROUNDS} kills during submissions`, async () => {
    const L = DEMO_IDS.lessons[0];
    // A quiz answered wrong throughout never passes, so that every submission is a new attempt (a row).
    const body = (starttime: number) => ({
      starttime,
      endtime: starttime + 30_000,
      result: L.lessonquizquestionids.map((q, i) => ({
        iscorrect: false,
        lessonquizid: L.lessonquizid,
        lessonquizquestionid: q,
        questionid: L.questionids[i],
      })),
    });
    let stamp = Date.parse('2026-03-02T08:00:00Z');
    const acknowledged: Array<{ studentid: string; starttime: string }> = [];
    const inFlightAtKill: Array<{ studentid: string; starttime: string }> = [];
    const perRound: Array<{ acknowledged: number; inFlight: number; insideWrite?: boolean }> = [];
    for (let round = 0; round < RESULT_ROUNDS; round++) {
      await start();
      const learners = [];
      for (const l of DEMO_IDS.learners) {
        const res = await call('POST', '/auth/login', {
          body: { studentusername: l.schoolusername, studentpassword: DEMO_IDS.password, logintime: Date.now() },
        });
        expect(res.status).toBe(200);
        learners.push({ studentid: l.studentid, token: `Bearer ${JSON.parse(res.body).data.accessToken}` });
      }
      let killed = false;
      // From the moment the kill is under way, a request that fails is one the kill cut short.
      let cutting = false;
      const pending = new Set<{ studentid: string; starttime: string }>();
      let acked = 0;
      // Eight submissions in flight per learner, all the time, until the kill.
      const worker = async (l: { studentid: string; token: string }) => {
        while (!killed) {
          stamp += 1000;
          const item = { studentid: l.studentid, starttime: new Date(stamp).toISOString() };
          pending.add(item);
          try {
            const res = await call('POST', `/result/lesson/quiz/${L.lessonquizid}`, {
              token: l.token,
              body: body(stamp),
            });
            pending.delete(item);
            if (res.status === 200) {
              acknowledged.push(item);
              acked += 1;
            } else throw new Error(`answered ${res.status}: ${res.body}`);
          } catch (err) {
            if (!killed && !cutting) throw err;
            return;
          }
        }
      };
      const workers = learners.flatMap((l) => Array.from({ length: 8 }, () => worker(l)));
      // Some results acknowledged first (however busy the machine), then a random moment.
      const since = Date.now();
      while (acked < 3 && Date.now() - since < 30_000) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
      // Every other round the kill waits for a moment inside a write transaction; the others fall anywhere.
      let insideWrite: boolean | undefined;
      cutting = true;
      if (round % 2 === 0) {
        insideWrite = await killInsideWrite(10_000);
        killed = true;
      } else {
        killed = true;
        await killHard();
      }
      const inFlight = [...pending];
      expect((await Promise.allSettled(workers)).filter((w) => w.status === 'rejected')).toEqual([]);
      inFlightAtKill.push(...inFlight);
      perRound.push({ acknowledged: acked, inFlight: inFlight.length, insideWrite });
    }
    await start();
    expect((await call('GET', '/')).status).toBe(200);
    await killHard();

    await withDb(async (db) => {
      const rows: Array<{ studentid: string; starttime: string; studentprogressid: string }> = await db(
        'studentprogress',
      )
        .where('studentprogressreferenceid', DEMO_IDS.lessons[0].lessonquizid)
        .select('studentid', 'starttime', 'studentprogressid');
      const stored = new Set(rows.map((r) => `${r.studentid}|${r.starttime}`));
      const lost = acknowledged.filter((a) => !stored.has(`${a.studentid}|${a.starttime}`));
      expect(lost).toEqual([]);
      // Never half an attempt: every stored attempt has its four answers.
      const answers: Array<{ studentprogressid: string; n: number }> = await db('studentprogressquestions')
        .groupBy('studentprogressid')
        .select('studentprogressid')
        .count({ n: '*' });
      const counts = new Map(answers.map((a) => [a.studentprogressid, Number(a.n)]));
      expect(rows.filter((r) => counts.get(r.studentprogressid) !== 4)).toEqual([]);
      // The kill hit the write path mid-way: requests were in flight at every kill; some of them had committed
      // (stored though never acknowledged), some had not.
      const landed = inFlightAtKill.filter((a) => stored.has(`${a.studentid}|${a.starttime}`)).length;
      console.info(
        `power cut, results: ${RESULT_ROUNDS} kills; acknowledged ${acknowledged.length}, all stored; ` +
          `in flight at the kills ${inFlightAtKill.length} ` +
          `(${landed} committed before the kill, ${inFlightAtKill.length - landed} not); ` +
          `per round ${JSON.stringify(perRound)}`,
      );
      expect(perRound.every((r) => r.inFlight > 0)).toBe(true);
      // Each kill that waited for one landed inside a write transaction (the server held the WAL write lock).
      expect(perRound.filter((r) => r.insideWrite === true)).toHaveLength(RESULT_ROUNDS / 2);
      expect(acknowledged.length).toBeGreaterThan(RESULT_ROUNDS);
      expect(inFlightAtKill.length - landed).toBeGreaterThan(0);
    });
  }, 600_000);

  it(`leaves the previous curriculum whole when an import is killed mid-way, over ${IMPORT_ROUNDS} kills`, async () => {
    // Two versions of the demo curriculum (learners point at its lessons), each with 10,000 extra questions,
    // told apart by every question's text.
    const version = async (v: string) => {
      const p = demoContentPackage();
      const extra = Array.from({ length: EXTRA_QUESTIONS }, (_, n) => ({
        // A long heading: the transaction's pages outgrow SQLite's cache and reach the WAL before the commit.
        questionid: `e${String(n).padStart(7, '0')}-0000-4000-8000-000000000000`,
        questionheading: { headingtext: `${v} ${n} ${'words '.repeat(150)}` },
        questionoptions: [],
        questiontext: v,
        templatetypeid: 1,
        isdeleted: false,
        questionstatus: true,
        questionidentifier: `X-${n}`,
        questiontags: [],
        questioncorrectvalue: 1,
        lastupdated: '2026-01-05T00:00:00.000Z',
      }));
      p.questions = [...p.questions.map((q) => ({ ...q, questiontext: v })), ...extra];
      return streamToBuffer(writeContentZip(p as Record<ContentKey, unknown[]>));
    };
    const zips = { A: await version('version A'), B: await version('version B') };
    const multipart = (zip: Buffer) => {
      const boundary = 'power-cut-boundary';
      return {
        type: `multipart/form-data; boundary=${boundary}`,
        raw: Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="importfile"; ` +
              `filename="content.zip"\r\nContent-Type: application/zip\r\n\r\n`,
          ),
          zip,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]),
      };
    };
    const key = env().SERVER_SYNC_KEY;
    const wal = `${dbFile}-wal`;
    const versionsInDb = () => withDb(async (db) => {
      const texts: string[] = await db('questions').distinct('questiontext').pluck('questiontext');
      return { texts: texts.sort(), count: Number((await db('questions').count({ n: '*' }))[0].n) };
    });

    await start();
    const t0 = Date.now();
    expect((await call('PUT', '/import/master', { token: key, ...multipart(zips.A) })).status).toBe(200);
    const fullImportMs = Date.now() - t0;
    await killHard();
    let current = 'version A';
    const rounds: Array<{
      target: string;
      killedAfterMs: number;
      walWritten: boolean;
      acknowledged: boolean;
      found: string;
    }> = [];
    // A kill inside the import's write: the WAL had changed and no answer had come (the transaction was
    // writing, or had committed and not yet answered). At least IMPORT_ROUNDS rounds, more (up to
    // MAX_IMPORT_ROUNDS) until two such kills happened.
    const inWrite = () => rounds.filter((r) => r.walWritten && !r.acknowledged).length;
    const rolledBack = () =>
      rounds.filter((r) => r.walWritten && !r.acknowledged && r.found !== `version ${r.target}`).length;
    for (let round = 0; round < MAX_IMPORT_ROUNDS && (round < IMPORT_ROUNDS || inWrite() < 2); round++) {
      const target = current === 'version A' ? 'B' : 'A';
      await start();
      const walBefore = fs.statSync(wal).mtimeMs;
      let sentAt = 0;
      let acknowledged = false;
      const put = call('PUT', '/import/master', {
        token: key,
        ...multipart(zips[target]),
        onSent: () => {
          sentAt = Date.now();
        },
      }).then(
        (r) => {
          acknowledged = r.status === 200;
        },
        () => undefined,
      );
      // Every other round: kill the moment the WAL file changes (the import's transaction is writing its pages or
      // its commit). The others: at a random moment of a whole import's time after the upload is in.
      while (!sentAt && !acknowledged) await new Promise((r) => setImmediate(r));
      if (round % 2 === 0) {
        const deadline = Date.now() + 30_000;
        while (!acknowledged && Date.now() < deadline && fs.statSync(wal).mtimeMs <= walBefore)
          await new Promise((r) => setImmediate(r));
      } else {
        await new Promise((r) => setTimeout(r, Math.floor(fullImportMs * (0.2 + Math.random()))));
      }
      const walWritten = fs.statSync(wal).mtimeMs > walBefore;
      const killedAfterMs = sentAt ? Date.now() - sentAt : -1;
      await killHard();
      await put;
      const found = await versionsInDb();
      // All of one version: every question's text the same, and the whole count.
      expect(found.texts).toHaveLength(1);
      expect(found.count).toBe(EXTRA_QUESTIONS + demoContentPackage().questions.length);
      if (acknowledged) expect(found.texts[0]).toBe(`version ${target}`);
      rounds.push({ target, killedAfterMs, walWritten, acknowledged, found: found.texts[0] });
      current = found.texts[0];
    }
    await start();
    await killHard();
    console.info(
      `power cut, imports: a whole import took ${fullImportMs} ms; ${rounds.length} kills, ${inWrite()} inside the ` +
        `import's write ` +
        `(${rolledBack()} of them rolled back to the previous version); rounds ${JSON.stringify(rounds)}`,
    );
    expect(inWrite()).toBeGreaterThanOrEqual(1);
  }, 600_000);
});
