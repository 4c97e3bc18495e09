import fs from 'node:fs';
import type { Knex } from 'knex';

/**
 * Which running instances serve a database, so that `restore` does not replace it underneath them.
 *
 * PostgreSQL: every session of a serving instance carries the application_name `lms <service>` (with the
 * schema when DATABASE_URL's `options` set a search_path), and keeps one connection open while idle; restore
 * looks for other sessions of that name on its database in pg_stat_activity.
 *
 * SQLite: a serving instance holds a shared lock on `<database>.serving` (an empty SQLite file) for as long as
 * it runs; restore takes the exclusive lock on it, which fails while any instance holds its shared one, and
 * keeps it until it has finished, so that an instance starting meanwhile refuses to start. The operating
 * system releases a process's locks when it ends however it ends (a crash, SIGKILL, a power cut), so no stale
 * file ever blocks a restore and no process id can be mistaken for another's.
 */

/** PostgreSQL's limit on application_name (NAMEDATALEN - 1 bytes). */
const NAME_MAX = 63;

/** The search_path that DATABASE_URL's `options` set (`-c search_path=t_1`), if any. */
function searchPathOf(connection: string): string | undefined {
  const options = new URL(connection).searchParams.get('options') ?? '';
  return /(?:^|\s)(?:-c\s*|--)search_path=(\S+)/.exec(options)?.[1];
}

/** The application_name of a serving instance of `service` on the database `connection` names. */
export function servingName(service: string, connection: string): string {
  const schema = searchPathOf(connection);
  return `lms ${service}${schema ? ` ${schema}` : ''}`.slice(0, NAME_MAX);
}

/** The application_name of the service's command line (migrate, backup, restore): not a serving instance. */
export const commandName = (service: string): string => `lms ${service} cli`;

const sqliteFile = (db: Knex): string | undefined => {
  if (db.client.config.client === 'pg') return undefined;
  const file = (db.client.config.connection as { filename: string }).filename;
  return file === ':memory:' ? undefined : file;
};

export const servingLockFile = (databaseFile: string): string => `${databaseFile}.serving`;

interface LockDb {
  prepare(sql: string): { run(): unknown; get(): unknown };
  pragma(s: string): unknown;
  close(): unknown;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const openSqlite = (file: string): LockDb => new (require('better-sqlite3') as typeof import('better-sqlite3'))(file);

const isBusy = (err: unknown) => /^SQLITE_(BUSY|LOCKED)/.test((err as { code?: string }).code ?? '');

export class ServingLockError extends Error {}

/**
 * Marks this process as serving the database until `release()` (or until it ends). On PostgreSQL the
 * application_name does it and this does nothing. Throws ServingLockError while a restore holds the database.
 */
export function holdServingLock(db: Knex, service: string): { release(): void } {
  const file = sqliteFile(db);
  if (!file) return { release() { /* PostgreSQL: the sessions' application_name */ } };
  const lock = openSqlite(servingLockFile(file));
  try {
    lock.pragma('busy_timeout = 0');
    // A read transaction holds SQLite's shared lock on the file until it ends, which is never before exit.
    lock.prepare('BEGIN').run();
    lock.prepare('select count(*) from sqlite_master').get();
  } catch (err) {
    lock.close();
    if (isBusy(err)) {
      throw new ServingLockError(`${service}: a restore of ${file} is running (it holds ${servingLockFile(file)}); `
        + 'start again when it has finished');
    }
    throw err;
  }
  return { release: () => { lock.close(); } };
}

/** What restore found: the instances serving the database, or none and (SQLite) the lock it now holds. */
export interface ServingCheck {
  /** One line per serving session or process; empty when none serves the database. */
  instances: string[];
  /** Keeps instances from starting until called (SQLite); call it when the restore has finished. */
  release(): void;
}

/** The processes (Linux: /proc/locks) that hold a lock on `file`; empty where the system does not say. */
function lockHolders(file: string): number[] {
  try {
    const inode = fs.statSync(file).ino;
    const pids = new Set<number>();
    for (const line of fs.readFileSync('/proc/locks', 'utf8').split('\n')) {
      // 1: POSIX  ADVISORY  READ 12275 fe:00:2148346 1073741826 1073742335
      const m = /^\d+:\s+\S+\s+\S+\s+\S+\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
      if (m && Number(m[2]) === inode && Number(m[1]) !== process.pid) pids.add(Number(m[1]));
    }
    return [...pids].sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/** When process `pid` started (Linux), for the message; undefined where the system does not say. */
function processStart(pid: number): string | undefined {
  try {
    return fs.statSync(`/proc/${pid}`).mtime.toISOString();
  } catch {
    return undefined;
  }
}

/**
 * The running instances of `service` that serve the database `db` reaches, other than this process. On
 * SQLite, when there are none, the lock that keeps them from starting is held until `release()`.
 */
export async function findServing(db: Knex, service: string, connection: string): Promise<ServingCheck> {
  const file = sqliteFile(db);
  if (db.client.config.client === 'pg') {
    const rows = (await db.raw(
      `select pid, application_name, client_addr::text as client_addr, client_port, backend_start, state
         from pg_stat_activity
        where datname = current_database() and application_name = ? and pid <> pg_backend_pid()
        order by client_addr, backend_start`,
      [servingName(service, connection)],
    )).rows as Array<{ pid: number; application_name: string; client_addr: string | null; client_port: number | null;
      backend_start: Date; state: string | null }>;
    const instances = rows.map((r) => {
      const from = r.client_addr ? `${r.client_addr.replace(/\/\d+$/, '')}:${r.client_port}` : 'a local socket';
      const since = new Date(r.backend_start).toISOString();
      const state = r.state ? `, ${r.state}` : '';
      return `session ${r.pid} '${r.application_name}' from ${from}, connected ${since}${state}`;
    });
    return { instances, release() { /* nothing held */ } };
  }
  if (!file) return { instances: [], release() { /* an in-memory database: only this process sees it */ } };
  const lockFile = servingLockFile(file);
  const lock = openSqlite(lockFile);
  try {
    lock.pragma('busy_timeout = 0');
    lock.prepare('BEGIN EXCLUSIVE').run();
  } catch (err) {
    lock.close();
    if (!isBusy(err)) throw err;
    const pids = lockHolders(lockFile);
    const instances = pids.length
      ? pids.map((pid) => {
        const started = processStart(pid);
        return `process ${pid}${started ? `, started ${started}` : ''}, holds ${lockFile}`;
      })
      : [`a process holds ${lockFile}`];
    return { instances, release() { /* not held */ } };
  }
  return {
    instances: [],
    release: () => {
      lock.prepare('ROLLBACK').run();
      lock.close();
    },
  };
}
