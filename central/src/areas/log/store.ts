import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { LOG_MERGE_COLUMNS, LOG_PRIMARY_KEYS, type LogTable } from '@lms/shared';

export async function schoolUserExists(db: Knex, schooluserid: string): Promise<boolean> {
  const row = await db('schoolusers').where({ schooluserid }).first('schooluserid');
  return !!row;
}

export async function insertSync(trx: Knex.Transaction, o: { filename: string; offlineonline: boolean; createdBy: string }): Promise<string> {
  const syncid = crypto.randomUUID();
  await trx('syncs').insert({ syncid, filename: o.filename, type: 1, offlineonline: o.offlineonline, created_by: o.createdBy, created_at: new Date() });
  return syncid;
}

/** One `logfiles` row of type 1 per RPI-API text log of the ZIP, linked to the archive's id. */
export async function insertTextLogFiles(trx: Knex.Transaction, parentfileid: string, names: string[], createdBy: string): Promise<void> {
  const now = new Date();
  for (let i = 0; i < names.length; i += 200) {
    const rows = names.slice(i, i + 200).map((logfilename) => ({
      logfileid: crypto.randomUUID(), parentfileid, logfilename, type: 1, created_by: createdBy, created_at: now, updated_at: now,
    }));
    await trx('logfiles').insert(rows);
  }
}

export async function insertArchiveLogFile(trx: Knex.Transaction, o: { logfileid: string; filename: string; meta: unknown; createdBy: string }): Promise<void> {
  const now = new Date();
  await trx('logfiles').insert({
    logfileid: o.logfileid, logfilename: o.filename, logfilemeta: JSON.stringify(o.meta), type: 2, created_by: o.createdBy, created_at: now, updated_at: now,
  });
}

// Bound parameters per statement: SQLite builds before 3.32 allow 999, better-sqlite3 12 allows 32766,
// PostgreSQL 65535. A few thousand keeps every statement small and the event loop responsive.
const PARAM_BUDGET = 6000;

type Row = Record<string, unknown>;

/**
 * Insert-or-update by primary key ("merge by duplicate key"): a new row is inserted whole, an existing row
 * gets only the contract's merge columns that the incoming row carries (an absent column keeps its value).
 * Rows are grouped by their column set, because one multi-row INSERT needs the same columns in every row.
 */
export async function upsertRows(trx: Knex.Transaction, table: LogTable, rows: Row[]): Promise<void> {
  if (!rows.length) return;
  const pk = LOG_PRIMARY_KEYS[table];
  // A key given twice in one statement makes PostgreSQL refuse the whole upsert; the later row wins, as it
  // would have on a row-by-row merge.
  const unique = new Map<unknown, Row>();
  for (const r of rows) unique.set(r[pk], r);
  const groups = new Map<string, Row[]>();
  for (const r of unique.values()) {
    const sig = Object.keys(r).join(',');
    const g = groups.get(sig);
    if (g) g.push(r);
    else groups.set(sig, [r]);
  }
  for (const [sig, group] of groups) {
    const columns = sig.split(',');
    const merge = LOG_MERGE_COLUMNS[table].filter((c) => columns.includes(c));
    const per = Math.max(1, Math.floor(PARAM_BUDGET / columns.length));
    for (let i = 0; i < group.length; i += per) {
      const q = trx(table).insert(group.slice(i, i + per)).onConflict(pk);
      await (merge.length ? q.merge(merge) : q.ignore());
    }
  }
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
    tablename: r.tablename, rowid: r.rowid, learnerid: r.learnerid, reason: r.reason, rowdata: JSON.stringify(r.row), syncid, created_at: now, updated_at: now,
  }));
  for (let i = 0; i < all.length; i += 500) {
    await trx('logimportpending').insert(all.slice(i, i + 500)).onConflict(['tablename', 'rowid']).merge(['learnerid', 'reason', 'rowdata', 'syncid', 'updated_at']);
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
export async function existingIds(trx: Knex.Transaction, table: 'students' | 'schoolusers', column: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx(table).whereIn(column, ids.slice(i, i + 500)).select(column);
    for (const r of rows as Row[]) found.add(String(r[column]));
  }
  return found;
}
