/**
 * The previous release for `make deploy-test`'s upgrade: the newest `v…` tag, or, in a clone without tags,
 * the commit CHANGELOG.md names for the newest release; checked out from git into a folder of its own and
 * built there, as an operator's host runs it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface Release {
  name: string;
  commit: string;
  root: string;
}

function sh(argv: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', (err) => resolve({ code: -1, out: err.message }));
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function must(argv: string[], cwd: string): Promise<string> {
  const r = await sh(argv, cwd);
  if (r.code !== 0) throw new Error(`${argv.slice(0, 3).join(' ')} exited ${r.code}: ${r.out.trim().slice(-400)}`);
  return r.out.trim();
}

/** The newest release: a `v…` tag when the clone has one, else CHANGELOG.md's newest "## v… " with its commit. */
export async function newestRelease(repo: string): Promise<{ name: string; commit: string } | string> {
  const tags = await sh(['git', 'tag', '--list', 'v*', '--sort=-v:refname'], repo);
  const tag =
    tags.code === 0
      ? tags.out
          .split('\n')
          .find((t) => /^v\d/.test(t.trim()))
          ?.trim()
      : undefined;
  if (tag) return { name: tag, commit: await must(['git', 'rev-list', '-n', '1', tag], repo) };
  const log = fs.readFileSync(path.join(repo, 'CHANGELOG.md'), 'utf8');
  const m = /^## (v\d[^\s]*)[^\n]*\n+Commit `([0-9a-f]{40})`/m.exec(log);
  if (!m) return 'CHANGELOG.md names no release commit';
  const has = await sh(['git', 'cat-file', '-e', `${m[2]}^{commit}`], repo);
  if (has.code !== 0) return `${m[1]} (${m[2].slice(0, 7)}) is not in this clone's history`;
  return { name: m[1], commit: m[2] };
}

/** Runtime packages (name → version) of a lock file, development-only ones left out. */
function runtimePackages(lockFile: string): Map<string, string> {
  const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as {
    packages?: Record<string, { version?: string; dev?: boolean; link?: boolean }>;
  };
  const out = new Map<string, string>();
  for (const [key, p] of Object.entries(lock.packages ?? {})) {
    if (key.startsWith('node_modules/') && !p.dev && !p.link) out.set(key, p.version ?? '');
  }
  return out;
}

/**
 * Checks the release out into `dest` and builds it. Its dependencies: when every runtime package of its lock
 * file is in this tree's at the same version, this tree's node_modules is copied as hard links (the packages
 * are the same files; the workspace links are relative, so they point at the release's own code), else
 * `npm ci` installs them.
 */
export async function buildRelease(
  repo: string,
  release: { name: string; commit: string },
  dest: string,
): Promise<Release & { how: string }> {
  await must(['git', 'worktree', 'add', '--detach', '--force', dest, release.commit], repo);
  const mine = runtimePackages(path.join(repo, 'package-lock.json'));
  const theirs = runtimePackages(path.join(dest, 'package-lock.json'));
  const differ = [...theirs].filter(([k, v]) => mine.get(k) !== v).map(([k]) => k.replace(/^.*node_modules\//, ''));
  let how: string;
  if (differ.length === 0) {
    await must(['cp', '-al', path.join(repo, 'node_modules'), path.join(dest, 'node_modules')], repo);
    how = 'dependencies as in this tree';
  } else {
    await must(['npm', 'ci', '--no-audit', '--no-fund'], dest);
    how = `npm ci (${differ.length} package(s) differ, e.g. ${differ.slice(0, 3).join(', ')})`;
  }
  await must(['npx', 'tsc', '-b'], dest);
  return { ...release, root: dest, how };
}

export async function removeRelease(repo: string, dest: string): Promise<void> {
  await sh(['git', 'worktree', 'remove', '--force', dest], repo);
  fs.rmSync(dest, { recursive: true, force: true });
  await sh(['git', 'worktree', 'prune'], repo);
}
