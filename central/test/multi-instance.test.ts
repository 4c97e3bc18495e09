import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent, type Knex, type TestDatabase } from '@lms/db';
import { ROLE_IDS, streamToBuffer, writeLogZipFromDocument, type LogDocument } from '@lms/shared';
import { createS3Store, type ObjectStore } from '../src/objects';
import { LEASE_MS } from '../src/http/turns';
import { createSchoolUser, createStaff, PASSWORD } from './accounts';
import { closedPort, testDatabase } from './helpers';
import { SIGNED_S3_KEY, startSignedS3, type SignedS3 } from './s3-signed';

/**
 * Two central instances as an operator runs them: real processes (`node central/dist/server.js`), production
 * mode with real secrets, on one PostgreSQL, one Redis and one S3-compatible store that checks request
 * signatures, all started here. PostgreSQL and Redis are needed: in the PostgreSQL pass of `make test`
 * (TEST_DATABASE_URL, TEST_REDIS_URL) this runs; in CI it refuses to be skipped anywhere else.
 */
const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const sqlitePass = process.env.LMS_TEST_PASS === 'sqlite';
const runs = !!pgUrl && !!redisUrl;

if (process.env.CI && !sqlitePass && !runs) {
  throw new Error(
    'the multi-instance test needs TEST_DATABASE_URL and TEST_REDIS_URL in CI ' +
      '(scripts/ci/ensure-services.sh provides them)',
  );
}

// LMS_CENTRAL_SERVER runs the same test against another build of central (for instance an older release).
const server = process.env.LMS_CENTRAL_SERVER ?? path.resolve(__dirname, '../dist/server.js');

interface Instance {
  child: ChildProcess;
  port: number;
  origin: string;
  output: string[];
}

function logOf(name: string, n: number): LogDocument {
  const at = Date.parse('2026-08-20T05:00:00Z');
  return {
    log: {
      result: [],
      progress: {
        studentlearningprogress: [],
        studentgradesprogress: [],
        studentlevelsprogress: [],
        studentlessonsprogress: [],
        studentpoints: [],
        studentappusages: [],
        studentactives: Array.from({ length: n }, (_, i) => ({
          studentactiveid: crypto.randomUUID(),
          studentid: name,
          referenceid: DEMO.lessonid,
          referencetype: 3,
          created_at: new Date(at + i * 1000).toISOString(),
        })),
      },
      access: [],
    },
  } as unknown as LogDocument;
}

/**
 * Pairs of uploads finished in the same tick, one on each instance
 * (before names were claimed, 4-5 of 40 pairs collided here).
 */
const PAIRS = 60;

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

