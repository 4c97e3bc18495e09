import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Knex } from '@lms/db';
import {
  LOG_PRIMARY_KEYS,
  LOG_WINDOW_COLUMNS,
  PROGRESS_COLLECTIONS,
  PROGRESS_KEYS,
  httpError,
  type LogSource,
  type LogTable,
  type LogZipFile,
  type ProgressKey,
} from '@lms/shared';
import { DAILY_NAME } from '../../logging';
import { studentsInScope, usersInScope } from '../common';

type Row = Record<string, unknown>;

// Rows are read a page at a time so that six months of a busy classroom never sit in memory at once.
const PAGE = 1000;

/** The column that names whose row it is, and whether that is a learner (studentid) or a school user. */
const OWNER: Partial<Record<LogTable, { column: string; of: 'students' | 'users' }>> = {
  rpiuseraccess: { column: 'userid', of: 'users' },
  studentappusages: { column: 'schooluserid', of: 'users' },
};

/** Rows of `table` that belong to the school's people (every row for the scope of every school). */
function inScope(db: Knex, table: LogTable, q: Knex.QueryBuilder, school: string | undefined): Knex.QueryBuilder {
  if (school === undefined) return q;
  const owner = OWNER[table] ?? { column: 'studentid', of: 'students' };
  return q.whereIn(owner.column, owner.of === 'users' ? usersInScope(db, school) : studentsInScope(db, school));
}

/**
 * The rows of one table newer than `since` on its window column, in primary-key pages (stable under concurrent inserts
 * of older keys).
 */
async function* windowed(
  db: Knex, table: LogTable, windowColumn: string, since: Date, school: string | undefined,
): AsyncGenerator<Row> {
  const pk = LOG_PRIMARY_KEYS[table];
  let after: string | null = null;
  for (;;) {
    const page = db(table).where(windowColumn, '>', since.toISOString()).orderBy(pk).limit(PAGE);
    const q = inScope(db, table, page, school);
    if (after !== null) q.andWhere(pk, '>', after);
    const rows: Row[] = await q;
    for (const r of rows) yield r;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1][pk] as string;
  }
}

/** Results with their question rows attached (questions have no window of their own: they follow their result). */
async function* resultsWithQuestions(db: Knex, since: Date, school: string | undefined): AsyncGenerator<Row> {
  let page: Row[] = [];
  const flush = async function* (): AsyncGenerator<Row> {
    const ids = page.map((r) => r.studentprogressid as string);
    const questions: Row[] = ids.length
      ? await db('studentprogressquestions').whereIn('studentprogressid', ids).orderBy('studentprogressquestionid')
      : [];
    const byResult = new Map<string, Row[]>();
    for (const q of questions) {
      const list = byResult.get(q.studentprogressid as string) ?? [];
      list.push(q);
      byResult.set(q.studentprogressid as string, list);
    }
    for (const r of page) yield { ...r, studentprogressquestions: byResult.get(r.studentprogressid as string) ?? [] };
    page = [];
  };
  for await (const r of windowed(db, 'studentprogress', LOG_WINDOW_COLUMNS.studentprogress, since, school)) {
    page.push(r);
    if (page.length >= 500) yield* flush();
  }
  yield* flush();
}

/**
 * Every collection of the activity log, each limited to rows later than `since` by its own filter column, and
 * to the school's people when a school is given.
 */
export function logSource(db: Knex, since: Date, school?: string): LogSource {
  const progress = Object.fromEntries(
    PROGRESS_KEYS.map((k: ProgressKey) => [
      k, windowed(db, PROGRESS_COLLECTIONS[k], LOG_WINDOW_COLUMNS[k], since, school),
    ]),
  ) as unknown as LogSource['progress'];
  return {
    result: resultsWithQuestions(db, since, school),
    progress,
    access: windowed(db, 'rpiuseraccess', LOG_WINDOW_COLUMNS.rpiuseraccess, since, school),
  };
}

/**
 * Opens every file of the log directory whose name passes `include`, before any byte of the response
 * is sent: a file that cannot be opened as a regular file is a 500 `Error read file`, as the contract says.
 * A missing directory just means there are no files yet.
 */
