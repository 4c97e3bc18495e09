import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Temporary files of uploads (log imports, objects on their way to S3) are named after the process that
 * owns them: `lms-<kind>-<pid>.<start time>-…` in the temporary folder. A process that dies (kill -9, a
 * power cut) leaves its files behind; `sweepSpool` removes those whose owner is no longer running, and
 * never those of a live process, so several instances may share one temporary folder. The start time
 * (Linux: /proc/<pid>/stat) tells a restarted process that reuses a pid, such as pid 1 in a container,
 * from the one that died.
 */
export const SPOOL_KINDS = ['logimport', 'object'] as const;
export type SpoolKind = (typeof SPOOL_KINDS)[number];

function startTimeOf(pid: number | 'self'): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (start time in clock ticks), counted after the command name, which may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

const OWNER = `${process.pid}.${startTimeOf('self') ?? '0'}`;

/** This process's tag, `<pid>.<start time>`, for temporary names kept elsewhere (the folder store's `.tmp`). */
export const SPOOL_OWNER = OWNER;

/** Whether a name that begins with an owner tag (`<pid>.<start time>-…`) belongs to a process that is gone. */
export function ownerGone(name: string): boolean {
  const m = /^(\d+)\.(\d+)-/.exec(name);
  return !!m && !ownerAlive(Number(m[1]), m[2]);
}

/** The prefix of this process's temporary names of one kind. */
export function spoolPrefix(kind: SpoolKind): string {
  return path.join(os.tmpdir(), `lms-${kind}-${OWNER}-`);
}

const NAME = /^lms-(logimport|object)-(\d+)\.(\d+)-/;

function ownerAlive(pid: number, start: string): boolean {
  if (pid === process.pid) return start === OWNER.split('.')[1];
  const now = startTimeOf(pid);
  if (now !== null) return now === start;
  if (fs.existsSync('/proc/self/stat')) return false; // Linux: no /proc entry, no process
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the temporary files and folders of processes that are gone; returns their names. */
export async function sweepSpool(dir = os.tmpdir()): Promise<string[]> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m || ownerAlive(Number(m[2]), m[3])) continue;
    await fsp.rm(path.join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
