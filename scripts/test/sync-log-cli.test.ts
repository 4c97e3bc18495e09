import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@lms/db';

// The command line a teacher types: usage errors exit 2, failures exit 1 with a message, never a stack.
const cli = path.join(repoRoot, 'scripts/dist/sync-log/index.js');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env }, input: '' });

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
    const noPassword = run(['--central', 'http://127.0.0.1:9', '--classroom', 'http://127.0.0.1:9', '--user', 'demo.teacher']);
    expect(noPassword.status).toBe(1);
    expect(noPassword.stderr).toMatch(/no password: set SYNC_LOG_PASSWORD/);
    const noFile = run(['--central', 'http://127.0.0.1:9', '--user', 'demo.teacher', '--zip', 'does-not-exist.zip'], { SYNC_LOG_PASSWORD: 'x' });
    expect(noFile.status).toBe(1);
    expect(noFile.stderr).toMatch(/no such file: does-not-exist\.zip/);
    const noServer = run(['--central', 'http://127.0.0.1:9', '--classroom', 'http://127.0.0.1:9', '--user', 'demo.teacher'], { SYNC_LOG_PASSWORD: 'x' });
    expect(noServer.status).toBe(1);
    expect(noServer.stderr).toMatch(/cannot reach the classroom server at http:\/\/127\.0\.0\.1:9/);
    expect(noServer.stderr).not.toMatch(/\n\s+at /);
  });
});