export interface LogFileBound {
  /** Daily files of days before this one (YYYY-MM-DD) are left out. */
  oldestDay: string;
  /** At most this many bytes of files: the newest days first, older ones left out past it. */
  maxBytes: number;
}

/** The names to ship: inside the window, newest day first until the bound, then in name order. */
async function withinBound(dir: string, names: string[], bound: LogFileBound): Promise<string[]> {
  const dayOf = (name: string) => DAILY_NAME.exec(name)?.[2];
  const kept = names.filter((n) => (dayOf(n) ?? bound.oldestDay) >= bound.oldestDay);
  // Newest first; a name without a day counts as today's.
  kept.sort((a, b) =>
    (dayOf(b) ?? '9999') < (dayOf(a) ?? '9999') ? -1 : (dayOf(b) ?? '9999') > (dayOf(a) ?? '9999') ? 1 : a < b ? -1 : 1,
  );
  const out: string[] = [];
  let total = 0;
  for (const name of kept) {
    const size = (await fs.promises.lstat(path.join(dir, name)).catch(() => undefined))?.size ?? 0;
    if (total + size > bound.maxBytes) break;
    total += size;
    out.push(name);
  }
  return out.sort();
}

export async function openLogFiles(
  dir: string,
  include: (name: string) => boolean,
  bound?: LogFileBound,
): Promise<LogZipFile[]> {
  let names: string[];
  try {
    names = (await fs.promises.readdir(dir)).filter(include).sort();
    if (bound) names = await withinBound(dir, names, bound);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw httpError(500, 'Error read file');
  }
  const opened: Array<{ name: string; handle: fs.promises.FileHandle }> = [];
  try {
    for (const name of names) {
      const handle = await fs.promises.open(path.join(dir, name), 'r');
      opened.push({ name, handle });
      if (!(await handle.stat()).isFile()) throw new Error(`${name} is not a regular file`);
    }
  } catch {
    await Promise.all(opened.map((o) => o.handle.close()));
    throw httpError(500, 'Error read file');
  }
  return opened.map(({ name, handle }) => ({ name, stream: handle.createReadStream({ autoClose: true }) }));
}

/** `log-YYYY-MM-DD-HHmmss.zip` in UTC: date and time, and nothing a filesystem refuses (decision 15). */
export function exportFileName(prefix: string, now: Date): string {
  const iso = now.toISOString();
  return `${prefix}-${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}.zip`;
}

/**
 * Learners of the classroom as school user rows carrying their `student` row; password hashes never leave the server.
 */
export async function* reportStudents(db: Knex, school?: string): AsyncGenerator<Row> {
  let after: string | null = null;
  for (;;) {
    const q = db('schoolusers')
      .join('students', 'students.schooluserid', 'schoolusers.schooluserid')
      .select(
        'schoolusers.schooluserid',
        'schoolusers.schoolusername',
        'schoolusers.schooluserrole',
        'schoolusers.schooluserstatus',
        'schoolusers.schoolname',
        'schoolusers.isdisabled',
        'schoolusers.isdeleted',
        'students.studentid',
      )
      .orderBy('students.studentid')
      .limit(PAGE);
    if (after !== null) q.andWhere('students.studentid', '>', after);
    if (school !== undefined) q.whereRaw('lower(students.schoolname) = ?', [school.toLowerCase()]);
    const users: Row[] = await q;
    if (users.length === 0) return;
    const students: Row[] = await db('students').whereIn('studentid', users.map((u) => u.studentid as string));
    const byId = new Map(students.map((s) => [s.studentid as string, s]));
    for (const { studentid, ...user } of users) yield { ...user, student: byId.get(studentid as string) ?? null };
    if (users.length < PAGE) return;
    after = users[users.length - 1].studentid as string;
  }
}

