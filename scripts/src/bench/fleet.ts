import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { DEMO, central, classroom, repoRoot, type Knex, type TestDatabase } from '@lms/db';
import { PROGRESS_KEYS, ROLE_IDS, type LogDocument, type ProgressKey } from '@lms/shared';
import { benchDatabase, procCpuSeconds, procMb, resetPeakRss, startCentral, stopServer } from './servers';
import { SIX_MONTH_SCHOOL, learnersOf, logSource, writeLogZipFile, type Learner } from './log-import-data';
import { TEACHER, seedSchool } from './log-import';

// `BENCH=fleet make bench`: a fleet of simulated classroom boxes against one real central (its own process),
// in compressed time. A box here is no server: an in-process client that runs the agent's own protocol code
// (the classroom's compiled `contact`, `sendPiece` and `pollState`, so bodies and headers are the box's
// own, and pieces are encoded by the log codec the box uses), over a fetch that counts every byte of each
// request and answer on its socket (headers included) and, for a subset of boxes, adds a 2G link's round
// trips, bandwidth, loss and cuts. Central's CPU is read from its own /proc entry, so the load generator
// and anything else on the machine do not count. Today's path (a six-month log ZIP to PUT /log/import) is
// measured in the same run on the same central. Targets are checked at the end; a miss exits 1.

const env = process.env;
const BOXES = Number(env.BENCH_FLEET_BOXES ?? 2_000);
/** Simulated minutes of the timed phase, and how many simulated seconds pass per real second. */
const SIM_MINUTES = Number(env.BENCH_FLEET_MINUTES ?? 60);
/**
 * `auto` (the default): as fast as central keeps up with, measured in a warm-up: the compression at which the
 * fleet would take half of one core of central, between 1 and 10, and never more simulated time than fits
 * in BENCH_FLEET_WALL_SECONDS. Faster than central keeps up with, the latencies would measure its queue.
 */
const COMPRESSION_SETTING = env.BENCH_FLEET_COMPRESSION ?? 'auto';
const WALL_SECONDS = Number(env.BENCH_FLEET_WALL_SECONDS ?? 420);
let COMPRESSION = COMPRESSION_SETTING === 'auto' ? 10 : Number(COMPRESSION_SETTING);
const POLL_SECONDS = Number(env.BENCH_FLEET_POLL_SECONDS ?? 300);
/** Boxes behind the 2G link (of BOXES), and boxes that fetch the package and rosters at setup. */
const LINK_BOXES = Number(env.BENCH_FLEET_2G_BOXES ?? 20);
const DOWN_BOXES = Number(env.BENCH_FLEET_DOWN_BOXES ?? 10);
/** The hours of a school day in which a day's results are written (the simulated hour is one of them). */
const SCHOOL_HOURS = Number(env.BENCH_FLEET_SCHOOL_HOURS ?? 6);
const PIECE_ROWS = 500;
const LEARNERS = 40;
const TARGETS = { bytesPerResult: 340, pollBytes: 1024, cpuPct: 10, latencyP95S: 300 };
const G2 = { rttMs: 300, kbit: 100, loss: 0.02, cutEveryS: 60, cutS: 20 };

// The six-month log of the log benchmark (20,000 results, 20,000 progress rows, 5,000 sign-ins for 40
// learners over 180 days): the rates of one school, per school day.
const PER_DAY = {
  results: SIX_MONTH_SCHOOL.results / 180,
  progress: SIX_MONTH_SCHOOL.progressRows / 180,
  access: SIX_MONTH_SCHOOL.accessRows / 180,
};
const STAFF = { lmsusername: 'bench.fleet@lms.local', password: 'BenchFleet1' };

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const pct = (xs: number[], p: number): number => {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * p) - 1))];
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));
const jitter = (x: number) => x * (0.8 + Math.random() * 0.4);

// The box's own code, compiled (as the log benchmark takes central's password hashing).
interface Identity { centralurl: string; boxid: string; secret: string; ackedseq: number }
interface ClientOptions { timeoutMs: number; fetch?: typeof fetch }
interface BoxCode {
  enrol(base: string, code: string, body: { secret: string; version: string }, o: ClientOptions):
    Promise<{ boxid: string; schoolid: string }>;
  contact(base: string, box: { boxid: string; secret: string }, body: Record<string, unknown>, o: ClientOptions):
    Promise<{ ackedseq: number }>;
  sendPiece(identity: Identity, piece: { first: number; last: number; entries: number; doc: LogDocument },
    o: ClientOptions): Promise<{ ackedseq: number; already: boolean }>;
  pollState(identity: Identity, o: ClientOptions): Promise<Record<string, string | null>>;
}
function boxCode(): BoxCode {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const client = require(path.join(repoRoot, 'classroom/dist/fleet/client.js')) as BoxCode;
  const up = require(path.join(repoRoot, 'classroom/dist/fleet/up.js')) as BoxCode;
  const down = require(path.join(repoRoot, 'classroom/dist/fleet/down.js')) as BoxCode;
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { enrol: client.enrol, contact: client.contact, sendPiece: up.sendPiece, pollState: down.pollState };
}

// ---- The wire: every request on its own connection (a box that syncs every few minutes keeps none open),
// its bytes read off the socket.

