import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { central, createTestDatabase, repoRoot, type Manifest, type TestDatabase } from '@lms/db';
import { createObjectStore, type ObjectStore } from '../src/objects';
import { closedPort } from './helpers';

const cli = path.join(repoRoot, 'central', 'dist', 'cli.js');
const server = path.join(repoRoot, 'central', 'dist', 'server.js');
const KEY = 'operator-held-backup-key-0123456789abcdef0123456789';

type Run = { code: number; stdout: string; stderr: string };

function runCli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const options = { env: { ...process.env, NODE_ENV: 'test', ...env } };
    execFile(process.execPath, [cli, ...args], options, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const get = (port: number) => new Promise<number>((resolve, reject) => {
  http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode ?? 0));
  }).on('error', reject);
});

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
  else child.once('exit', (code) => resolve(code));
});

/** A real central server on the test database, as systemd would run it. */
async function startServer(env: Record<string, string>, logDir: string): Promise<ChildProcess> {
  const port = await closedPort();
  const child = spawn(process.execPath, [server], {
    env: {
      PATH: process.env.PATH, NODE_ENV: 'test', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn',
      LOG_DIR: logDir,
      ...env,
    },
    stdio: 'ignore',
  });
  for (let i = 0; i < 600; i += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await get(port)) === 200) return child;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('server did not start');
}

