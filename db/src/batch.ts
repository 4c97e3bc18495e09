import type { Knex } from 'knex';

/**
 * How many rows one multi-row statement may carry on a database. SQLite turns a multi-row INSERT into a
 * compound SELECT (at most SQLITE_MAX_COMPOUND_SELECT = 500 terms) and caps bound variables at
 * SQLITE_MAX_VARIABLE_NUMBER (999 before SQLite 3.32, 32766 since; the bundled library's own limit is read
 * once, below). PostgreSQL counts a statement's parameters in 16 bits (65535) and has no row limit.
 */
export interface StatementLimits {
  maxRows: number;
  maxParams: number;
}

const SQLITE_COMPOUND_TERMS = 500;
const PG_PARAMS = 65_535;
/** Room kept under the variable limit for a statement's own bindings (an ON CONFLICT's WHERE, say). */
const PARAM_MARGIN = 16;

let sqliteVariables: number | undefined;

/**
 * The bundled SQLite's variable limit, asked of the library itself: a statement naming `?N` past the limit
 * does not compile. An in-memory database answers for every file the same library opens.
 */
export function sqliteVariableLimit(): number {
  if (sqliteVariables === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Driver = require('better-sqlite3') as new (file: string) => { prepare(sql: string): unknown; close(): void };
    const probe = new Driver(':memory:');
    try {
      let found = 999;
      for (const n of [250_000, 32_766, 999]) {
        try {
          probe.prepare(`SELECT ?${n}`);
          found = n;
          break;
        } catch { /* past this library's limit: try the next lower one */ }
      }
      sqliteVariables = found;
    } finally {
      probe.close();
    }
  }
  return sqliteVariables;
}

export function statementLimits(db: Knex): StatementLimits {
  const client = (db.client as { config?: { client?: unknown }; dialect?: string }).dialect ?? '';
  if (client === 'postgresql' || client === 'pg') return { maxRows: Number.MAX_SAFE_INTEGER, maxParams: PG_PARAMS };
  return { maxRows: SQLITE_COMPOUND_TERMS, maxParams: sqliteVariableLimit() };
}

/** Rows of `columns` columns each that fit in one statement on `db`. */
export function rowsPerStatement(db: Knex, columns: number): number {
  const { maxRows, maxParams } = statementLimits(db);
  return Math.max(1, Math.min(maxRows, Math.floor((maxParams - PARAM_MARGIN) / Math.max(1, columns))));
}

/**
 * A failed multi-row write, described by its table, its size and the database's own words, never by the
 * statement's text: a batch's SQL runs to hundreds of kilobytes, and its values are learners' data.
 */
export class BatchWriteError extends Error {
  readonly table: string;
  readonly rows: number;
  readonly columns: number;
  readonly code: string | undefined;

  constructor(table: string, rows: number, columns: number, cause: unknown) {
    const c = cause as { code?: unknown; message?: unknown } | undefined;
    const code = typeof c?.code === 'string' ? c.code : undefined;
    super(`writing ${rows} row(s) of ${columns} column(s) to ${table} failed: ${databaseWords(cause)}`);
    this.name = 'BatchWriteError';
    this.table = table;
    this.rows = rows;
    this.columns = columns;
    this.code = code;
  }
}

const MAX_WORDS = 300;

/**
 * The database's message without the statement: knex prefixes the SQL text (`insert into ... - UNIQUE
 * constraint failed`); PostgreSQL's own message and detail carry no statement but may quote a value, so
 * both are cut short.
 */
export function databaseWords(err: unknown): string {
  const e = err as { message?: unknown; detail?: unknown } | undefined;
  let message = typeof e?.message === 'string' ? e.message : String(err);
  const cut = message.lastIndexOf(' - ');
  if (cut >= 0 && /^\s*(insert|update|delete|select|with)\b/i.test(message)) message = message.slice(cut + 3);
  if (typeof e?.detail === 'string') message += ` (${e.detail})`;
  return message.length > MAX_WORDS ? `${message.slice(0, MAX_WORDS)}…` : message;
}