interface Sample { route: string; up: number; down: number; ms: number; status: number; body: number }
interface Link { rttMs: number; kbit: number; loss: number; cutEveryS: number; cutS: number; offsetS: number }

class Meter {
  samples: Sample[] = [];
  /** Link failures by kind (the link was down when a request started, or went down during it). */
  cuts = { before: 0, during: 0 };
  add(s: Sample) {
    this.samples.push(s);
  }
  of(route: string, ok = true) {
    return this.samples.filter((s) => s.route === route && (!ok || (s.status >= 200 && s.status < 300)));
  }
}

/** Node's fetch sends these when the caller does not: counted, so that the bytes are those a box sends. */
const FETCH_DEFAULTS: Record<string, string> = {
  accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'node',
  'accept-encoding': 'gzip, deflate',
};

const routeOf = (method: string, url: string) => `${method} ${new URL(url).pathname}`;

class Clock {
  private readonly wall0 = Date.now();
  constructor(private readonly compression = COMPRESSION) {}
  /** Simulated seconds since the start of the timed phase. */
  now(): number {
    return ((Date.now() - this.wall0) / 1000) * this.compression;
  }
  /** Resolves at simulated second `s`. */
  until(s: number): Promise<void> {
    return sleep(((s - this.now()) / this.compression) * 1000);
  }
}

/** In a cut at simulated second `s` (20 s of every minute, each box at its own offset)? */
const cutAt = (l: Link, s: number) => ((s + l.offsetS) % l.cutEveryS) < l.cutS;
/** Whether a cut begins in (s, s + seconds]. */
const cutWithin = (l: Link, s: number, seconds: number) => {
  for (let t = s; t <= s + seconds; t += 0.5) if (cutAt(l, t)) return true;
  return cutAt(l, s + seconds);
};
/** Seconds a transfer takes on the link: the TCP handshake and the request's round trip, bytes, loss. */
const linkSeconds = (l: Link, bytes: number, trips: number) =>
  (trips * l.rttMs / 1000 + (bytes * 8) / (l.kbit * 1000)) / (1 - l.loss);

function send(url: string, method: string, headers: Record<string, string>, body: Buffer | undefined):
  Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer; up: number; down: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const socket = req.socket!;
        const done = () => resolve({
          status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts),
          up: socket.bytesWritten, down: socket.bytesRead, ms: Number(process.hrtime.bigint() - t0) / 1e6,
        });
        // bytesRead is final once the socket has closed (the answer's last bytes may still be in flight).
        if (socket.destroyed) done();
        else socket.once('close', done);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A fetch for the box's code: counts the wire and, with a link, takes its time and its cuts. */
function meteredFetch(meter: Meter, clock: () => Clock | undefined, link?: Link): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = String(input);
    const method = init.method ?? 'GET';
    const r = new Request(url, { method, headers: init.headers, body: init.body });
    const body = init.body === undefined || init.body === null ? undefined : Buffer.from(await r.arrayBuffer());
    const headers: Record<string, string> = { ...FETCH_DEFAULTS };
    r.headers.forEach((v, k) => {
      headers[k] = v;
    });
    if (body) headers['content-length'] = String(body.length);
    const c = clock();
    const startS = c?.now() ?? 0;
    if (link && c) {
      const upEstimate = (body?.length ?? 0) + 600;
      if (cutAt(link, startS)) {
        meter.cuts.before += 1;
        await sleep(link.rttMs * 3);
        throw new TypeError('fetch failed', { cause: { code: 'ENETUNREACH' } });
      }
      if (cutWithin(link, startS, linkSeconds(link, upEstimate, 1.5))) {
        meter.cuts.before += 1;
        await sleep(linkSeconds(link, upEstimate, 1.5) * 1000);
        throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
      }
    }
    const a = await send(url, method, headers, body);
    if (link && c) {
      const seconds = linkSeconds(link, a.up + a.down, 2);
      await sleep(seconds * 1000 - a.ms);
      // Central answered, but the link went down before the answer arrived: the box never sees it.
      if (cutWithin(link, startS, seconds)) {
        meter.cuts.during += 1;
        throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
      }
    }
    meter.add({ route: routeOf(method, url), up: a.up, down: a.down, ms: a.ms, status: a.status,
      body: a.body.length });
    const out = new Headers();
    for (const [k, v] of Object.entries(a.headers))
      if (v !== undefined && k !== 'set-cookie') out.set(k, Array.isArray(v) ? v.join(', ') : v);
    return new Response(a.status === 204 || a.status === 304 ? null : a.body, { status: a.status, headers: out });
  }) as typeof fetch;
}

// ---- What a school writes: the log benchmark's generator, one stream per box, pulled as time passes.

interface Written { doc: LogDocument; results: Array<{ writtenS: number }>; entries: number }

class SchoolActivity {
  private readonly result: Iterator<Record<string, unknown>>;
  private readonly progress: Array<[ProgressKey, Iterator<Record<string, unknown>>]>;
  private readonly access: Iterator<Record<string, unknown>>;
  private carry = { results: 0, progress: 0, access: 0 };
  private k = 0;
  /** Rows written and not yet acknowledged, in the order they were written, each with its journal entries. */
  pending: Array<{ kind: 'result' | ProgressKey | 'access'; row: Record<string, unknown>; writtenS: number;
    entries: number }> = [];
  seq = 0;

