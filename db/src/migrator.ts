import type { Knex } from 'knex';
import { analyzeSmallTables } from './statistics';

/** What a migration is handed besides the connection (or its transaction). */
export interface MigrationContext {
  dialect: 'sqlite' | 'pg';
  /**
   * How long a statement of a migration run in a transaction may wait for a table lock on PostgreSQL before
   * the migration gives up (its lock request would otherwise queue every reader of the table behind it).
   */
  lockTimeoutMs: number;
}

export interface Migration {
  up(knex: Knex, ctx: MigrationContext): Promise<void>;
  down(knex: Knex, ctx: MigrationContext): Promise<void>;
  /**
   * `transaction: false` runs the migration outside a transaction (PostgreSQL builds an index CONCURRENTLY
   * only there). Such a migration must be safe to run again after it stopped halfway.
   */
  config?: { transaction?: boolean };
}

/** Migrations are listed in code (not discovered on disk) so the same list runs from TypeScript and from dist. */
export type MigrationList = ReadonlyArray<readonly [name: string, migration: Migration]>;

/** The bookkeeping tables keep Knex's names and shape, so databases migrated by earlier releases carry on. */
export const MIGRATIONS_TABLE = 'knex_migrations';
const LOCK_TABLE = 'knex_migrations_lock';

export const DEFAULT_LOCK_TIMEOUT_MS = 5000;

export interface MigrateOptions {
  lockTimeoutMs?: number;
  /** Told once when another run holds the migration lock and this one waits for it. */
  onWait?: (message: string) => void;
  /** How long to wait for another run's lock before giving up (default: 10 minutes). */
  maxWaitMs?: number;
}

export interface MigrateResult {
  /** Migrations this run applied. */
  applied: string[];
  /** Another run held the lock and this one waited for it. */
  waited: boolean;
  /** Migrations that were pending when this run started and that another run applied while this one waited. */
  appliedByOther: string[];
  /** Small tables analysed after the migrations (PostgreSQL; see analyzeSmallTables). */
  analysed: string[];
}

export class MigrationError extends Error {}

function dialectOf(knex: Knex): 'sqlite' | 'pg' {
  return knex.client.config.client === 'pg' ? 'pg' : 'sqlite';
}

async function appliedNames(knex: Knex): Promise<string[]> {
  if (!(await knex.schema.hasTable(MIGRATIONS_TABLE))) return [];
  const rows: Array<{ name: string }> = await knex(MIGRATIONS_TABLE).select('name').orderBy('id');
  return rows.map((r) => r.name);
}

/** Names of migrations not yet applied; read-only (does not create the bookkeeping tables). */
export async function pendingMigrations(knex: Knex, list: MigrationList): Promise<string[]> {
  const done = new Set(await appliedNames(knex));
  return list.map(([n]) => n).filter((n) => !done.has(n));
}

