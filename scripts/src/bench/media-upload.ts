import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { central, createTestDatabase, repoRoot, type TestDatabase } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { procMb, resetPeakRss, startCentral, stopServer } from './servers';

// `make bench`: a large video uploaded through POST /document/upload (streamed into the folder object
// store), against a plain disk copy of the same file in the same run, and the server's memory meanwhile.

const SIZE_MB = Number(process.env.BENCH_MEDIA_MB ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TARGETS = { ratio: 1.5, rssGrowthMb: 30 };
/** The warm-up upload before the measured one. */
const WARM_BYTES = 4 * 1024 * 1024;
const STAFF = { lmsusername: 'bench-media@bench.local', password: 'BenchMedia1' };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** A file that passes the upload's type check (an MP4 `ftyp` box first), of random bytes. */
async function writeVideo(file: string, bytes: number): Promise<void> {
  const out = fs.createWriteStream(file);
  out.write(Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypisom', 'latin1')]));
  const chunk = crypto.randomBytes(1024 * 1024);
  for (let left = bytes - 12; left > 0; left -= chunk.length) {
    if (!out.write(left >= chunk.length ? chunk : chunk.subarray(0, left)))
      await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

/** What the store does with an upload, without HTTP: read the file, write a copy, fsync it. */
async function diskCopy(from: string, to: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  await pipeline(fs.createReadStream(from), fs.createWriteStream(to));
  const handle = await fsp.open(to, 'r+');
  await handle.sync();
  await handle.close();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await fsp.rm(to, { force: true });
  return seconds;
}

async function seedStaff(tdb: TestDatabase): Promise<void> {
  // The compiled central API is what runs, so the password hash comes from it too.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
    hashPassword(p: string): Promise<string>;
  };
  const lmsuserid = crypto.randomUUID();
  await tdb.db('lmsusers').insert({
    lmsuserid,
    lmsusername: STAFF.lmsusername,
    lmsuserpasswordhash: await hashPassword(STAFF.password),
    firstname: 'Bench',
    lastname: 'Media',
    lmsuserrole: ROLE_IDS.superadmin,
    isverified: true,
    isdisabled: false,
  });
  await tdb.db('lmsusers_roles').insert({ lmsuserid, roleid: ROLE_IDS.superadmin });
}

interface Round {
  copySeconds: number;
  uploadSeconds: number;
  rssBeforeMb: number;
  rssPeakMb: number;
}

async function oneRound(file: string, work: string, round: number): Promise<Round> {
  const tdb = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
  const objectDir = await fsp.mkdtemp(path.join(work, 'objects-'));
  let server: { child: ChildProcess; origin: string } | undefined;
  try {
    await seedStaff(tdb);
    // The copy lands on the same file system as the store's objects, as the upload does.
    const copySeconds = await diskCopy(file, path.join(objectDir, 'copy.bin'));
    server = await startCentral(tdb.url, { OBJECT_DIR: objectDir, MAX_MEDIA_MB: String(Math.max(SIZE_MB * 2, 200)) });
    const login = await fetch(`${server.origin}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ lmsusername: STAFF.lmsusername, lmsuserpassword: STAFF.password }),
    });
    const token = ((await login.json()) as { data?: { accessToken?: string } }).data?.accessToken;
    if (!token) throw new Error(`sign-in failed: ${login.status}`);
    const pid = server.child.pid!;
    // Warm, as a server that has served uploads before is: the first upload of a process loads and compiles
    // the upload's code; a small one does that here, and is removed again.
    await fetch(`${server.origin}/document`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const warm = new FormData();
    warm.append(
      'file',
      new Blob([(await fs.openAsBlob(file)).slice(0, WARM_BYTES)], { type: 'video/mp4' }),
      `Warm_${round}.mp4`,
    );
    const warmed = await fetch(`${server.origin}/document/upload`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: warm,
    });
    if (warmed.status !== 200) throw new Error(`the warm-up upload answered ${warmed.status} ${await warmed.text()}`);
    const rssBeforeMb = procMb(pid, 'VmRSS');
    resetPeakRss(pid);
    const form = new FormData();
    form.append('file', await fs.openAsBlob(file, { type: 'video/mp4' }), `Bench_${round}.mp4`);
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${server.origin}/document/upload`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: form,
    });
    const body = await res.text();
    const uploadSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (res.status !== 200) throw new Error(`POST /document/upload answered ${res.status} ${body}`);
    const stored = await fsp.stat(path.join(objectDir, `Bench_${round}.mp4`));
    if (stored.size !== (await fsp.stat(file)).size) throw new Error('the stored object is not the whole file');
    return { copySeconds, uploadSeconds, rssBeforeMb, rssPeakMb: procMb(pid, 'VmHWM') };
  } finally {
    if (server) {
      await stopServer(server.child);
    }
    await tdb.dispose().catch(() => undefined);
    await fsp.rm(objectDir, { recursive: true, force: true });
  }
}

export async function runMediaUploadBench(): Promise<void> {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-bench-media-'));
  try {
    const file = path.join(work, 'video.mp4');
    const bytes = Math.round(SIZE_MB * 1024 * 1024);
    await writeVideo(file, bytes);
    const out = (s: string) => process.stdout.write(`${s}\n`);
    out(
      `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}; ` +
        `file ${fmt(SIZE_MB, 1)} MB; ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} (medians; RSS growth the largest)`,
    );
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i += 1) rounds.push(await oneRound(file, work, i + 1));
    const copy = median(rounds.map((r) => r.copySeconds));
    const upload = median(rounds.map((r) => r.uploadSeconds));
    const ratio = median(rounds.map((r) => r.uploadSeconds / r.copySeconds));
    const growth = Math.max(...rounds.map((r) => r.rssPeakMb - r.rssBeforeMb));
    const peak = Math.max(...rounds.map((r) => r.rssPeakMb));
    out('| run | seconds | MB/s | vs disk copy | server RSS before → peak |');
    out('|---|---:|---:|---:|---:|');
    out(`| plain disk copy (read, write, fsync) | ${fmt(copy, 2)} | ${fmt(SIZE_MB / copy)} | 1.00 | |`);
    out(
      `| POST /document/upload (multipart over HTTP into the folder store) | ${fmt(upload, 2)} ` +
        `| ${fmt(SIZE_MB / upload)} | ${fmt(ratio, 2)} | ${fmt(median(rounds.map((r) => r.rssBeforeMb)))} ` +
        `→ ${fmt(peak)} MB |`,
    );
    const mark = (ok: boolean) => (ok ? 'meets' : 'MISSES');
    out('');
    out(
      `upload takes ${fmt(ratio, 2)}× the copy's time (${mark(ratio <= TARGETS.ratio)} <= ${TARGETS.ratio}×), server ` +
        `RSS grows by ${fmt(growth, 1)} MB at most (${mark(growth < TARGETS.rssGrowthMb)} < ${TARGETS.rssGrowthMb} MB)`,
    );
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}