  constructor(learners: Learner[], seed: number) {
    const big = { ...SIX_MONTH_SCHOOL, results: 1e9, progressRows: 7e9, accessRows: 1e9 };
    const content = { curriculumid: DEMO.curriculumid, gradeid: DEMO.gradeid, levelid: DEMO.levelid,
      lessonid: DEMO.lessonid };
    const src = logSource(big, learners, content, Date.UTC(2026, 11, 7), seed);
    this.result = (src.result as Iterable<Record<string, unknown>>)[Symbol.iterator]();
    this.access = (src.access as Iterable<Record<string, unknown>>)[Symbol.iterator]();
    this.progress = PROGRESS_KEYS.map((key) =>
      [key, ((src.progress as Record<string, Iterable<Record<string, unknown>>>)[key])[Symbol.iterator]()]);
  }

  /** The rows of `seconds` of school time ending at simulated second `nowS`. */
  write(fromS: number, nowS: number, perDay = PER_DAY) {
    const perSecond = (n: number) => n / (SCHOOL_HOURS * 3600);
    const seconds = nowS - fromS;
    const take = (kind: keyof typeof PER_DAY) => {
      const n = this.carry[kind] + perSecond(perDay[kind]) * seconds;
      this.carry[kind] = n - Math.floor(n);
      return Math.floor(n);
    };
    const at = () => fromS + Math.random() * seconds;
    const rows: typeof this.pending = [];
    for (let i = take('results'); i > 0; i -= 1) {
      const row = this.result.next().value as Record<string, unknown>;
      rows.push({ kind: 'result', row, writtenS: at(),
        entries: 1 + (row.studentprogressquestions as unknown[]).length });
    }
    for (let i = take('progress'); i > 0; i -= 1) {
      const [key, it] = this.progress[this.k++ % this.progress.length];
      rows.push({ kind: key, row: it.next().value as Record<string, unknown>, writtenS: at(), entries: 1 });
    }
    for (let i = take('access'); i > 0; i -= 1)
      rows.push({ kind: 'access', row: this.access.next().value as Record<string, unknown>, writtenS: at(),
        entries: 1 });
    rows.sort((a, b) => a.writtenS - b.writtenS);
    this.pending.push(...rows);
  }

  /** The next piece after the acknowledged rows: at most PIECE_ROWS journal entries, a result whole. */
  piece(): (Written & { first: number; last: number; count: number }) | undefined {
    if (!this.pending.length) return undefined;
    const take: typeof this.pending = [];
    let entries = 0;
    for (const p of this.pending) {
      if (take.length && entries + p.entries > PIECE_ROWS) break;
      take.push(p);
      entries += p.entries;
    }
    const progress = Object.fromEntries(PROGRESS_KEYS.map((k) => [k, [] as Array<Record<string, unknown>>]));
    const result: Array<Record<string, unknown>> = [];
    const access: Array<Record<string, unknown>> = [];
    for (const p of take) {
      if (p.kind === 'result') result.push(p.row);
      else if (p.kind === 'access') access.push(p.row);
      else progress[p.kind].push(p.row);
    }
    const doc = { log: { result, progress, access } } as unknown as LogDocument;
    return { doc, entries, first: this.seq + 1, last: this.seq + entries, count: take.length,
      results: take.filter((p) => p.kind === 'result') };
  }

  acknowledge(piece: { count: number; last: number }) {
    this.pending.splice(0, piece.count);
    this.seq = piece.last;
  }

  /** Drops the rows central holds already (a piece whose answer the link lost); answers those dropped. */
  acknowledgeUpTo(seq: number): typeof this.pending {
    let n = 0;
    while (n < this.pending.length && this.seq + this.pending[n].entries <= seq) this.seq += this.pending[n++].entries;
    return this.pending.splice(0, n);
  }
}

// ---- Setup: a central with the log benchmark's school (for today's path) and one school per box.

interface FleetSchool { schoolid: string; schoolname: string; learners: Learner[] }