describe.runIf(runs)('two central instances on one PostgreSQL, Redis and S3 store', () => {
  let tdb: TestDatabase;
  let db: Knex;
  let s3: SignedS3 & { tmp: string };
  let store: ObjectStore;
  let spool: string;
  let env: Record<string, string>;
  let studentid: string;
  const instances: Instance[] = [];
  let a: Instance;
  let b: Instance;

  async function start(): Promise<Instance> {
    const port = await closedPort();
    const output: string[] = [];
    const child = spawn(process.execPath, ['--max-old-space-size=256', server], {
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
    child.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
    const inst = { child, port, origin: `http://127.0.0.1:${port}`, output };
    instances.push(inst);
    for (let i = 0; i < 300; i++) {
      if (child.exitCode !== null) throw new Error(`central exited with ${child.exitCode}: ${output.join('')}`);
      try {
        if ((await fetch(`${inst.origin}/`)).status === 200) return inst;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`central did not start: ${output.join('')}`);
  }

  const login = async (inst: Instance, pathname: string, lmsusername: string, lmsuserpassword: string) =>
    fetch(`${inst.origin}${pathname}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ lmsusername, lmsuserpassword }),
    });
  const tokenOf = async (inst: Instance, pathname: string, user: string, password: string) => {
    const res = await login(inst, pathname, user, password);
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { accessToken: string } }).data.accessToken;
  };

  let teacher: string;
  let teacher2: string;

  beforeAll(async () => {
    tdb = await testDatabase();
    db = tdb.db;
    await seedDemoContent(db);
    s3 = await startSignedS3('lms-multi-');
    spool = path.join(s3.tmp, 'spool');
    await fsp.mkdir(spool);
    const bucket = `multi-${crypto.randomBytes(4).toString('hex')}`;
    const secret = () => crypto.randomBytes(32).toString('hex');
    env = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      DATABASE_URL: tdb.url,
      JWT_SECRET: secret(), APPLICATION_API_KEY: secret(), SERVER_SYNC_KEY: secret(), RPI_SECRET: secret(),
      LOG_IMPORT_ENABLED: 'true',
      S3_ENDPOINT: s3.origin,
      // Clients reach the store by another name than central does.
      S3_PUBLIC_ENDPOINT: s3.origin.replace('127.0.0.1', 'localhost'),
      S3_ACCESS_KEY: SIGNED_S3_KEY, S3_SECRET_KEY: SIGNED_S3_KEY, S3_BUCKET: bucket,
      // s3rver takes only its own fixed key, far below the rule for an issued key.
      ALLOW_WEAK_S3_SECRET_KEY: '1',
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: `t${crypto.randomBytes(4).toString('hex')}:`,
      TMPDIR: spool,
      ORPHAN_GRACE_SECONDS: '2',
      RATE_LIMIT_MAX: '100000',
      LOGIN_RATE_LIMIT_MAX: '5',
      MAX_CONCURRENT_IMPORTS: '4',
      DATABASE_POOL_MAX: '4',
      LOG_LEVEL: 'warn',
      MALLOC_MMAP_THRESHOLD_: '1048576',
    };
    store = createS3Store({
      endpoint: s3.origin,
      accessKey: SIGNED_S3_KEY,
      secretKey: SIGNED_S3_KEY,
      bucket,
      region: 'us-east-1',
    });
    await createSchoolUser(db, { schoolusername: 'multi.teacher', role: 3, schoolname: DEMO.schoolname });
    // Each account imports one log at a time across the instances, so the pairs come from two teachers.
    await createSchoolUser(db, { schoolusername: 'multi.teacher2', role: 3, schoolname: DEMO.schoolname });
    await createStaff(db, { lmsusername: 'multi.admin@example.org', roleids: [ROLE_IDS.superadmin] });
    const schooluserid = crypto.randomUUID();
    await db('schoolusers').insert({
      schooluserid,
      schoolusername: 'multi.learner',
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
      schoolname: DEMO.schoolname,
    });
    studentid = crypto.randomUUID();
    await db('students').insert({
      studentid,
      studentfirstname: 'M',
      genderid: 1,
      city: 'C',
      country: 'X',
      state: 'S',
      curriculumid: DEMO.curriculumid,
      schooluserid,
      schoolname: DEMO.schoolname,
    });
    [a, b] = await Promise.all([start(), start()]);
    teacher = await tokenOf(a, '/auth/school/login', 'multi.teacher', 'demo');
    teacher2 = await tokenOf(b, '/auth/school/login', 'multi.teacher2', 'demo');
  }, 60_000);

  afterAll(async () => {
    for (const i of instances) if (i.child.exitCode === null) i.child.kill('SIGKILL');
    await db?.destroy().catch(() => undefined);
    await tdb?.dispose().catch(() => undefined);
    await s3?.close();
  });

  /**
   * PUT /log/import with every byte but the last sent; the returned `finish` sends the last one, so that
   * two uploads finished in the same tick reach their instances within the same millisecond.
   */
  async function heldUpload(
    inst: Instance,
    zip: Buffer,
    token = teacher,
  ): Promise<{
    finish: () => void;
    answer: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>;
  }> {
    const boundary = `----multi${crypto.randomBytes(8).toString('hex')}`;
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="importfile"; ` +
          `filename="studentlog.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      zip,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const req = http.request({
      host: '127.0.0.1',
      port: inst.port,
      method: 'PUT',
      path: '/log/import',
      agent: false,
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(body.length),
      },
    });
    req.setNoDelay(true);
    const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
          );
        });
        req.on('error', reject);
      },
    );
    await new Promise<void>((resolve) => req.write(body.subarray(0, body.length - 1), () => resolve()));
    return { finish: () => req.end(body.subarray(body.length - 1)), answer };
  }

  it('gives every upload its own archive when pairs of uploads end in the same ' +
      'millisecond on the two instances', async () => {

    const sent: Array<{ zip: Buffer; archive: string }> = [];
    for (let p = 0; p < PAIRS; p++) {
      // Every ZIP differs (its RPI-API text), so an archive overwritten by another upload shows.
      const zips = await Promise.all(
        [0, 1].map((i) =>
          streamToBuffer(
            writeLogZipFromDocument(logOf(studentid, 3), [
              { name: 'RPI-API-info-2026-08-20.log', content: `pair ${p} instance ${i} ${crypto.randomUUID()}\n` },
            ]),
          ),
        ),
      );
      const held = await Promise.all([heldUpload(a, zips[0]), heldUpload(b, zips[1], teacher2)]);
      await new Promise((r) => setTimeout(r, 20));
      held[0].finish();
      held[1].finish();
      const answers = await Promise.all(held.map((h) => h.answer));
      answers.forEach((res, i) => {
        expect(res.status, res.body).toBe(200);
        sent.push({ zip: zips[i], archive: JSON.parse(String(res.headers['x-log-import'])).archive });
      });
    }
    const names = sent.map((s) => s.archive);
    // The test did bring both instances to name an archive in the same millisecond: such a pair's names
    // are one millisecond apart (the second claim moved on), where before they were equal.
    const stamp = (n: string) => Number(/\d{13}/.exec(n)![0]);
    const close = Array.from({ length: PAIRS }, (_, p) =>
      Math.abs(stamp(names[2 * p]) - stamp(names[2 * p + 1])),
    ).filter((d) => d <= 1).length;
    expect(close, 'no pair of uploads reached the two instances within a millisecond').toBeGreaterThan(0);
    expect(names.every((n) => /^logupload-\d{13}\.zip$/.test(n))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    const rows = await db('logfiles').where({ type: 2 }).whereIn('logfilename', names).select('logfilename');
    expect(rows.length).toBe(names.length);
    // Each archive holds its own upload's bytes.
    for (const s of sent) {
      const got = await streamToBuffer(await store.get(s.archive));
      expect(md5(got), s.archive).toBe(md5(s.zip));
    }
  }, 120_000);

  it('kill -9 in the middle of an import leaves neither an archive nor a spool ' +
      'folder once the sweep has run', async () => {
    const zip = await streamToBuffer(
      writeLogZipFromDocument(logOf(studentid, 60_000), [{ name: 'RPI-API-info-2026-08-21.log', content: 'big\n' }]),
    );
    const victim = await start();
    const before = new Set((await store.list('logupload-')).map((o) => o.key));
    const spoolBefore = new Set(fs.readdirSync(spool));
    const token = await tokenOf(victim, '/auth/school/login', 'multi.teacher', 'demo');
    const boundary = '----multikill';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="importfile"; ` +
          `filename="studentlog.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      zip,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const req = http.request({
      host: '127.0.0.1',
      port: victim.port,
      method: 'PUT',
      path: '/log/import',
      agent: false,
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(body.length),
      },
    });
    req.on('error', () => undefined);
    req.on('response', (res) => res.resume());
    req.end(body);
    // Wait until the archive is in the store while its import has not committed, then kill the process.
    let orphan: string | undefined;
    for (let i = 0; i < 400 && !orphan; i++) {
      const fresh = (await store.list('logupload-')).map((o) => o.key).filter((k) => !before.has(k));
      for (const k of fresh) {
        if (!(await db('syncs').where({ filename: k }).first())) orphan = k;
      }
      if (!orphan) await new Promise((r) => setTimeout(r, 10));
    }
    expect(orphan, 'the archive was not stored before the import ended').toBeDefined();
    victim.child.kill('SIGKILL');
    await new Promise((r) => victim.child.once('exit', r));
    const litter = fs.readdirSync(spool).filter((n) => !spoolBefore.has(n));
    expect(litter.some((n) => n.startsWith('lms-logimport-'))).toBe(true);
    // What the crash left: the object without a row, and the upload's spool folder.
    expect(await db('syncs').where({ filename: orphan }).first()).toBeUndefined();
    expect(await db('logfiles').where({ logfilename: orphan }).first()).toBeUndefined();
    await store.stat(orphan!);

    // A restart of that instance sweeps at once; the other instance's periodic sweep would too.
    await start();
    let gone = false;
    for (let i = 0; i < 200 && !gone; i++) {
      const objectGone = !(await store.list('logupload-')).some((o) => o.key === orphan);
      const folderGone = litter.every((n) => !fs.existsSync(path.join(spool, n)));
      gone = objectGone && folderGone;
      if (!gone) await new Promise((r) => setTimeout(r, 50));
    }
    expect(gone).toBe(true);
    expect(await db('logarchives').where({ archive: orphan }).first()).toBeUndefined();
    expect(await db('studentactives').count({ n: '*' }).first()).toEqual({ n: 3 * 2 * PAIRS });
    // The survivors go on importing (another account: the killed import's turn lapses with its lease).
    const again = await heldUpload(b, await streamToBuffer(writeLogZipFromDocument(logOf(studentid, 3), [])), teacher2);
    again.finish();
    expect((await again.answer).status).toBe(200);
    // The teacher whose import died with its instance imports again within seconds: a 429 meanwhile says
    // when (Retry-After, the turn's lease lapsing), and the upload sent then is taken.
    const retryZip = await streamToBuffer(writeLogZipFromDocument(logOf(studentid, 3), []));
    let retried = await heldUpload(b, retryZip);
    retried.finish();
    let answer = await retried.answer;
    const waits: number[] = [];
    while (answer.status === 429 && waits.length < 3) {
      waits.push(Number(answer.headers['retry-after']));
      await new Promise((r) => setTimeout(r, waits.at(-1)! * 1000));
      retried = await heldUpload(b, retryZip);
      retried.finish();
      answer = await retried.answer;
    }
    expect(answer.status, answer.body).toBe(200);
    expect(waits.every((w) => w >= 1 && w <= LEASE_MS / 1000)).toBe(true);
  }, 120_000);

  it('hands out presigned URLs for the public address, which the store honours, and refuses altered ones', async () => {
    const admin = await tokenOf(a, '/auth/login', 'multi.admin@example.org', PASSWORD);
    const res = await fetch(`${a.origin}/document/presign/Multi_1.mp3`, {
      headers: { Authorization: `Bearer ${admin}` },
    });
    expect(res.status).toBe(200);
    const url = ((await res.json()) as { data: string }).data;
    expect(url.startsWith(`${env.S3_PUBLIC_ENDPOINT}/${env.S3_BUCKET}/Multi_1.mp3?`)).toBe(true);
    const bytes = Buffer.concat([Buffer.from('ID3'), crypto.randomBytes(4000)]);
    const otherName = url.replace('/Multi_1.mp3?', '/Multi_2.mp3?');
    const sig = new URL(url).searchParams.get('X-Amz-Signature')!;
    const badSig = url.replace(sig, sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0'));
    const refusedBefore = s3.refused.length;
    expect((await fetch(otherName, { method: 'PUT', body: bytes })).status).toBe(403);
    expect((await fetch(badSig, { method: 'PUT', body: bytes })).status).toBe(403);
    expect(s3.refused.slice(refusedBefore).map((r) => r.reason)).toEqual([
      'SignatureDoesNotMatch',
      'SignatureDoesNotMatch',
    ]);
    // A client with the wrong secret is refused as well.
    const wrong = createS3Store({
      endpoint: s3.origin,
      accessKey: SIGNED_S3_KEY,
      secretKey: 'not-the-secret',
      bucket: env.S3_BUCKET,
      region: 'us-east-1',
    });
    await expect(wrong.put('Multi_3.mp3', bytes)).rejects.toThrow(/AccessDenied|SignatureDoesNotMatch/);
    expect(s3.refused.at(-1)?.reason).toBe('SignatureDoesNotMatch');
    expect((await store.list('Multi_')).map((o) => o.key)).toEqual([]);
    // s3rver alone takes the altered URL: it checks no V4 signature, which is why the gate stands in front of it.
    expect(
      (await fetch(badSig.replace(env.S3_PUBLIC_ENDPOINT, s3.rawOrigin), { method: 'PUT', body: bytes })).status,
    ).toBe(200);
    await store.delete('Multi_1.mp3');
    // The genuine URL stores the file; central reads it back on the other instance.
    expect((await fetch(url, { method: 'PUT', body: bytes })).status).toBe(200);
    const media = await fetch(`${b.origin}/media/Multi_1.mp3`);
    expect(media.status).toBe(200);
    expect(md5(Buffer.from(await media.arrayBuffer()))).toBe(md5(bytes));
  });

  it('revokes a sign-out on the other instance at once', async () => {
    const admin = await tokenOf(a, '/auth/login', 'multi.admin@example.org', PASSWORD);
    const read = () => fetch(`${b.origin}/curriculum/all`, { headers: { Authorization: `Bearer ${admin}` } });
    expect((await read()).status).toBe(200);
    expect(
      (await fetch(`${a.origin}/auth/logout`, { method: 'POST', headers: { Authorization: `Bearer ${admin}` } }))
        .status,
    ).toBe(200);
    // Well within the 5 s for which an instance would otherwise keep trusting a token it has checked.
    let status = 0;
    for (let i = 0; i < 20 && status !== 401; i++) {
      status = (await read()).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe(401);
  });

  it('counts failed sign-ins across both instances', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await login(i % 2 ? b : a, '/auth/login', 'multi.admin@example.org', 'Wrong-Passw0rd')).status);
    // LOGIN_RATE_LIMIT_MAX=5 for both together: three failures on each would be within a per-instance limit.
    expect(statuses.slice(0, 5)).not.toContain(429);
    expect(statuses[5]).toBe(429);
  });
});
