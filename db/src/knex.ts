import path from 'node:path';
import fs from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import type { ColumnKinds } from './tables';

// COUNT(*) and SUM() come back from PostgreSQL as int8/numeric strings; every count here fits a double.
// The driver is loaded only for PostgreSQL (a few MB that an SQLite classroom box need not carry).
let pgParsersSet = false;
function setPgTypeParsers(): void {
  if (pgParsersSet) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as typeof import('pg');
  pg.types.setTypeParser(20, (v: string) => Number.parseInt(v, 10));
  pg.types.setTypeParser(1700, (v: string) => Number.parseFloat(v));
  pgParsersSet = true;
}

/** The repository root: relative paths in DATABASE_URL and OBJECT_DIR resolve against it. */
export const repoRoot = path.resolve(__dirname, '..', '..');

export type Dialect = 'sqlite' | 'pg';

export interface DatabaseTarget {
  dialect: Dialect;
  /** SQLite file path (absolute) or ':memory:'; PostgreSQL connection string. */
  connection: string;
  /** PostgreSQL schema to work in (tests use one fresh schema per file). */
  schema?: string;
}

export function parseDatabaseUrl(url: string, root = repoRoot): DatabaseTarget {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { dialect: 'pg', connection: url };
  }
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === '' ) throw new Error('DATABASE_URL sqlite: needs a file name, e.g. sqlite:data/central.sqlite');
    if (file === ':memory:') return { dialect: 'sqlite', connection: ':memory:' };
    return { dialect: 'sqlite', connection: path.resolve(root, file) };
  }
  throw new Error('DATABASE_URL must start with postgres://, postgresql:// or sqlite:');
}

// Knex hands Date bindings to better-sqlite3 as epoch milliseconds; we store ISO-8601 text so that
// timestamps compare and sort the same way whether they were written as Date or as string.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const BetterSqliteClient = require('knex/lib/dialects/better-sqlite3') as new (config: Knex.Config) => Knex.Client;
interface RawSqlite {
  prepare(sql: string): unknown;
  pragma(source: string, options?: { simple: boolean }): unknown;
  close(): unknown;
}

/** Data statements prepared once per connection and reused: preparing costs more than running a small query. */
const CACHEABLE = /^\s*(?:select|insert|update|delete|with|replace)\b/i;
const STATEMENT_CACHE_SIZE = 200;

function cachePreparedStatements(conn: RawSqlite): void {
  const prepare = conn.prepare.bind(conn);
  const cache = new Map<string, unknown>();
  conn.prepare = (sql: string) => {
    if (!CACHEABLE.test(sql)) return prepare(sql);
    let stmt = cache.get(sql);
    if (stmt !== undefined) {
      // Most recently used last, so that the oldest is the first key when the cache is full.
      cache.delete(sql);
    } else {
      stmt = prepare(sql);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    }
    cache.set(sql, stmt);
    return stmt;
  };
}

class SqliteClient extends BetterSqliteClient {
  /** The reading connection: not opened yet (undefined), or none to be had (null). */
  private reader: RawSqlite | null | undefined;

  override async acquireRawConnection(): Promise<RawSqlite> {
    const conn = (await super.acquireRawConnection()) as RawSqlite;
    cachePreparedStatements(conn);
    return conn;
  }

  /**
   * A second connection, for reads outside a transaction (see readRows). In WAL mode it reads the last
   * committed state while the pool's one connection writes, so such a read neither waits for a long
   * transaction (a log import) nor for the pool. None for an in-memory database (which only its own
   * connection sees), for a database not in WAL mode, and once the client is destroyed.
   */
  readConnection(): RawSqlite | undefined {
    if (this.reader === undefined) {
      const { filename } = (this as unknown as { connectionSettings: { filename: string } }).connectionSettings;
      this.reader = null;
      if (filename !== ':memory:' && fs.existsSync(filename)) {
        const Driver = (this as unknown as { driver: new (file: string, options: object) => RawSqlite }).driver;
        const conn = new Driver(filename, { fileMustExist: true });
        if (conn.pragma('journal_mode', { simple: true }) === 'wal') {
          conn.pragma('busy_timeout = 5000');
          // Nothing is ever written through it.
          conn.pragma('query_only = ON');
          cachePreparedStatements(conn);
          this.reader = conn;
        } else {
          conn.close();
        }
      }
    }
    return this.reader ?? undefined;
  }

  override destroy(callback?: (err?: unknown) => void): Promise<void> {
    this.reader?.close();
    this.reader = null;
    return super.destroy(callback);
  }

  _formatBindings(bindings: unknown[] | undefined): unknown[] {
    const mapped = (bindings ?? []).map((b) => (b instanceof Date ? b.toISOString() : b));
    // @ts-expect-error the base class implements this internal hook
    return super._formatBindings(mapped);
  }
}

const SQLITE_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/;