/** A stored time (ISO text on SQLite, a Date on PostgreSQL) as ISO-8601, or null. */
function isoOf(v: unknown): string | null {
  if (v === null || v === undefined || v === '') return null;
  const d = v instanceof Date ? v : new Date(String(v));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

const countOf = (row: unknown): number => Number((row as { n?: unknown } | undefined)?.n ?? 0);

export interface LogCounts {
  /** Learners with a result or a progress row in the window. */
  learners: number;
  results: number;
  answers: number;
  /** Rows of the seven progress collections. */
  progress: number;
  access: number;
  /** Earliest and latest time of the rows in the window (null when there are none). */
  first: string | null;
  last: string | null;
}

/** What the export's log.ini would hold now, counted in the database (one query per table). */
export async function logCounts(db: Knex, since: Date, school?: string): Promise<LogCounts> {
  const after = since.toISOString();
  const learnerTables = (['studentprogress', ...PROGRESS_KEYS.filter((k) => k !== 'studentappusages')] as const).map(
    (k) => ({
      table: k === 'studentprogress' ? 'studentprogress' : PROGRESS_COLLECTIONS[k as ProgressKey],
      column: LOG_WINDOW_COLUMNS[k],
    }),
  );
  const [first, ...rest] = learnerTables.map(({ table, column }) =>
    inScope(db, table as LogTable, db(table).distinct('studentid').where(column, '>', after), school));
  const learners = countOf(await db.from(first.union(rest).as('l')).count({ n: '*' }).first());

  let firstAt: string | null = null;
  let lastAt: string | null = null;
  const span = (lo: unknown, hi: unknown) => {
    const a = isoOf(lo);
    const b = isoOf(hi);
    if (a && (!firstAt || a < firstAt)) firstAt = a;
    if (b && (!lastAt || b > lastAt)) lastAt = b;
  };
  const tally = async (table: string, column: string): Promise<number> => {
    const row = (await inScope(db, table as LogTable, db(table).where(column, '>', after), school)
      .count({ n: '*' }).min({ lo: column }).max({ hi: column }).first()) as
      { n: unknown; lo: unknown; hi: unknown } | undefined;
    span(row?.lo, row?.hi);
    return countOf(row);
  };
  const results = await tally('studentprogress', LOG_WINDOW_COLUMNS.studentprogress);
  const answers = countOf(await db('studentprogressquestions')
    .whereIn('studentprogressid', inScope(db, 'studentprogress',
      db('studentprogress').select('studentprogressid').where(LOG_WINDOW_COLUMNS.studentprogress, '>', after), school))
    .count({ n: '*' }).first());
  let progress = 0;
  for (const k of PROGRESS_KEYS) progress += await tally(PROGRESS_COLLECTIONS[k], LOG_WINDOW_COLUMNS[k]);
  const access = await tally('rpiuseraccess', LOG_WINDOW_COLUMNS.rpiuseraccess);
  return { learners, results, answers, progress, access, first: firstAt, last: lastAt };
}

/** Bytes a stream yields, consuming it. */
export async function countBytes(stream: Readable): Promise<number> {
  let n = 0;
  for await (const chunk of stream) n += (chunk as Buffer).length;
  return n;
}

export async function recordExport(db: Knex, o: { schooluserid: string; at: Date; bytes: number }): Promise<void> {
  await db('logexports').insert({
    logexportid: crypto.randomUUID(),
    schooluserid: o.schooluserid,
    exported_at: o.at.toISOString(),
    bytes: o.bytes,
  });
}

/** The latest completed export, with the name of the account that made it. */
export async function lastExport(
  db: Knex, school?: string,
): Promise<{ at: string; bytes: number; by: string | null } | null> {
  const q = db('logexports');
  // Another school's export is not this school's: it held other learners.
  if (school !== undefined) q.whereIn('logexports.schooluserid', usersInScope(db, school));
  const row = (await q
    .leftJoin('schoolusers', 'schoolusers.schooluserid', 'logexports.schooluserid')
    .orderBy('logexports.exported_at', 'desc')
    .first('logexports.exported_at', 'logexports.bytes', 'schoolusers.schoolusername')) as
    { exported_at: string; bytes: number | string; schoolusername: string | null } | undefined;
  return row ? { at: row.exported_at, bytes: Number(row.bytes), by: row.schoolusername ?? null } : null;
}