async function seed(db: Knex): Promise<FleetSchool[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
    hashPassword(p: string): Promise<string>;
  };
  await seedSchool(db, learnersOf(SIX_MONTH_SCHOOL));
  const schools: FleetSchool[] = [];
  const schoolRows: Array<Record<string, unknown>> = [];
  const users: Array<Record<string, unknown>> = [];
  const students: Array<Record<string, unknown>> = [];
  for (let i = 0; i < BOXES; i += 1) {
    const s = { schoolid: crypto.randomUUID(), schoolname: `Fleet School ${String(i).padStart(4, '0')}`,
      learners: learnersOf({ ...SIX_MONTH_SCHOOL, learners: LEARNERS }, 1_000 + i) };
    schools.push(s);
    schoolRows.push({ schoolid: s.schoolid, schoolname: s.schoolname, countryid: DEMO.countryid,
      curriculums: JSON.stringify([DEMO.curriculumid]) });
    users.push({ schooluserid: crypto.randomUUID(), schoolusername: `fleet${i}t`, schooluserpasswordhash: 'x',
      schooluserrole: 3, schoolname: s.schoolname });
    for (const [j, l] of s.learners.entries()) {
      users.push({ schooluserid: l.schooluserid, schoolusername: `fleet${i}l${j}`, schooluserpasswordhash: 'x',
        schooluserrole: 4, schoolname: s.schoolname });
      students.push({ studentid: l.studentid, studentfirstname: `Learner ${j}`, genderid: 1, city: 'C', country: 'X',
        state: 'S', curriculumid: DEMO.curriculumid, schooluserid: l.schooluserid, schoolname: s.schoolname });
    }
  }
  await db.batchInsert('schools', schoolRows, 200);
  await db.batchInsert('schoolusers', users, 500);
  await db.batchInsert('students', students, 400);
  const lmsuserid = crypto.randomUUID();
  await db('lmsusers').insert({
    lmsuserid, lmsusername: STAFF.lmsusername, lmsuserpasswordhash: await hashPassword(STAFF.password),
    firstname: 'Bench', lmsuserrole: ROLE_IDS.superadmin, isverified: true, isdisabled: false,
  });
  await db('lmsusers_roles').insert({ lmsuserid, roleid: ROLE_IDS.superadmin });
  return schools;
}

