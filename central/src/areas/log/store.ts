import crypto from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { Knex } from '@lms/db';
import { LOG_COLUMNS, LOG_MERGE_COLUMNS, LOG_PRIMARY_KEYS, type LogTable } from '@lms/shared';

export async function schoolUserExists(db: Knex, schooluserid: string): Promise<boolean> {
  const row = await db('schoolusers').where({ schooluserid }).first('schooluserid');
  return !!row;
}

export async function insertSync(
  trx: Knex.Transaction,
  o: { filename: string; offlineonline: boolean; createdBy: string },
): Promise<string> {
  const syncid = crypto.randomUUID();
  await trx('syncs').insert({
    syncid,
    filename: o.filename,
    type: 1,
    offlineonline: o.offlineonline,
    created_by: o.createdBy,
    created_at: new Date(),
  });
  return syncid;
}

/** One `logfiles` row of type 1 per RPI-API text log of the ZIP, linked to the archive's id. */
export async function insertTextLogFiles(
  trx: Knex.Transaction,
  parentfileid: string,
  names: string[],
  createdBy: string,
): Promise<void> {
  const now = new Date();
  for (let i = 0; i < names.length; i += 200) {
    const rows = names.slice(i, i + 200).map((logfilename) => ({
      logfileid: crypto.randomUUID(),
      parentfileid,
      logfilename,
      type: 1,
      created_by: createdBy,
      created_at: now,
      updated_at: now,
    }));
    await trx('logfiles').insert(rows);
  }
}

export async function insertArchiveLogFile(
  trx: Knex.Transaction,
  o: { logfileid: string; filename: string; meta: unknown; createdBy: string },
): Promise<void> {
  const now = new Date();
  await trx('logfiles').insert({
    logfileid: o.logfileid,
    logfilename: o.filename,
    logfilemeta: JSON.stringify(o.meta),
    type: 2,
    created_by: o.createdBy,
    created_at: now,
    updated_at: now,
  });
}

