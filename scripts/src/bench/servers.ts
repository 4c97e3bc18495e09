import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, repoRoot, type ColumnKinds, type MigrationList, type TestDatabase } from '@lms/db';

/**
 * How `npm start -w <service>` starts a server (its package.json start script: settings of the C library's
 * allocator, node's flags, then the server file), so that a benchmark measures the server started exactly
 * as it is deployed.
 */
export function serviceStart(service: 'central' | 'classroom' = 'central'): {
  args: string[];
  env: Record<string, string>;
} {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pkg = require(path.join(repoRoot, service, 'package.json')) as { scripts: { start: string } };
  const words = pkg.scripts.start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const [name, ...value] = words.shift()!.split('=');
    env[name] = value.join('=');
  }
  const [command, ...args] = words;
  if (command !== 'node' || !args.length)
    throw new Error(`${service}'s start script is not "[NAME=value ...] node [flags] <file>": ${pkg.scripts.start}`);
  const file = args.pop()!;
  return { args: [...args, path.join(repoRoot, service, file)], env };
}

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

let pinning: boolean | undefined;

/** Whether onCpu pins: the machine has more than one CPU and `taskset` runs. */
export function pinsCpus(): boolean {
  pinning ??= os.cpus().length > 1 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  return pinning;
}

/**
 * `node args` to run on one CPU (0-based) when pinsCpus(); else as is. With the server on one CPU and its
 * load generator on another, neither migrates between CPUs mid-run nor evicts the other's caches, and a
 * run's figures move far less.
 */
export function onCpu(cpu: number, args: string[]): { command: string; args: string[] } {
  return pinsCpus()
    ? { command: 'taskset', args: ['-c', String(cpu), process.execPath, ...args] }
    : { command: process.execPath, args };
}

/**
 * A central API started as `npm start -w central` runs it, on `databaseUrl`, with throw-away secrets; `env` adds
 * settings.
 */
export async function startCentral(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; origin: string }> {
  const secret = () => crypto.randomBytes(32).toString('hex');
  const port = await freePort();
  const start = serviceStart('central');
  const child = spawn(process.execPath, start.args, {
    env: {
      ...start.env,
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '100000000',
      JWT_SECRET: secret(),
      APPLICATION_API_KEY: secret(),
      SERVER_SYNC_KEY: secret(),
      RPI_SECRET: secret(),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  // A minute: on a shared machine under load the first start (migration check, compiled routes) takes a while.
  for (let i = 0; i < 600; i += 1) {
    if (child.exitCode !== null) throw new Error(`central API exited with ${child.exitCode}`);
    if (
      await fetch(`${origin}/`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { child, origin };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('central API did not start');
}

/** Stops a server started here and waits (up to 10 s) until it has exited. */
export async function stopServer(child: ChildProcess): Promise<void> {
  const exited = child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
  child.kill();
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
}

/** A process's current (`VmRSS`) or peak (`VmHWM`) resident memory in MB (Linux); 0 once it is gone. */
export function procMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM' | 'RssAnon'): number {
  if (!pid) return 0;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/**
 * CPU time (user + system, seconds) a process has used so far (Linux, /proc/<pid>/stat; 10 ms ticks); 0 once it is
 * gone.
 */
export function procCpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * Resets the kernel's peak-RSS counter of a process (Linux: writing 5 to clear_refs). False where that is
 * not permitted: the peak then covers the process's whole life, which only overstates a growth.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * A fresh, migrated database of one service for a benchmark: a schema of the PostgreSQL at `pgUrl`, else a SQLite file.
 */
export async function benchDatabase(
  service: { kinds: ColumnKinds; migrations: MigrationList },
  pgUrl?: string,
): Promise<TestDatabase> {
  const saved = process.env.TEST_DATABASE_URL;
  if (pgUrl) process.env.TEST_DATABASE_URL = pgUrl;
  else delete process.env.TEST_DATABASE_URL;
  try {
    return await createTestDatabase({ kinds: service.kinds, migrations: service.migrations });
  } finally {
    if (saved === undefined) delete process.env.TEST_DATABASE_URL;
    else process.env.TEST_DATABASE_URL = saved;
  }
}
