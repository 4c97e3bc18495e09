import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classroom, createTestDatabase, type TestDatabase } from '@lms/db';
import { closedPort, testDatabase } from './helpers';

const getBody = (port: number, path = '/') =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
const get = async (port: number, path = '/') => (await getBody(port, path)).status;

async function waitUntilUp(port: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await get(port)) === 200) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('server did not start');
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

const services = [
  { name: 'central', server: '../dist/server.js', portVar: 'PORT', db: () => testDatabase() },
  {
    name: 'classroom',
    server: '../../classroom/dist/server.js',
    portVar: 'RPI_PORT',
    db: () => createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations }),
  },
];

describe.each(services)('graceful shutdown of the $name service', (svc) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.dispose();
  });

  it('on SIGTERM stops accepting, finishes the request in flight, then exits 0', async () => {
    const tdb = await svc.db();
    dbs.push(tdb);
    const port = await closedPort();
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-shutdown-'));
    const child = spawn(process.execPath, [path.resolve(__dirname, svc.server)], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        DATABASE_URL: tdb.url,
        [svc.portVar]: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        LOG_DIR: logDir,
      },
      stdio: 'ignore',
    });
    try {
      await waitUntilUp(port, child);
      // A request whose body is still arriving when the signal comes.
      const body = JSON.stringify({
        lmsusername: 'nobody@example.org',
        lmsuserpassword: 'Wrong-Passw0rd',
        studentusername: 'x',
        studentpassword: 'y',
      });
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/auth/login',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      });
      const answer = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
        req.on('error', reject);
      });
      req.write(body.slice(0, 10));
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      // No new connections once stopping.
      await expect(get(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(child.exitCode).toBeNull();
      req.end(body.slice(10));
      // The request in flight still gets its real answer (a refused sign-in), then the process ends cleanly.
      expect(await answer).toBe(400);
      expect(await exited(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  });

  it('with a stop delay, /readyz answers 503 "draining" after SIGTERM while requests are still served; ' +
      'a new start is ready again', async () => {
    const tdb = await svc.db();
    dbs.push(tdb);
    const port = await closedPort();
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-drain-'));
    const start = () =>
      spawn(process.execPath, [path.resolve(__dirname, svc.server)], {
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          DATABASE_URL: tdb.url,
          [svc.portVar]: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          LOG_DIR: logDir,
          SHUTDOWN_DELAY_SECONDS: '2',
        },
        stdio: 'ignore',
      });
    let child = start();
    try {
      await waitUntilUp(port, child);
      expect(await getBody(port, '/readyz')).toEqual({ status: 200, body: JSON.stringify({ status: 'ready' }) });
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      expect(await getBody(port, '/readyz')).toEqual({
        status: 503,
        body: JSON.stringify({ status: 'not ready', failed: ['draining'] }),
      });
      // Alive, and still serving while the load balancer takes it out of rotation.
      expect(await get(port, '/healthz')).toBe(200);
      expect(await get(port)).toBe(200);
      expect(await exited(child)).toBe(0);
      await expect(get(port, '/readyz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      child = start();
      await waitUntilUp(port, child);
      expect(await get(port, '/readyz')).toBe(200);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  });

  it('a second start on a port already in use exits 1 naming the address, ' +
      'and the first one keeps serving', async () => {
    const tdb = await svc.db();
    dbs.push(tdb);
    const port = await closedPort();
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-port-in-use-'));
    const start = () =>
      spawn(process.execPath, [path.resolve(__dirname, svc.server)], {
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          DATABASE_URL: tdb.url,
          [svc.portVar]: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          LOG_DIR: logDir,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    const first = start();
    let second: ChildProcess | undefined;
    try {
      await waitUntilUp(port, first);
      second = start();
      let stderr = '';
      second.stderr!.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      const code = await Promise.race([
        exited(second),
        new Promise<string>((r) => setTimeout(() => r('still running'), 40_000)),
      ]);
      expect(code).toBe(1);
      expect(stderr).toContain(`cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
      expect(await get(port)).toBe(200);
      expect(first.exitCode).toBeNull();
    } finally {
      for (const c of [first, second]) if (c && c.exitCode === null) c.kill('SIGKILL');
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('with Redis unreachable at start, exits 1 within REDIS_START_TIMEOUT_SECONDS, ' +
      'naming Redis and the reason', async () => {
    const tdb = await svc.db();
    dbs.push(tdb);
    const port = await closedPort();
    const redisPort = await closedPort();
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-redis-start-'));
    const child = spawn(process.execPath, [path.resolve(__dirname, svc.server)], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        DATABASE_URL: tdb.url,
        [svc.portVar]: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        LOG_DIR: logDir,
        REDIS_URL: `redis://:pass-w0rd-x@127.0.0.1:${redisPort}`,
        REDIS_START_TIMEOUT_SECONDS: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
    try {
      const code = await Promise.race([
        exited(child),
        new Promise<string>((r) => setTimeout(() => r('still running'), 40_000)),
      ]);
      expect(code).toBe(1);
      expect(stderr).toContain(
        `cannot start: Redis at redis://:***@127.0.0.1:${redisPort} did not answer within 1 s (ECONNREFUSED)`,
      );
      expect(stderr).not.toContain('pass-w0rd-x');
      // It never listened.
      await expect(get(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  });
});