async function ensureTables(knex: Knex): Promise<void> {
  try {
    if (!(await knex.schema.hasTable(MIGRATIONS_TABLE))) {
      await knex.schema.createTable(MIGRATIONS_TABLE, (t) => {
        t.increments('id').primary();
        t.string('name');
        t.integer('batch');
        t.timestamp('migration_time');
      });
    }
    if (!(await knex.schema.hasTable(LOCK_TABLE))) {
      await knex.schema.createTable(LOCK_TABLE, (t) => {
        t.increments('index').primary();
        t.integer('is_locked');
      });
    }
  } catch (err) {
    // Another run created them between our check and our create.
    if (!(await knex.schema.hasTable(MIGRATIONS_TABLE)) || !(await knex.schema.hasTable(LOCK_TABLE))) throw err;
  }
  if (!(await knex(LOCK_TABLE).first())) await knex(LOCK_TABLE).insert({ is_locked: 0 });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PgConnection {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** Runs `fn` on one connection of the pool (session settings and advisory locks belong to a connection). */
export async function onOneConnection<T>(knex: Knex, fn: (conn: PgConnection) => Promise<T>): Promise<T> {
  const conn = (await knex.client.acquireConnection()) as PgConnection;
  try {
    return await fn(conn);
  } finally {
    await knex.client.releaseConnection(conn);
  }
}

/**
 * One migrate or rollback at a time per database (per schema on PostgreSQL). PostgreSQL: a session advisory
 * lock on a connection held for the run, released by the server if the process dies. SQLite: the lock row
 * Knex's migrator used, taken with one conditional UPDATE.
 */
async function withMigrationLock<T>(knex: Knex, o: MigrateOptions, fn: (waited: boolean) => Promise<T>): Promise<T> {
  const maxWait = o.maxWaitMs ?? 10 * 60_000;
  const started = Date.now();
  let waited = false;
  const waiting = (holder: string) => {
    if (!waited) o.onWait?.(`another migrate or rollback run holds the lock (${holder}); waiting for it to finish`);
    waited = true;
    if (Date.now() - started > maxWait) {
      throw new MigrationError(
        `gave up after waiting ${Math.round(maxWait / 1000)} s for another migrate or rollback run (${holder})`,
      );
    }
  };
  if (dialectOf(knex) === 'pg') {
    // A connection of its own, outside the pool, so that holding the lock takes none of the pool's
    // connections away from the migrations (a pool of one would otherwise wait for itself).
    const client = knex.client as unknown as {
      acquireRawConnection(): Promise<PgConnection>;
      destroyRawConnection(c: PgConnection): Promise<void>;
    };
    const own = await client.acquireRawConnection();
    const onOwn = async <T>(fn: (conn: PgConnection) => Promise<T>): Promise<T> => {
      try {
        return await fn(own);
      } finally {
        await client.destroyRawConnection(own);
      }
    };
    return onOwn(async (conn) => {
      const key = "hashtext(current_schema() || ':lms-migrations')";
      for (;;) {
        const { rows } = await conn.query(`select pg_try_advisory_lock(${key}) as ok`);
        if (rows[0]?.ok) break;
        waiting('a PostgreSQL advisory lock');
        await sleep(200);
      }
      try {
        await ensureTables(knex);
        return await fn(waited);
      } finally {
        await conn.query(`select pg_advisory_unlock(${key})`);
      }
    });
  }
  await ensureTables(knex);
  for (;;) {
    let taken = 0;
    try {
      taken = await knex(LOCK_TABLE).where({ is_locked: 0 }).update({ is_locked: 1 });
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    }
    if (taken) break;
    waiting(`is_locked = 1 in ${LOCK_TABLE}; if no run is going, one that crashed left it: set it to 0`);
    await sleep(200);
  }
  try {
    return await fn(waited);
  } finally {
    await knex(LOCK_TABLE).update({ is_locked: 0 });
  }
}

function explain(name: string, err: unknown, ctx: MigrationContext, transactional: boolean): Error {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  const undone = transactional ? `nothing of ${name} was applied` : `${name} stopped halfway and is safe to run again`;
  if (code === '55P03') {
    return new MigrationError(
      `${name}: a table lock was not granted within ${ctx.lockTimeoutMs / 1000} s ` +
      '(a long query or transaction holds it); ' +
      `${undone}. Run migrate again when the database is quieter, or give more time with --lock-timeout SECONDS`,
      { cause: err },
    );
  }
  return new MigrationError(`${name}: ${message} (${undone})`, { cause: err });
}

async function runOne(
  knex: Knex,
  name: string,
  m: Migration,
  direction: 'up' | 'down',
  ctx: MigrationContext,
  batch: number,
): Promise<void> {
  const record = async (k: Knex) => {
    if (direction === 'up') await k(MIGRATIONS_TABLE).insert({ name, batch, migration_time: new Date() });
    else await k(MIGRATIONS_TABLE).where({ name }).del();
  };
  const transactional = m.config?.transaction !== false;
  try {
    if (!transactional) {
      await m[direction](knex, ctx);
      await record(knex);
      return;
    }
    await knex.transaction(async (trx) => {
      // Every DDL statement of the migration waits at most this long for its lock, instead of queueing
      // every reader of the table behind it.
      if (ctx.dialect === 'pg') await trx.raw(`SET LOCAL lock_timeout = ${Math.round(ctx.lockTimeoutMs)}`);
      await m[direction](trx, ctx);
      await record(trx);
    });
  } catch (err) {
    throw explain(name, err, ctx, transactional);
  }
}

function contextOf(knex: Knex, o: MigrateOptions): MigrationContext {
  return { dialect: dialectOf(knex), lockTimeoutMs: o.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS };
}

/** Applies every pending migration, each in its own transaction unless it asks for none, under the migration lock. */
export async function migrate(knex: Knex, list: MigrationList, o: MigrateOptions = {}): Promise<MigrateResult> {
  const pendingAtStart = await pendingMigrations(knex, list);
  const ctx = contextOf(knex, o);
  return withMigrationLock(knex, o, async (waited) => {
    const done = new Set(await appliedNames(knex));
    const pending = list.filter(([n]) => !done.has(n));
    const appliedByOther = pendingAtStart.filter((n) => done.has(n));
    const last = (await knex(MIGRATIONS_TABLE).max({ b: 'batch' }).first()) as { b: number | null } | undefined;
    const batch = Number(last?.b ?? 0) + 1;
    const applied: string[] = [];
    for (const [name, m] of pending) {
      await runOne(knex, name, m, 'up', ctx, batch);
      applied.push(name);
    }
    // New tables, and tables a migration filled, get their statistics now rather than never (a small one) or
    // when autovacuum next comes by.
    const analysed = await analyzeSmallTables(knex);
    return { applied, waited, appliedByOther, analysed };
  });
}

/** Applies every pending migration; returns the names applied. */
export async function migrateLatest(knex: Knex, list: MigrationList, o: MigrateOptions = {}): Promise<string[]> {
  return (await migrate(knex, list, o)).applied;
}

/** Undoes the last `steps` applied migrations (all of them with Infinity), newest first; returns the names undone. */
export async function rollback(
  knex: Knex,
  list: MigrationList,
  steps: number,
  o: MigrateOptions = {},
): Promise<string[]> {
  const ctx = contextOf(knex, o);
  return withMigrationLock(knex, o, async () => {
    const byName = new Map(list);
    const done = (await appliedNames(knex)).reverse();
    const undone: string[] = [];
    for (const name of done.slice(0, steps)) {
      const m = byName.get(name);
      if (!m)
        throw new MigrationError(
          `${name} is applied but this release does not know it; roll back with the release that added it`,
        );
      await runOne(knex, name, m, 'down', ctx, 0);
      undone.push(name);
    }
    return undone;
  });
}

export async function rollbackAll(knex: Knex, list: MigrationList, o: MigrateOptions = {}): Promise<string[]> {
  return rollback(knex, list, Infinity, o);
}

/** Names applied, newest first. */
export async function appliedMigrations(knex: Knex): Promise<string[]> {
  return (await appliedNames(knex)).reverse();
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new MigrationError(`not a plain identifier: ${name}`);
  return `"${name}"`;
}

/** Below this many rows a table is indexed in place: the build takes milliseconds. */
export const ONLINE_INDEX_MIN_ROWS = 10_000;

/**
 * Builds an index without blocking writes to the table: on PostgreSQL `CREATE INDEX CONCURRENTLY` (the
 * migration must declare `config = { transaction: false }`); an invalid index left by an earlier attempt
 * that stopped is dropped first. Safe to run again. The concurrent build waits for every transaction older
 * than itself to end, with no lock time limit: its lock (SHARE UPDATE EXCLUSIVE) stands in the way of no
 * read and no write, so waiting stalls nobody, whereas giving up would fail the upgrade whenever a long
 * report or import ran. A table of fewer than ONLINE_INDEX_MIN_ROWS rows is indexed in place instead,
 * under the lock time limit: writes wait the few milliseconds the build takes, not for older transactions.
 */
export async function createIndexOnline(
  knex: Knex,
  ctx: MigrationContext,
  table: string,
  columns: string[],
  name: string,
): Promise<void> {
  const cols = columns.map(quoteIdent).join(', ');
  if (ctx.dialect !== 'pg') {
    await knex.raw(`CREATE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${quoteIdent(table)} (${cols})`);
    return;
  }
  await onOneConnection(knex, async (conn) => {
    const { rows } = await conn.query(
      `select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
       join pg_namespace n on n.oid = c.relnamespace where c.relname = $1 and n.nspname = current_schema()`,
      [name],
    );
    if (rows.length && !rows[0].valid) await conn.query(`DROP INDEX CONCURRENTLY IF EXISTS ${quoteIdent(name)}`);
    const counted = await conn.query(
      `select count(*)::int as n from (select 1 from ${quoteIdent(table)} limit ${ONLINE_INDEX_MIN_ROWS}) s`,
    );
    if (Number(counted.rows[0].n) >= ONLINE_INDEX_MIN_ROWS) {
      await conn.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quoteIdent(name)} ON ${quoteIdent(table)} (${cols})`);
      return;
    }
    await conn.query(`SET lock_timeout = ${Math.round(ctx.lockTimeoutMs)}`);
    try {
      await conn.query(`CREATE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${quoteIdent(table)} (${cols})`);
    } finally {
      await conn.query('RESET lock_timeout');
    }
  });
}

/** Drops an index without blocking the table's readers and writers (`DROP INDEX CONCURRENTLY` on PostgreSQL). */
export async function dropIndexOnline(knex: Knex, ctx: MigrationContext, name: string): Promise<void> {
  if (ctx.dialect !== 'pg') {
    await knex.raw(`DROP INDEX IF EXISTS ${quoteIdent(name)}`);
    return;
  }
  await onOneConnection(knex, (conn) => conn.query(`DROP INDEX CONCURRENTLY IF EXISTS ${quoteIdent(name)}`));
}
