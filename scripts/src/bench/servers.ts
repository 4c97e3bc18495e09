import { spawnSync } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '@lms/db';

/**
 * The node arguments of `npm start -w central` (its package.json start script: node's flags, then the
 * server file), so that a benchmark measures the server started exactly as it is deployed.
 */
export function centralNodeArgs(): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pkg = require(path.join(repoRoot, 'central/package.json')) as { scripts: { start: string } };
  const [command, ...args] = pkg.scripts.start.trim().split(/\s+/);
  if (command !== 'node' || !args.length) throw new Error(`central's start script is not "node [flags] <file>": ${pkg.scripts.start}`);
  const file = args.pop()!;
  return [...args, path.join(repoRoot, 'central', file)];
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
  return pinsCpus() ? { command: 'taskset', args: ['-c', String(cpu), process.execPath, ...args] } : { command: process.execPath, args };
}