async function signIn(origin: string, p: string, body: Record<string, string>): Promise<string> {
  const res = await fetch(`${origin}${p}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  const token = ((await res.json()) as { data?: { accessToken?: string } }).data?.accessToken;
  if (!token) throw new Error(`sign-in at ${p} failed: ${res.status}`);
  return token;
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (t: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  }));
}

interface Box {
  i: number;
  identity: Identity;
  activity: SchoolActivity;
  meter: Meter;
  link?: Link;
  fetch: typeof fetch;
  tags?: Record<string, string | null>;
  writtenUntilS: number;
  /** Seconds from a result written to its piece acknowledged (in central's tables). */
  latencies: number[];
  failures: number;
  runs: number;
  results: number;
}

/** Registers every box at central and enrols it: what an operator and an installer do, over the API. */
async function enrolFleet(origin: string, token: string, schools: FleetSchool[], code: BoxCode, clock: () => Clock |
  undefined): Promise<Box[]> {
  const boxes: Box[] = new Array<Box>(schools.length);
  const setupMeter = new Meter();
  await pool(schools, 8, async (s, i) => {
    const res = await fetch(`${origin}/fleet/boxes`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ schoolid: s.schoolid, name: `Box ${i}` }),
    });
    const reg = (await res.json()) as { data?: { enrolmentcode?: string } };
    if (res.status !== 201 || !reg.data?.enrolmentcode) throw new Error(`POST /fleet/boxes answered ${res.status}`);
    const secret = crypto.randomBytes(32).toString('hex');
    const answer = await code.enrol(origin, reg.data.enrolmentcode, { secret, version: '1.0.0' },
      { timeoutMs: 60_000, fetch: meteredFetch(setupMeter, () => undefined) });
    const link = i < LINK_BOXES ? { ...G2, offsetS: Math.random() * G2.cutEveryS } : undefined;
    const meter = new Meter();
    boxes[i] = {
      i, identity: { centralurl: origin, boxid: answer.boxid, secret, ackedseq: 0 },
      activity: new SchoolActivity(s.learners, 5_000 + i * 13), meter, link,
      fetch: meteredFetch(meter, clock, link), writtenUntilS: 0, latencies: [], failures: 0, runs: 0, results: 0,
    };
  });
  return boxes;
}

/** One run of the agent: a contact, the waiting pieces one by one, then the poll of the down path's tags. */
async function syncRun(box: Box, code: BoxCode, clock: Clock): Promise<void> {
  const o = { timeoutMs: 60_000, fetch: box.fetch };
  const startS = clock.now();
  const wall0 = Date.now();
  // What was written since the last run is on the box now.
  box.activity.write(box.writtenUntilS, startS);
  box.writtenUntilS = startS;
  const answer = await code.contact(box.identity.centralurl, box.identity, {
    version: '1.0.0', boxtime: new Date().toISOString(), freediskbytes: 5e9, lasterror: null,
    failures: box.failures, rowswaiting: box.activity.pending.reduce((n, p) => n + p.entries, 0),
  }, o);
  // A piece central imported but whose answer was lost: the contact says so, and it is not sent again.
  const held = box.activity.acknowledgeUpTo(answer.ackedseq).filter((p) => p.kind === 'result');
  for (const r of held) box.latencies.push(startS - r.writtenS);
  box.results += held.length;
  for (let p = box.activity.piece(); p; p = box.activity.piece()) {
    const a = await code.sendPiece(box.identity, p, o);
    if (a.ackedseq < p.last) throw new Error(`central acknowledged ${a.ackedseq}, not ${p.last}`);
    // In central's tables now: the run's own time is the link's (real seconds), the wait before it simulated.
    const ackedS = startS + (Date.now() - wall0) / 1000;
    for (const r of p.results) box.latencies.push(ackedS - r.writtenS);
    box.results += p.results.length;
    box.activity.acknowledge(p);
  }
  const tags = await code.pollState(box.identity, o);
  box.tags ??= tags;
}

async function runBox(box: Box, code: BoxCode, clock: Clock, endS: number): Promise<void> {
  // The fleet's runs spread over the first interval, as boxes started at different times.
  let nextS = Math.random() * POLL_SECONDS;
  while (nextS < endS) {
    await clock.until(nextS);
    box.runs += 1;
    try {
      await syncRun(box, code, clock);
      box.failures = 0;
      nextS = clock.now() + jitter(POLL_SECONDS);
    } catch (err) {
      box.failures += 1;
      const retry = Number((err as { retryAfterSeconds?: number }).retryAfterSeconds ?? 0);
      nextS = clock.now() + Math.max(jitter(Math.min(3600, 30 * 2 ** (box.failures - 1))), retry);
    }
  }
}

// ---- The journal a week offline leaves on a box: entries in the box's own table, measured in SQLite.

async function journalBytes(entries: number): Promise<{ bytes: number; file: number }> {
  const tdb = await benchDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
  try {
    const pages = async () => {
      const [{ page_count: n }] = (await tdb.db.raw('PRAGMA page_count')) as Array<{ page_count: number }>;
      const [{ page_size: size }] = (await tdb.db.raw('PRAGMA page_size')) as Array<{ page_size: number }>;
      return n * size;
    };
    const before = await pages();
    const rows = Array.from({ length: entries }, (_, i) => ({
      tablename: i % 6 === 0 ? 'studentprogress' : 'studentprogressquestions', rowkey: crypto.randomUUID() }));
    await tdb.db.batchInsert('fleetchanges', rows, 200);
    return { bytes: (await pages()) - before, file: await pages() };
  } finally {
    await tdb.dispose().catch(() => undefined);
  }
}

// ---- The run.

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export async function runFleetBench(): Promise<void> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const pgUrl = env.BENCH_DATABASE_URL ?? env.TEST_DATABASE_URL;
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-bench-fleet-'));
  const code = boxCode();
  let tdb: TestDatabase | undefined;
  let server: { child: ChildProcess; origin: string } | undefined;
  try {
    tdb = await benchDatabase({ kinds: central.kinds, migrations: central.migrations }, pgUrl);
    const t0 = Date.now();
    const schools = await seed(tdb.db);
    out(`machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ${fmt(os.totalmem() / 2 ** 30, 1)} ` +
      `GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}; central on ${pgUrl ? 'PostgreSQL' : 'SQLite'}`);
    out(`seeded ${fmt(BOXES)} schools of ${LEARNERS} learners in ${fmt((Date.now() - t0) / 1000, 1)} s`);
    server = await startCentral(tdb.url, { LOG_IMPORT_ENABLED: '1', OBJECT_DIR: path.join(work, 'objects'),
      MAX_UPLOAD_MB: '200', RATE_LIMIT_MAX: '100000000', LOGIN_RATE_LIMIT_MAX: '100000' });
    const { origin } = server;
    const pid = server.child.pid!;
    const staff = await signIn(origin, '/auth/login', { lmsusername: STAFF.lmsusername,
      lmsuserpassword: STAFF.password });
    // The timed phase's clock, once it starts (the boxes' fetches are made before).
    const timed: { clock?: Clock } = {};
    const t1 = Date.now();
    const boxes = await enrolFleet(origin, staff, schools, code, () => timed.clock);
    out(`registered and enrolled ${fmt(BOXES)} boxes over the API in ${fmt((Date.now() - t1) / 1000, 1)} s`);

    // Down: what a newly enrolled box fetches once (its school's package and both rosters), for a few boxes.
    const downMeter = new Meter();
    for (const box of boxes.slice(0, DOWN_BOXES)) {
      const f = meteredFetch(downMeter, () => undefined);
      for (const p of ['/fleet/box/package', '/fleet/box/roster/students', '/fleet/box/roster/teachers']) {
        const authorization = `Box ${box.identity.boxid}.${box.identity.secret}`;
        const res = await f(`${origin}${p}`, { headers: { authorization } });
        await res.arrayBuffer();
      }
    }

    // Warm-up: one run of up to 100 boxes with a poll interval's rows each, for central's CPU per run.
    const warm = boxes.filter((b) => !b.link).slice(0, 100);
    const warmClock = new Clock();
    timed.clock = warmClock;
    const warmRun = async (b: Box) => {
      b.writtenUntilS = -POLL_SECONDS;
      await syncRun(b, code, warmClock).catch(() => undefined);
    };
    // The first half warms central's code paths; the second is measured.
    const half = warm.length >> 1;
    await pool(warm.slice(0, half), 4, warmRun);
    const cpuW = procCpuSeconds(pid);
    await pool(warm.slice(half), 4, warmRun);
    const warmCost = (procCpuSeconds(pid) - cpuW) / Math.max(1, warm.length - half);
    for (const b of warm) b.latencies = [];
    const demand = (warmCost * BOXES) / POLL_SECONDS;
    if (COMPRESSION_SETTING === 'auto') COMPRESSION = Math.max(1, Math.min(10, 0.5 / demand));
    const simMinutes = Math.min(SIM_MINUTES, (WALL_SECONDS * COMPRESSION) / 60);
    out(`warm-up: ${warm.length} runs (the last ${warm.length - half} measured), central CPU ` +
      `${fmt(warmCost * 1000, 1)} ms a run: the fleet in real time ` +
      `asks ${fmt(demand * 100, 1)} % of one core; compression ${fmt(COMPRESSION, 2)}x (${COMPRESSION_SETTING})`);

    // The timed phase.
    const endS = simMinutes * 60;
    out(`timed phase: ${fmt(simMinutes, 1)} simulated minutes at ${fmt(COMPRESSION, 2)}x ` +
      `(${fmt(endS / COMPRESSION)} s of ` +
      `wall time); each box syncs every ${POLL_SECONDS} s (±20 %) of simulated time; ${LINK_BOXES} boxes on 2G ` +
      `(${G2.rttMs} ms round trip, ${G2.kbit} kbit/s, ${G2.loss * 100} % loss, cut ${G2.cutS} s of every ` +
      `${G2.cutEveryS} s), the rest on loopback`);
    resetPeakRss(pid);
    const load0 = os.loadavg()[0];
    let threads = 0;
    const threadWatch = setInterval(() => {
      threads = Math.max(threads, fs.readdirSync(`/proc/${pid}/task`).length);
    }, 1000);
    const cpu0 = procCpuSeconds(pid);
    const wall0 = Date.now();
    const c = new Clock(COMPRESSION);
    timed.clock = c;
    const runs0 = sum(boxes.map((b) => b.runs));
    await Promise.all(boxes.map((b) => runBox(b, code, c, endS)));
    const wallS = (Date.now() - wall0) / 1000;
    const runs = sum(boxes.map((b) => b.runs)) - runs0;
    clearInterval(threadWatch);
    const peakMb = procMb(pid, 'VmHWM');
    const load1 = os.loadavg()[0];
    const cpuS = procCpuSeconds(pid) - cpu0;
    const simS = c.now();

    const waitingAtEnd = sum(boxes.map((b) => b.activity.pending.filter((p) => p.kind === 'result').length));
    // Every result acknowledged is in central's tables once, and no other.
    const sent = sum(boxes.map((b) => b.results));
    const atCentral = Number((await tdb.db('studentprogress as p').join('students as s', 's.studentid', 'p.studentid')
      .where('s.schoolname', 'like', 'Fleet School %').count({ n: '*' }).first())?.n ?? 0);

    // Central's CPU for each of a run's requests alone: the same calls of loopback boxes, four at a time.
    const quiet = boxes.filter((b) => !b.link).slice(0, 200);
    const costOf = async (fn: (b: Box) => Promise<unknown>) => {
      const before = procCpuSeconds(pid);
      await pool(quiet, 4, async (b) => {
        await fn(b);
      });
      return (procCpuSeconds(pid) - before) / quiet.length;
    };
    const qo = () => ({ timeoutMs: 60_000, fetch: meteredFetch(new Meter(), () => undefined) });
    const cost = {
      contact: await costOf((b) => code.contact(origin, b.identity, { version: '1.0.0',
        boxtime: new Date().toISOString() }, qo())),
      state: await costOf((b) => code.pollState(b.identity, qo())),
      piece: await costOf(async (b) => {
        b.activity.write(0, POLL_SECONDS);
        const p = b.activity.piece();
        if (!p) return;
        await code.sendPiece(b.identity, p, qo());
        b.results += p.results.length;
        b.activity.acknowledge(p);
      }),
    };

    // Backlogs: one box's day and one box's week offline, then sent in pieces as the agent sends them.
    const backlog = async (box: Box, days: number, link?: Link) => {
      const m = new Meter();
      // Over a link, its cuts follow real time here: nothing else waits.
      const linkClock = new Clock(1);
      const f = meteredFetch(m, () => (link ? linkClock : undefined), link);
      const o = { timeoutMs: 600_000, fetch: f };
      const a = box.activity;
      const from = 1e7;
      // A school week: five school days of the day's rows.
      a.write(from, from + SCHOOL_HOURS * 3600 * days * (5 / 7));
      const entries = a.pending.reduce((n, p) => n + p.entries, 0);
      const results = a.pending.filter((p) => p.kind === 'result').length;
      const zip = { bytes: 0 };
      const started = Date.now();
      let attempts = 0;
      for (let p = a.piece(); p; p = a.piece()) {
        attempts += 1;
        try {
          const answer = await code.sendPiece(box.identity, p, o);
          if (answer.ackedseq >= p.last) a.acknowledge(p);
        } catch {
          await sleep(1000);
          const contact = await code.contact(box.identity.centralurl, box.identity, { version: '1.0.0',
            boxtime: new Date().toISOString() }, o).catch(() => ({ ackedseq: 0 }));
          a.acknowledgeUpTo(contact.ackedseq);
        }
      }
      const up = m.of('POST /fleet/box/log', false);
      zip.bytes = sum(up.map((s) => s.up + s.down));
      return { entries, results, bytes: zip.bytes, pieces: up.length, attempts,
        seconds: (Date.now() - started) / 1000 };
    };
    const day = await backlog(boxes[BOXES - 1], 7 / 5);
    const week = await backlog(boxes[BOXES - 2], 7);
    const week2g = LINK_BOXES ? await backlog(boxes[0], 7, { ...G2, offsetS: 0 }) : undefined;
    const journal = await journalBytes(week.entries);

    // Today's path in the same run: the six-month ZIP of one school (the layout GET /export/log writes) to
    // PUT /log/import, as a teacher uploads it each week.
    const zipFile = path.join(work, 'studentlog.zip');
    const zipMeter = new Meter();
    const learners = learnersOf(SIX_MONTH_SCHOOL);
    const zipBytes = await writeLogZipFile(zipFile, logSource(SIX_MONTH_SCHOOL, learners, {
      curriculumid: DEMO.curriculumid, gradeid: DEMO.gradeid, levelid: DEMO.levelid, lessonid: DEMO.lessonid }));
    const teacher = await signIn(origin, '/auth/school/login', { lmsusername: TEACHER.schoolusername,
      lmsuserpassword: TEACHER.password });
    const form = new FormData();
    form.append('importfile', await fs.openAsBlob(zipFile, { type: 'application/zip' }), 'studentlog');
    const zres = await meteredFetch(zipMeter, () => undefined)(`${origin}/log/import`, { method: 'PUT',
      headers: { Authorization: `Bearer ${teacher}` }, body: form });
    if (zres.status !== 200) throw new Error(`PUT /log/import answered ${zres.status} ${await zres.text()}`);
    const zipWire = sum(zipMeter.samples.map((s) => s.up + s.down));

    // ---- The table.
    const all = boxes.flatMap((b) => b.meter.samples);
    const loop = boxes.filter((b) => !b.link).flatMap((b) => b.meter.samples);
    const ok = (s: Sample) => s.status >= 200 && s.status < 300;
    out('');
    const perRun = cpuS / runs;
    const realCpu = ((perRun * BOXES) / POLL_SECONDS) * 100;
    const scheduled = (BOXES * simS) / POLL_SECONDS;
    out(`central CPU: ${fmt(cpuS, 1)} s over ${fmt(wallS, 1)} s of wall time = ${fmt((cpuS / wallS) * 100, 1)} % of ` +
      `one core at ${fmt(COMPRESSION, 2)}x, ${fmt(perRun * 1000, 1)} ms a run (${fmt(runs)} runs, ` +
      `${fmt((runs / scheduled) * 100)} % of the ${fmt(scheduled)} a fleet that never waits would make); ` +
      `${fmt(BOXES)} boxes every ${POLL_SECONDS / 60} min in real time: ${fmt(realCpu, 1)} % of one core`);
    out(`central during the timed phase: peak RSS ${fmt(peakMb)} MB, up to ${threads} threads; the machine's ` +
      `load average ${fmt(load0, 1)} at the start, ${fmt(load1, 1)} at the end (2 CPUs, shared with other work)`);
    out(`central CPU a request, alone (${quiet.length} of each, four at a time): contact ` +
      `${fmt(cost.contact * 1000, 1)} ms, state ${fmt(cost.state * 1000, 1)} ms, a piece of ` +
      `${POLL_SECONDS / 60} min ${fmt(cost.piece * 1000, 1)} ms`);
    out(`answers not 2xx: ${fmt(all.filter((s) => !ok(s)).length)} ` +
      `(${[...new Set(all.filter((s) => !ok(s)).map((s) => `${s.route} ${s.status}`))].join(', ') || 'none'}); ` +
      `2G cuts: ${fmt(sum(boxes.map((b) => b.meter.cuts.before)))} before central saw the request, ` +
      `${fmt(sum(boxes.map((b) => b.meter.cuts.during)))} after`);
    out(`results sent and acknowledged: ${fmt(sent)}; at central (fleet schools): ${fmt(atCentral)}; still on the ` +
      `boxes when the timed phase ended: ${fmt(waitingAtEnd)}`);
    out('');
    out('| route (loopback boxes) | requests | p50 ms | p99 ms | bytes up / request | bytes down / request ' +
      '| of which headers down |');
    out('|---|---:|---:|---:|---:|---:|---:|');
    const routes = [...new Set(loop.map((s) => s.route))].sort();
    for (const r of routes) {
      const xs = loop.filter((s) => s.route === r && ok(s));
      const ms = xs.map((s) => s.ms);
      out(`| ${r} | ${fmt(xs.length)} | ${fmt(pct(ms, 0.5), 1)} | ${fmt(pct(ms, 0.99), 1)} ` +
        `| ${fmt(mean(xs.map((s) => s.up)))} | ${fmt(mean(xs.map((s) => s.down)))} ` +
        `| ${fmt(mean(xs.map((s) => s.down - s.body)))} |`);
    }
    for (const r of ['GET /fleet/box/package', 'GET /fleet/box/roster/students', 'GET /fleet/box/roster/teachers']) {
      const xs = downMeter.of(r);
      out(`| ${r} (once per box, ${xs.length} boxes) | ${xs.length} | ${fmt(pct(xs.map((s) => s.ms), 0.5), 1)} ` +
        `| ${fmt(pct(xs.map((s) => s.ms), 0.99), 1)} | ${fmt(mean(xs.map((s) => s.up)))} | ` +
        `${fmt(mean(xs.map((s) => s.down)))} | ${fmt(mean(xs.map((s) => s.down - s.body)))} |`);
    }
    const pieces = all.filter((s) => s.route === 'POST /fleet/box/log' && ok(s));
    const upBytes = sum(pieces.map((s) => s.up + s.down));
    const perResult = upBytes / sent;
    const contactS = all.filter((s) => s.route === 'POST /fleet/box/contact' && ok(s));
    const stateS = all.filter((s) => s.route === 'GET /fleet/box/state' && ok(s));
    const pollUp = mean(contactS.map((s) => s.up)) + mean(stateS.map((s) => s.up));
    const pollDown = mean(contactS.map((s) => s.down)) + mean(stateS.map((s) => s.down));
    const lat2g = boxes.filter((b) => b.link).flatMap((b) => b.latencies);
    const latLoop = boxes.filter((b) => !b.link).flatMap((b) => b.latencies);
    const weekly = SIX_MONTH_SCHOOL.results / 180 * 7;
    out('');
    out('| path | bytes on the wire per result up | vs six-month ZIP share |');
    out('|---|---:|---:|');
    const zipShare = zipWire / SIX_MONTH_SCHOOL.results;
    out(`| fleet, every ${POLL_SECONDS / 60} min (${fmt(pieces.length)} pieces, ${fmt(sent)} results) | ` +
      `${fmt(perResult)} | ${fmt(perResult / zipShare, 2)} |`);
    out(`| fleet, a day's backlog (${day.pieces} pieces, ${fmt(day.results)} results) | ` +
      `${fmt(day.bytes / day.results)} | ${fmt(day.bytes / day.results / zipShare, 2)} |`);
    out(`| fleet, a week's backlog (${week.pieces} pieces, ${fmt(week.results)} results) | ` +
      `${fmt(week.bytes / week.results)} | ${fmt(week.bytes / week.results / zipShare, 2)} |`);
    out(`| ZIP, six months once (${fmt(zipBytes / 2 ** 20, 1)} MB ZIP, ${fmt(zipWire)} bytes on the wire) | ` +
      `${fmt(zipShare)} | 1.00 |`);
    out(`| ZIP, six months uploaded weekly (${fmt(weekly)} new results a week) | ${fmt(zipWire / weekly)} | ` +
      `${fmt(zipWire / weekly / zipShare, 2)} |`);
    out('');
    out(`poll (contact + state, nothing new): ${fmt(pollUp)} bytes up, ${fmt(pollDown)} bytes down ` +
      `(contact ${fmt(mean(contactS.map((s) => s.up)))} / ${fmt(mean(contactS.map((s) => s.down)))}, ` +
      `state ${fmt(mean(stateS.map((s) => s.up)))} / ${fmt(mean(stateS.map((s) => s.down)))})`);
    out(`result written -> in central's tables: p50 ${fmt(pct(lat2g, 0.5))} s, p95 ${fmt(pct(lat2g, 0.95))} s on 2G ` +
      `(${fmt(lat2g.length)} results); loopback p95 ${fmt(pct(latLoop, 0.95))} s`);
    out(`a week offline (40 learners, 5 school days): ${fmt(week.entries)} journal entries = ` +
      `${fmt(journal.bytes / 2 ** 20, 2)} MB in the box's SQLite (beside the rows themselves), ` +
      `${fmt(week.bytes / 2 ** 20, 2)} MB to send in ${week.pieces} pieces; at central nothing waits between pieces`);
    if (week2g) {
      out(`  the same week over 2G: sent in ${fmt(week2g.seconds)} s (${week2g.attempts} attempts for ` +
        `${week2g.pieces} pieces that reached central)`);
    }
    const checks: Array<[string, boolean]> = [
      [`bytes per result up <= ${TARGETS.bytesPerResult} every ${POLL_SECONDS / 60} min: ${fmt(perResult)}`,
        perResult <= TARGETS.bytesPerResult],
      [`bytes per result up <= ${TARGETS.bytesPerResult} for a week's backlog: ${fmt(week.bytes / week.results)}`,
        week.bytes / week.results <= TARGETS.bytesPerResult],
      [`poll < ${TARGETS.pollBytes} bytes each way: ${fmt(pollUp)} up, ${fmt(pollDown)} down`,
        pollUp < TARGETS.pollBytes && pollDown < TARGETS.pollBytes],
      [`${fmt(BOXES)} boxes polling every ${POLL_SECONDS / 60} min <= ${TARGETS.cpuPct} % of one core: ` +
        `${fmt(realCpu, 2)} %`, realCpu <= TARGETS.cpuPct],
      [`result in central's reports within ${TARGETS.latencyP95S} s (p95, 2G): ${fmt(pct(lat2g, 0.95))} s`,
        !lat2g.length || pct(lat2g, 0.95) <= TARGETS.latencyP95S],
      [`every acknowledged result at central exactly once: ${fmt(sent)} sent, ${fmt(atCentral)} there`,
        sent === atCentral],
    ];
    out('');
    for (const [words, met] of checks) out(`${met ? 'met   ' : 'MISSED'} ${words}`);
    if (checks.some(([, met]) => !met)) process.exitCode = 1;
  } finally {
    if (server) await stopServer(server.child);
    await tdb?.dispose().catch(() => undefined);
    await fsp.rm(work, { recursive: true, force: true });
  }
}