type Row = Record<string, unknown>;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The column that says whose row it is: the learner (or school user) of each table, the result of a
 * result's question. A merge never moves a row to another owner: a row whose key exists with another
 * owner is left as it is (an upload could otherwise rewrite another learner's progress by its id).
 */
export const LOG_OWNER_COLUMN: Record<LogTable, string> = {
  rpiuseraccess: 'userid',
  studentprogress: 'studentid',
  studentprogressquestions: 'studentprogressid',
  studentactives: 'studentid',
  studentlearningsprogress: 'studentid',
  studentgradesprogress: 'studentid',
  studentlevelsprogress: 'studentid',
  studentlessonsprogress: 'studentid',
  studentpoints: 'studentid',
  studentappusages: 'schooluserid',
};

function conflictClause(table: LogTable, pk: string, merge: string[], columns: string[]): string {
  const owner = LOG_OWNER_COLUMN[table];
  const set = merge.filter((c) => c !== owner);
  if (!set.length) return `ON CONFLICT (${quote(pk)}) DO NOTHING`;
  const mine = columns.includes(owner) ? `${quote(table)}.${quote(owner)} = excluded.${quote(owner)} AND ` : '';
  // A row that arrives again unchanged (a log uploaded twice) is left as it is: no new row version, no
  // index entries, nothing for PostgreSQL's vacuum, instead of rewriting it with the same values.
  const changed =
    `(${set.map((c) => `${quote(table)}.${quote(c)}`).join(', ')}) IS DISTINCT FROM ` +
    `(${set.map((c) => `excluded.${quote(c)}`).join(', ')})`;
  return (
    `ON CONFLICT (${quote(pk)}) DO UPDATE SET ` +
    `${set.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')} WHERE ${mine}${changed}`
  );
}

/** Groups rows by their column set (one multi-row statement needs the same columns in every row), last key wins. */
function groupRows(table: LogTable, rows: Row[]): Array<{ columns: string[]; merge: string[]; rows: Row[] }> {
  const pk = LOG_PRIMARY_KEYS[table];
  // A key given twice in one statement makes PostgreSQL refuse the whole upsert; the later row wins, as it
  // would have on a row-by-row merge.
  const unique = new Map<unknown, Row>();
  for (const r of rows) unique.set(r[pk], r);
  // Rows come from the log.ini reader with the spec's columns only, so a row with as many keys as the spec
  // has them all; only rows that lack a column need their key list spelled out.
  const full = Object.keys(LOG_COLUMNS[table]);
  const fullSig = full.join(',');
  const groups = new Map<string, Row[]>();
  for (const r of unique.values()) {
    let n = 0;
    for (const _ in r) n += 1;
    const sig = n === full.length ? fullSig : Object.keys(r).join(',');
    const g = groups.get(sig);
    if (g) g.push(r);
    else groups.set(sig, [r]);
  }
  return [...groups].map(([sig, list]) => {
    const columns = sig.split(',');
    return { columns, merge: LOG_MERGE_COLUMNS[table].filter((c) => columns.includes(c)), rows: list };
  });
}

// ---- SQLite: prepared multi-row statements on the transaction's own better-sqlite3 connection. ----------

interface SqliteStatement {
  run(params: unknown[]): { changes: number };
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}

/**
 * One prepared single-row statement per table and column set, run once per row. Measured on the benchmark
 * log in better-sqlite3 alone: 530-550 ms for its 145,000 rows one row a statement, 650-710 ms in 500-row
 * statements (each of which also holds about 0.8 MB of compiled program while it is cached).
 */
const sqliteStatements = new WeakMap<object, Map<string, SqliteStatement>>();

function sqliteStatement(
  conn: SqliteConnection,
  table: string,
  columns: string[],
  pk: string,
  merge: string[],
): SqliteStatement {
  let cache = sqliteStatements.get(conn);
  if (!cache) sqliteStatements.set(conn, (cache = new Map()));
  const key = `${table}|${columns.join(',')}`;
  let stmt = cache.get(key);
  if (!stmt) {
    stmt = conn.prepare(
      `INSERT INTO ${quote(table)} (${columns.map(quote).join(',')}) ` +
        `VALUES (${columns.map(() => '?').join(',')}) ${conflictClause(table as LogTable, pk, merge, columns)}`,
    );
    cache.set(key, stmt);
  }
  return stmt;
}

const sqliteValue = (v: unknown): unknown => (v === undefined ? null : typeof v === 'boolean' ? (v ? 1 : 0) : v);

// better-sqlite3 runs statements synchronously: hand the event loop back every few milliseconds so that
// other requests are served while a large log is written.
const YIELD_MS = 8;
let lastYield = performance.now();
const handBack = () => new Promise<void>((resolve) => setImmediate(() => {
  lastYield = performance.now();
  resolve();
}));

async function sqliteUpsert(trx: object, conn: SqliteConnection, table: LogTable, rows: Row[]): Promise<void> {
  const pk = LOG_PRIMARY_KEYS[table];
  let changed = 0;
  for (const g of groupRows(table, rows)) {
    const stmt = sqliteStatement(conn, table, g.columns, pk, g.merge);
    const params: unknown[] = new Array(g.columns.length);
    for (const r of g.rows) {
      let k = 0;
      for (const c of g.columns) params[k++] = sqliteValue(r[c]);
      changed += stmt.run(params).changes;
      if (performance.now() - lastYield >= YIELD_MS) await handBack();
    }
  }
  countChanged(trx, changed);
}

// ---- PostgreSQL: one prepared INSERT ... SELECT FROM unnest(arrays) per table and column set. -----------

interface PgConnection {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rowCount: number | null }>;
}

const PG_ARRAY_TYPE: Record<string, string> = {
  id: 'text[]',
  string: 'text[]',
  int: 'int4[]',
  number: 'float8[]',
  decimal: 'float8[]',
  bool: 'bool[]',
  datetime: 'timestamptz[]',
  json: 'jsonb[]',
};

const pgStatements = new Map<string, { name: string; text: string }>();

