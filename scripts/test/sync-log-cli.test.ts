import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@lms/db';

// The command line a teacher types: usage errors exit 2, failures exit 1 with a message, never a stack.
const cli = path.join(repoRoot, 'scripts/dist/sync-log/index.js');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
    input: '',
  });

describe('npm run sync-log', () => {
  it('explains itself with --help and refuses missing arguments with exit code 2', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--classroom URL[\s\S]*SYNC_LOG_PASSWORD/);
    const missing = run(['--central', 'http://127.0.0.1:9']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--central, --user and --classroom \(or --zip\) are required/);
    const unknown = run(['--nonsense']);
    expect(unknown.status).toBe(2);
  });

  it('exits 1 with a plain message when there is no password, no file, or no server', () => {
    const noPassword = run([
      '--central',
      'http://127.0.0.1:9',
      '--classroom',
      'http://127.0.0.1:9',
      '--user',
      'demo.teacher',
    ]);
    expect(noPassword.status).toBe(1);
    expect(noPassword.stderr).toMatch(/no password: set SYNC_LOG_PASSWORD/);
    const noFile = run(['--central', 'http://127.0.0.1:9', '--user', 'demo.teacher', '--zip', 'does-not-exist.zip'], {
      SYNC_LOG_PASSWORD: 'x',
    });
    expect(noFile.status).toBe(1);
    expect(noFile.stderr).toMatch(/no such file: does-not-exist\.zip/);
    const noServer = run(
      ['--central', 'http://127.0.0.1:9', '--classroom', 'http://127.0.0.1:9', '--user', 'demo.teacher'],
      { SYNC_LOG_PASSWORD: 'x' },
    );
    expect(noServer.status).toBe(1);
    expect(noServer.stderr).toMatch(/cannot reach the classroom server at http:\/\/127\.0\.0\.1:9/);
    expect(noServer.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('npm run sync-log against a central that is down for a while', () => {
  /** A stand-in for central: a sign-in, then PUT /log/import answered by `answer` (one call per upload). */
  async function fakeCentral(
    answer: (n: number) => { status: number; headers?: Record<string, string>; body: object },
  ) {
    let uploads = 0;
    const server = http.createServer((req, res) => {
      if (req.url === '/auth/school/login') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ error: false, data: { accessToken: 't' } }));
        return;
      }
      req.resume();
      req.on('end', () => {
        uploads += 1;
        const a = answer(uploads);
        res.writeHead(a.status, { 'Content-Type': 'application/json', ...(a.headers ?? {}) });
        res.end(JSON.stringify(a.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, uploads: () => uploads, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }
  const outage = {
    status: 400,
    headers: { 'Retry-After': '1' },
    body: {
      error: true,
      errormessage: 'Invalid File (the database is unavailable, please try again later)',
      data: false,
    },
  };
  const ok = {
    status: 200,
    headers: {
      'X-Log-Import': JSON.stringify({ syncid: 's', archive: 'logupload-1.zip', imported: { studentprogress: 3 } }),
    },
    body: { error: false, data: true },
  };

  async function runAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { PATH: process.env.PATH ?? '', SYNC_LOG_PASSWORD: 'x' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { status, stdout, stderr };
  }

  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-sync-retry-'));
    fs.writeFileSync(path.join(tmp, 'studentlog.zip'), 'PK not really');
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('waits as Retry-After asks, sends the upload again, says so, and succeeds once central is back', async () => {
    const central = await fakeCentral((n) => (n <= 2 ? outage : ok));
    try {
      const zip = path.join(tmp, 'a.zip');
      fs.copyFileSync(path.join(tmp, 'studentlog.zip'), zip);
      const r = await runAsync(['--central', central.url, '--user', 'demo.teacher', '--zip', zip]);
      expect(r.status).toBe(0);
      expect(central.uploads()).toBe(3);
      expect(r.stdout).toContain(
        'the central API cannot take the log now: Invalid File (the database is unavailable, please try again later) ' +
          '(HTTP 400); trying again in 1 s (try 2 of 6)',
      );
      expect(r.stdout).toMatch(/try 3 of 6/);
      expect(fs.existsSync(zip)).toBe(false);
    } finally {
      await central.close();
    }
  });

  it('stops at once on a refusal of the file, and gives up after --retries on an outage that lasts', async () => {
    const refusing = await fakeCentral(() => ({
      status: 400,
      body: { error: true, errormessage: 'There is invalid file inside zip-file', data: false },
    }));
    try {
      const r = await runAsync([
        '--central',
        refusing.url,
        '--user',
        'demo.teacher',
        '--zip',
        path.join(tmp, 'studentlog.zip'),
      ]);
      expect(r.status).toBe(1);
      expect(refusing.uploads()).toBe(1);
      expect(r.stderr).toMatch(/the central API refused the log: There is invalid file inside zip-file \(HTTP 400\)/);
      expect(r.stdout).not.toMatch(/trying again/);
    } finally {
      await refusing.close();
    }
    const down = await fakeCentral(() => outage);
    try {
      const r = await runAsync([
        '--central',
        down.url,
        '--user',
        'demo.teacher',
        '--zip',
        path.join(tmp, 'studentlog.zip'),
        '--retries',
        '2',
      ]);
      expect(r.status).toBe(1);
      expect(down.uploads()).toBe(3);
      expect(r.stderr).toMatch(/gave up after 3 tries/);
      expect(r.stderr).toMatch(/the log is kept in .*studentlog\.zip/);
      expect(fs.existsSync(path.join(tmp, 'studentlog.zip'))).toBe(true);
    } finally {
      await down.close();
    }
  });
});