/** Rows read back look the same on both dialects: booleans, parsed JSON, ISO-8601 UTC strings. */
export function rowNormaliser(dialect: Dialect, kinds: ColumnKinds): (row: Record<string, unknown>) => void {
  return (row) => {
    for (const key in row) {
      const v = row[key];
      if (v === null || v === undefined) continue;
      if (v instanceof Date) {
        row[key] = Number.isNaN(v.getTime()) ? null : v.toISOString();
      } else if (dialect === 'sqlite') {
        if (kinds.boolean.has(key) && (v === 0 || v === 1)) row[key] = v === 1;
        else if (
          kinds.json.has(key) &&
          typeof v === 'string' &&
          (v.startsWith('[') || v.startsWith('{') || v === 'null')
        ) {
          try {
            row[key] = JSON.parse(v);
          } catch {
            /* not JSON after all: leave the text */
          }
        } else if (kinds.timestamp.has(key)) {
          if (typeof v === 'string' && SQLITE_DATETIME.test(v))
            row[key] = new Date(v.replace(' ', 'T') + 'Z').toISOString();
          else if (typeof v === 'number') row[key] = new Date(v).toISOString();
        }
      }
    }
  };
}

function normaliseResult(result: unknown, normalise: (row: Record<string, unknown>) => void): unknown {
  if (Array.isArray(result)) {
    for (const r of result)
      if (r && typeof r === 'object' && !Array.isArray(r)) normalise(r as Record<string, unknown>);
  } else if (result && typeof result === 'object' && Object.getPrototypeOf(result) === Object.prototype) {
    normalise(result as Record<string, unknown>);
  }
  return result;
}

/**
 * PostgreSQL connection settings of a service (DATABASE_POOL_MAX,
 * DATABASE_STATEMENT_TIMEOUT_SECONDS, DATABASE_SESSION_SETTINGS).
 */
export interface DatabaseSettings {
  /** Connections per process (default 10). */
  poolMax?: number;
  /** statement_timeout of every session, 0 or unset: none. */
  statementTimeoutMs?: number;
  /** Send the session settings (jit, statement_timeout) as SET after connecting (default); false: send none. */
  sessionSettings?: boolean;
}

export interface KnexOptions extends DatabaseSettings {
  kinds: ColumnKinds;
  /**
   * SQLite's `synchronous` in WAL mode. NORMAL (the default) loses no committed transaction when the
   * process dies, but a power cut may lose the last ones; FULL syncs the WAL at every commit, so that
   * what was acknowledged survives a power cut too (one fsync per write transaction).
   */
  synchronous?: 'NORMAL' | 'FULL';
  /**
   * PostgreSQL: the `application_name` of every session, as pg_stat_activity shows it (it replaces one that
   * DATABASE_URL names). A serving instance's name is how `restore` recognises it (see serving.ts).
   */
  applicationName?: string;
  /**
   * PostgreSQL: connections kept open while idle (default 0). A serving instance keeps one, so that it stays
   * visible in pg_stat_activity between requests.
   */
  poolMin?: number;
}

/**
 * What each PostgreSQL session is set to after it connects. Just-in-time compilation costs more than it
 * saves on this service's short queries (a streamed report read took 236 ms with it, 58 ms without), so it
 * is off unless DATABASE_URL's own `options` name `jit`. The settings are sent as plain `SET` statements
 * after the connection opens, not as startup `options`, which PgBouncer and managed poolers refuse.
 */
export function sessionStatements(connection: string, settings: DatabaseSettings): string[] {
  if (settings.sessionSettings === false) return [];
  const options = new URL(connection).searchParams.get('options') ?? '';
  const out: string[] = [];
  if (!/\bjit\b/.test(options)) out.push('SET jit = off');
  if (settings.statementTimeoutMs) out.push(`SET statement_timeout = ${Math.floor(settings.statementTimeoutMs)}`);
  return out;
}

export function createKnex(target: DatabaseTarget, options: KnexOptions): Knex {
  const normalise = rowNormaliser(target.dialect, options.kinds);
  const postProcessResponse = (result: unknown) => normaliseResult(result, normalise);
  if (target.dialect === 'pg') {
    setPgTypeParsers();
    const statements = sessionStatements(target.connection, options);
    let connection: string | { connectionString: string; application_name: string } = target.connection;
    if (options.applicationName) {
      // The URL's own application_name would win over the one given beside it.
      const u = new URL(target.connection);
      let connectionString = target.connection;
      if (u.searchParams.has('application_name')) {
        u.searchParams.delete('application_name');
        connectionString = u.toString();
      }
      connection = { connectionString, application_name: options.applicationName };
    }
    return knexFactory({
      client: 'pg',
      connection,
      searchPath: target.schema ? [target.schema] : undefined,
      pool: {
        min: options.poolMin ?? 0,
        max: options.poolMax ?? 10,
        afterCreate(
          conn: { query(sql: string, cb: (err: Error | null) => void): void },
          done: (err: Error | null, conn: unknown) => void,
        ) {
          if (!statements.length) {
            done(null, conn);
            return;
          }
          conn.query(statements.join('; '), (err) => done(err, conn));
        },
      },
      postProcessResponse,
    });
  }
  if (target.connection !== ':memory:') fs.mkdirSync(path.dirname(target.connection), { recursive: true });
  return knexFactory({
    client: SqliteClient as unknown as typeof Knex.Client,
    connection: { filename: target.connection },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        try {
          conn.pragma('journal_mode = WAL');
          conn.pragma('foreign_keys = ON');
          conn.pragma('busy_timeout = 5000');
          conn.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
          done(null, conn);
        } catch (err) {
          done(err as Error, conn);
        }
      },
    },
    postProcessResponse,
  });
}