function pgStatement(table: LogTable, columns: string[], pk: string, merge: string[]): { name: string; text: string } {
  const key = `${table}|${columns.join(',')}`;
  let stmt = pgStatements.get(key);
  if (!stmt) {
    const kinds = LOG_COLUMNS[table] as Record<string, string>;
    const text =
      `INSERT INTO ${quote(table)} (${columns.map(quote).join(',')}) ` +
      'SELECT * FROM unnest(' +
      `${columns.map((c, i) => `$${i + 1}::${PG_ARRAY_TYPE[kinds[c]] ?? 'text[]'}`).join(', ')}) ` +
      `${conflictClause(table, pk, merge, columns)}`;
    stmt = { name: `lms_log_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text };
    pgStatements.set(key, stmt);
  }
  return stmt;
}

/**
 * The upsert a transaction has sent and not yet seen answered. Each upsert is sent before the previous
 * one's answer is awaited, so that the next batch is read and prepared while PostgreSQL writes the last
 * (the connection still runs them one after the other, in order). settleUpserts awaits the last one.
 */
const pgInFlight = new WeakMap<object, Promise<unknown>>();

async function pgUpsert(trx: object, conn: PgConnection, table: LogTable, rows: Row[]): Promise<void> {
  const pk = LOG_PRIMARY_KEYS[table];
  for (const g of groupRows(table, rows)) {
    const { name, text } = pgStatement(table, g.columns, pk, g.merge);
    const values = g.columns.map((c) => g.rows.map((r) => r[c] ?? null));
    const previous = pgInFlight.get(trx);
    const sent = conn.query({ name, text, values }).then((r) => countChanged(trx, r.rowCount ?? 0));
    // Awaited by the next upsert or by settleUpserts; until then a failure must not count as unhandled.
    sent.catch(() => undefined);
    pgInFlight.set(trx, sent);
    if (previous) await previous;
  }
}

/**
 * Rows each transaction's upserts inserted or actually changed. The upsert's `WHERE ... IS DISTINCT FROM`
 * leaves a row that arrives again unchanged alone, and the database does not count it: an upload that
 * counts 0 here changed nothing.
 */
const changedRows = new WeakMap<object, number>();

function countChanged(trx: object, n: number): void {
  changedRows.set(trx, (changedRows.get(trx) ?? 0) + n);
}

/** Rows inserted or changed by the transaction's upserts so far (after settleUpserts, all of them). */
export function upsertedChanges(trx: Knex.Transaction): number {
  return changedRows.get(trx) ?? 0;
}

/** Waits until every upsert of the transaction has been answered; the first failure is thrown. */
export async function settleUpserts(trx: Knex.Transaction): Promise<void> {
  const last = pgInFlight.get(trx);
  pgInFlight.delete(trx);
  if (last) await last;
}

/**
 * Insert-or-update by primary key ("merge by duplicate key"): a new row is inserted whole, an existing row
 * gets only the contract's merge columns that the incoming row carries (an absent column keeps its value).
 *
 * Measured on the six-month benchmark log, Knex's builder was the bottleneck: its SQLite multi-row insert is
 * an `INSERT ... SELECT ... UNION ALL` chain (capped at 500 rows) rebuilt and re-prepared for every batch, and a
 * plain multi-row upsert on PostgreSQL stays under half of COPY. So the rows go straight to the transaction's
 * own connection: on SQLite a cached prepared single-row `INSERT ... VALUES (...) ON CONFLICT DO UPDATE` run per
 * row, on PostgreSQL one prepared `INSERT ... SELECT FROM unnest($1::text[], ...) ON CONFLICT DO UPDATE` per batch
 * (one bound array per column, whatever the row count). Same transaction, same statements' meaning. On
 * PostgreSQL the last upsert may still be running when this returns: settleUpserts before relying on it.
 */
export async function upsertRows(trx: Knex.Transaction, table: LogTable, rows: Row[]): Promise<void> {
  if (!rows.length) return;
  const client = trx.client as unknown as { dialect?: string; acquireConnection(): Promise<unknown> };
  // Inside a transaction Knex hands back the transaction's connection (its BEGIN or SAVEPOINT applies).
  const conn = await client.acquireConnection();
  if (client.dialect === 'postgresql') await pgUpsert(trx, conn as PgConnection, table, rows);
  else await sqliteUpsert(trx, conn as SqliteConnection, table, rows);
}

export interface PendingRow {
  tablename: LogTable;
  rowid: string;
  learnerid: string | null;
  reason: string;
  row: Row;
}

export async function upsertPending(trx: Knex.Transaction, syncid: string, rows: PendingRow[]): Promise<void> {
  const now = new Date();
  const unique = new Map<string, PendingRow>();
  for (const r of rows) unique.set(`${r.tablename}\u0000${r.rowid}`, r);
  const all = [...unique.values()].map((r) => ({
    tablename: r.tablename,
    rowid: r.rowid,
    learnerid: r.learnerid,
    reason: r.reason,
    rowdata: JSON.stringify(r.row),
    syncid,
    created_at: now,
    updated_at: now,
  }));
  for (let i = 0; i < all.length; i += 500) {
    await trx('logimportpending')
      .insert(all.slice(i, i + 500))
      .onConflict(['tablename', 'rowid'])
      .merge(['learnerid', 'reason', 'rowdata', 'syncid', 'updated_at']);
  }
}

export async function hasPending(trx: Knex.Transaction): Promise<boolean> {
  return !!(await trx('logimportpending').first('rowid'));
}

/** Rows now imported into their table are no longer pending. */
export async function clearPending(trx: Knex.Transaction, tablename: LogTable, rowids: string[]): Promise<void> {
  for (let i = 0; i < rowids.length; i += 500) {
    await trx('logimportpending').where({ tablename }).whereIn('rowid', rowids.slice(i, i + 500)).del();
  }
}

/** Which of `ids` exist as `column` of `table`. */
/** The school (name) of each of these learners or school users that central knows. */
export async function schoolsOf(
  trx: Knex.Transaction,
  table: 'students' | 'schoolusers',
  column: string,
  ids: string[],
): Promise<Map<string, string | null>> {
  const found = new Map<string, string | null>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx(table).whereIn(column, ids.slice(i, i + 500)).select(column, 'schoolname');
    for (const r of rows as Row[]) found.set(String(r[column]), (r.schoolname as string | null) ?? null);
  }
  return found;
}

// ---- SQLite: the WAL checkpoint after a large import, off the request thread. -------------------------

interface SqliteWalConnection {
  pragma(source: string, options?: { simple: boolean }): unknown;
  readonly name: string;
  readonly memory: boolean;
}

const CHECKPOINT_WORKER = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
try { db.pragma('busy_timeout = 5000'); db.pragma('wal_checkpoint(PASSIVE)'); } finally { db.close(); }
`;

let checkpointsDeferred = 0;
let savedAutocheckpoint = 1000;
const checkpointThreads = new Set<Promise<void>>();

/**
 * Resolves once no checkpoint thread runs: shutdown waits for them, since ending the process while one
 * is opening the database aborts it.
 */
export async function checkpointsSettled(): Promise<void> {
  while (checkpointThreads.size) await Promise.all([...checkpointThreads]);
}

/**
 * A log import writes some 100 MB of WAL; the automatic checkpoint that follows its COMMIT copies all of it
 * into the database file on the committing connection, which measured 200 ms with every other request of
 * the server waiting. So automatic checkpoints are off while imports run, and the returned function (to be
 * called once the transaction has ended) checkpoints from a worker thread's own connection, then restores
 * the setting. Nothing to do on PostgreSQL or an in-memory database.
 */
export async function deferCheckpoint(trx: Knex.Transaction): Promise<() => void> {
  const client = trx.client as unknown as { dialect?: string; acquireConnection(): Promise<unknown> };
  if (client.dialect === 'postgresql') return () => undefined;
  const conn = (await client.acquireConnection()) as SqliteWalConnection;
  if (conn.memory || typeof conn.pragma !== 'function') return () => undefined;
  if (checkpointsDeferred === 0) savedAutocheckpoint = Number(conn.pragma('wal_autocheckpoint', { simple: true }));
  checkpointsDeferred += 1;
  conn.pragma('wal_autocheckpoint = 0');
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const restore = () => {
      checkpointsDeferred -= 1;
      if (checkpointsDeferred > 0) return;
      try {
        conn.pragma(`wal_autocheckpoint = ${savedAutocheckpoint}`);
      } catch {
        // The connection was closed meanwhile; a new one starts with the default.
      }
    };
    try {
      // The thread only runs one statement: a small heap keeps it from adding to the server's peak memory.
      const worker = new Worker(CHECKPOINT_WORKER, {
        eval: true,
        workerData: { driver: require.resolve('better-sqlite3'), file: conn.name },
        resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
      });
      // A failed checkpoint leaves the WAL to the next automatic one; nothing of the import depends on it.
      worker.once('error', () => undefined);
      const exited = new Promise<void>((resolve) => {
        worker.once('exit', () => {
          checkpointThreads.delete(exited);
          restore();
          resolve();
        });
      });
      checkpointThreads.add(exited);
      worker.unref();
    } catch {
      restore();
    }
  };
}
