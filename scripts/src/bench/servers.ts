import net from 'node:net';
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