describe('central restore while instances serve the database', () => {
  let t: TestDatabase;
  let tmp: string;
  let store: ObjectStore;
  let env: Record<string, string>;
  let dir: string;
  const pg = !!process.env.TEST_DATABASE_URL;
  const countries = async () => (await t.db('countries').select('countryid').orderBy('countryid'))
    .map((c) => c.countryid);
  const objects = async () => (await store.list()).map((o) => o.key).sort();

  beforeAll(async () => {
    t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-restore-serving-'));
    store = createObjectStore({ kind: 'folder', dir: path.join(tmp, 'objects') });
    env = { DATABASE_URL: t.url, OBJECT_DIR: path.join(tmp, 'objects'), BACKUP_KEY: KEY };
    dir = path.join(tmp, 'backup');
    await t.db('countries').insert([
      { countryid: 'c1', countryname: 'Kenya' }, { countryid: 'c2', countryname: 'Ghana' }]);
    await store.put('lesson.mp3', Buffer.from('ID3 lesson'), { contentType: 'audio/mpeg' });
    const b = await runCli(['backup', '--to', dir], env);
    expect([b.code, b.stderr]).toEqual([0, '']);
  }, 120_000);
  afterAll(async () => {
    await t.dispose();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('refuses (exit 3) while a server serves the database, naming it, and changes nothing', async () => {
    await t.db('countries').insert({ countryid: 'c3', countryname: 'Togo' });
    await store.put('later.pdf', Buffer.from('%PDF-1.4 later'), { contentType: 'application/pdf' });
    const logDir = await fsp.mkdtemp(path.join(tmp, 'log-'));
    const child = await startServer(env, logDir);
    try {
      const dry = await runCli(['restore', '--from', dir], env);
      expect(dry.code).toBe(2);
      // One server; on PostgreSQL its pool may hold more than one session (a write of the access record beside a
      // read), each named as the server's.
      expect(dry.stdout).toMatch(pg ? /served now by running central instances \(\d+ sessions?\)/
        : /served now by running central instances \(1 process\)/);
      expect(dry.stdout).toContain('nothing was changed');

      const r = await runCli(['restore', '--from', dir, '--yes'], env);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(pg ? /central: refused: running central instances \(\d+ sessions?\) serve/
        : /central: refused: running central instances \(1 process\) serve/);
      if (pg) {
        const schema = t.target.schema!;
        const session = `session \\d+ 'lms central ${schema}' from 127\\.0\\.0\\.1:\\d+, connected \\d{4}-`;
        expect(r.stderr).toMatch(new RegExp(session));
      } else {
        expect(r.stderr).toContain(`process ${child.pid}, started `);
      }
      expect(r.stderr).toContain("Stop them first (systemctl stop 'lms-central@*'), or run again with --while-serving");
      expect(r.stderr).toContain('--while-serving');
      expect(r.stderr).toContain('nothing was changed');
      expect(await countries()).toEqual(['c1', 'c2', 'c3']);
      expect(await objects()).toEqual(['later.pdf', 'lesson.mp3']);

      // The operator who accepts the consequence: replaced underneath the running server.
      const over = await runCli(['restore', '--from', dir, '--yes', '--while-serving'], env);
      expect(over.stderr).toBe('');
      expect(over.code).toBe(0);
      expect(over.stdout).toContain('central: --while-serving: replacing the database underneath them');
      expect(await countries()).toEqual(['c1', 'c2']);
      expect(await objects()).toEqual(['lesson.mp3']);
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
    // Stopped, the same restore goes through.
    await t.db('countries').insert({ countryid: 'c4', countryname: 'Mali' });
    const r = await runCli(['restore', '--from', dir, '--yes'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(await countries()).toEqual(['c1', 'c2']);
  }, 120_000);

  it('an instance killed (no clean stop) leaves nothing that blocks a restore', async () => {
    const child = await startServer(env, await fsp.mkdtemp(path.join(tmp, 'log-')));
    child.kill('SIGKILL');
    await exited(child);
    await t.db('countries').insert({ countryid: 'c5', countryname: 'Chad' });
    let r = await runCli(['restore', '--from', dir, '--yes'], env);
    // PostgreSQL ends the killed server's session as soon as it reads the closed socket.
    for (let i = 0; pg && r.code === 3 && i < 20; i += 1) {
      await new Promise((res) => setTimeout(res, 250));
      r = await runCli(['restore', '--from', dir, '--yes'], env);
    }
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(await countries()).toEqual(['c1', 'c2']);
  }, 120_000);

  it('a backup whose rows differ from its manifest: the database is not written, the exit code says so', async () => {
    await t.db('countries').insert({ countryid: 'c6', countryname: 'Niger' });
    await store.put('later.pdf', Buffer.from('%PDF-1.4 later'), { contentType: 'application/pdf' });
    // Signed by someone holding the key: only the restore itself can notice.
    const manifestFile = path.join(dir, 'manifest.json');
    const original = await fsp.readFile(manifestFile);
    const originalSignature = await fsp.readFile(path.join(dir, 'manifest.hmac'));
    const m = JSON.parse(original.toString('utf8')) as Manifest;
    m.database.tables.countries += 1;
    const bytes = Buffer.from(`${JSON.stringify(m, null, 1)}\n`);
    await fsp.writeFile(manifestFile, bytes);
    const signature = crypto.createHmac('sha256', KEY).update(bytes).digest('hex');
    await fsp.writeFile(path.join(dir, 'manifest.hmac'), `${signature}\n`);
    try {
      const r = await runCli(['restore', '--from', dir, '--yes'], env);
      if (pg) {
        // Found inside the transaction that dropped the tables and loaded the dump: all of it rolled back.
        expect(r.code).toBe(4);
        expect(r.stderr).toContain('central: restore failed replacing the database');
        expect(r.stderr).toContain('the restored rows differ from the manifest');
        expect(r.stderr).toContain('countries: 2 rows, the manifest says 3');
        expect(r.stderr).toContain("The database was not changed. 1 of the backup's 1 objects were written");
        expect(await objects()).toEqual(['later.pdf', 'lesson.mp3']);
      } else {
        // The SQLite file is what the page copy would write: read before anything is.
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('database.sqlite differs from the manifest, refused');
        expect(r.stderr).toContain('countries: 2 rows, the manifest says 3');
        expect(r.stdout).toBe('');
        expect(await objects()).toEqual(['later.pdf', 'lesson.mp3']);
      }
      expect(await countries()).toEqual(['c1', 'c2', 'c6']);
    } finally {
      await fsp.writeFile(manifestFile, original);
      await fsp.writeFile(path.join(dir, 'manifest.hmac'), originalSignature);
    }
  }, 120_000);
});
