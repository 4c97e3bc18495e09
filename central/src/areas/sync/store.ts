import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Knex } from '@lms/db';
import {
  CONTENT_KEY_LIST,
  SYNCFILE_INI,
  singleEntryZip,
  writeContentZip,
  type ContentKey,
  type RowSource,
} from '@lms/shared';
import { streamToFile } from '../../classroom-client';
import type { Scope } from '../../http/scope';

// Rows are paged out of the database by primary key, so a package of any size is never held in memory
// and the same data always gives the same bytes.
const PAGE = 500;

type Row = Record<string, unknown>;

interface Paging {
  table: string;
  pk: string;
  columns?: readonly string[];
  where?: (q: Knex.QueryBuilder) => void;
  /** Applied to each row after reading (drops columns that must not travel). */
  map?: (row: Row) => Row;
}

export async function* pagedRows(db: Knex, p: Paging): AsyncGenerator<Row> {
  let last: unknown;
  for (;;) {
    const q = db(p.table).select(p.columns ? [...p.columns] : '*').orderBy(p.pk, 'asc').limit(PAGE);
    if (p.where) q.where((b) => { p.where!(b); });
    if (last !== undefined) q.where(p.pk, '>', last as string);
    const rows = (await q) as Row[];
    for (const r of rows) yield p.map ? p.map(r) : r;
    if (rows.length < PAGE) return;
    last = rows[rows.length - 1][p.pk];
  }
}

/** Central table and key of every `syncfile.ini` key (format 2: all rows, soft-deleted ones included). */
const SOURCES: Record<ContentKey, Paging> = {
  curriculums: { table: 'curriculums', pk: 'curriculumid' },
  // Deleted baselines stay behind: the classroom would otherwise offer a test that no longer exists.
  curriculumbaselines: {
    table: 'curriculumbaseline',
    pk: 'curriculumbaselineid',
    where: (q) => q.where('isdeleted', false),
  },
  baselinequestion: { table: 'baselinequestion', pk: 'baselinequestionid' },
  grades: { table: 'grades', pk: 'gradeid' },
  levels: { table: 'levels', pk: 'levelid' },
  lessons: { table: 'lessons', pk: 'lessonid' },
  lessonlearnings: { table: 'lessonlearnings', pk: 'lessonlearningid' },
  lessonpractices: { table: 'lessonpractices', pk: 'lessonpracticeid' },
  lessonpracticequestions: { table: 'lessonpracticequestions', pk: 'lessonpracticequestionid' },
  lessonquizzes: { table: 'lessonquizzes', pk: 'lessonquizid' },
  lessonquizquestions: { table: 'lessonquizquestions', pk: 'lessonquizquestionid' },
  levelquizquestions: { table: 'levelquizquestions', pk: 'levelquizquestionid' },
  questions: { table: 'questions', pk: 'questionid' },
  documents: { table: 'documents', pk: 'documentid' },
  standards: { table: 'standards', pk: 'standardid' },
  schools: { table: 'schools', pk: 'schoolid' },
  countries: { table: 'countries', pk: 'countryid' },
  lessonplans: { table: 'lessonplans', pk: 'lessonplanid' },
  subjects: { table: 'subjects', pk: 'subjectid' },
};

/** An assessment's `schoolid` list as stored (parsed already, or JSON text). */
function schoolList(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/**
 * The source of one key for a caller. A narrowed caller (a school's teacher, a narrowed staff account)
 * gets its schools, their classes and countries, and the curriculum content offered in those countries
 * (curriculumcountry) with everything below it, as the curriculum routes admit; an assessment names only
 * the caller's schools. The question bank, media rows and subjects are shared by every country and travel
 * whole. A whole-system caller (the sync key, the API key, an unnarrowed account) gets everything.
 */
function sourceFor(db: Knex, key: ContentKey, scope: Scope): Paging {
  const p = SOURCES[key];
  if (scope.all) return p;
  const curricula = () => db('curriculumcountry').whereIn('countryid', [...scope.countryids]).select('curriculumid');
  const grades = () => db('grades').whereIn('curriculumid', curricula()).select('gradeid');
  const levels = () => db('levels').whereIn('gradeid', grades()).select('levelid');
  const lessons = () => db('lessons').whereIn('levelid', levels()).select('lessonid');
  const baselines = () => db('curriculumbaseline').whereIn('curriculumid', curricula()).select('curriculumbaselineid');
  const under = (table: string, id: string) => () => db(table).whereIn('lessonid', lessons()).select(id);
  const narrowings: Partial<Record<ContentKey, (q: Knex.QueryBuilder) => void>> = {
    schools: (q) => q.whereIn('schoolid', [...scope.schoolids]),
    standards: (q) => q.where((b) => {
      b.whereIn('schoolid', [...scope.schoolids])
        .orWhere((c) => { c.whereNull('schoolid').whereIn('schoolname', [...scope.schoolnames]); });
    }),
    countries: (q) => q.whereIn('countryid', [...scope.countryids]),
    curriculums: (q) => q.whereIn('curriculumid', curricula()),
    curriculumbaselines: (q) => q.whereIn('curriculumid', curricula()),
    baselinequestion: (q) => q.whereIn('curriculumbaselineid', baselines()),
    grades: (q) => q.whereIn('curriculumid', curricula()),
    levels: (q) => q.whereIn('gradeid', grades()),
    lessons: (q) => q.whereIn('levelid', levels()),
    lessonlearnings: (q) => q.whereIn('lessonid', lessons()),
    lessonplans: (q) => q.whereIn('lessonid', lessons()),
    lessonpractices: (q) => q.whereIn('lessonid', lessons()),
    lessonquizzes: (q) => q.whereIn('lessonid', lessons()),
    lessonpracticequestions: (q) => q.whereIn('lessonpracticeid', under('lessonpractices', 'lessonpracticeid')()),
    lessonquizquestions: (q) => q.whereIn('lessonquizid', under('lessonquizzes', 'lessonquizid')()),
    levelquizquestions: (q) => q.whereIn('levelid', levels()),
  };
  const narrow = narrowings[key];
  if (!narrow) return p;
  const also = p.where;
  const own = new Set(scope.schoolids);
  // An assessment's school list names other schools too: the caller reads only its own of them.
  const map =
    key !== 'curriculumbaselines'
      ? p.map
      : (row: Row): Row => {
          const kept = schoolList(row.schoolid).filter((id) => typeof id === 'string' && own.has(id));
          // As stored: a JSON text on SQLite, an array on PostgreSQL.
          const stored = row.schoolid;
          const schoolid =
            stored === undefined || stored === null ? stored : typeof stored === 'string' ? JSON.stringify(kept) : kept;
          return { ...(p.map ? p.map(row) : row), ...(row.schoolid === undefined ? {} : { schoolid }) };
        };
  return {
    ...p,
    map,
    where: (q) => {
      if (also) also(q);
      narrow(q);
    },
  };
}

/** Passes rows through, counting them (how many rows a package carried, for the sync-status report). */
async function* counted(rows: AsyncGenerator<Row>, counter: { rows: number }): AsyncGenerator<Row> {
  for await (const r of rows) {
    counter.rows += 1;
    yield r;
  }
}

/**
 * The curriculum package (contract B, format 2, 19 keys): what `GET /sync/content` serves and `POST /sync/cloud`
 * pushes. `counter.rows` counts the rows written into it.
 */
export function contentPackage(db: Knex, scope: Scope, counter: { rows: number } = { rows: 0 }): Readable {
  const content = {} as Record<ContentKey, RowSource>;
  for (const key of CONTENT_KEY_LIST) content[key] = counted(pagedRows(db, sourceFor(db, key, scope)), counter);
  return writeContentZip(content);
}

/**
 * Records content sent towards classrooms (GET /report/syncstatus): `schoolid` null for a curriculum push
 * to the classroom server, which serves every school on it.
 */
export async function recordContentPush(
  db: Knex,
  o: {
    kind: 'content' | 'students' | 'download';
    schoolid: string | null;
    rowcount: number;
    by: { id: string | null; name: string | null };
  },
): Promise<void> {
  await db('contentpushes').insert({
    contentpushid: crypto.randomUUID(),
    kind: o.kind,
    schoolid: o.schoolid,
    rowcount: o.rowcount,
    created_by: o.by.id,
    created_by_name: o.by.name,
    created_at: new Date(),
  });
}

/** The keys of the older format (`GET /sync`), in their order. */
const LEGACY_KEYS = [
  'curriculums',
  'curriculumbaselines',
  'grades',
  'levels',
  'lessons',
  'lessonlearnings',
  'lessonpractices',
  'lessonpracticequestions',
  'lessonquizzes',
  'lessonquizquestions',
  'levelquizquestions',
  'questions',
  'documents',
  'standards',
  'schools',
  'countries',
] as const satisfies readonly ContentKey[];

/**
 * The older app's package (`GET /sync`, 16 keys): baselines limited to the global ones (no `created_by`)
 * and to three columns; level-quiz questions without `lessonid`. A classroom import refuses it (keys missing).
 */
export function legacyContentPackage(db: Knex, scope: Scope): Readable {
  const doc: Record<string, RowSource> = {};
  for (const key of LEGACY_KEYS) doc[key] = pagedRows(db, sourceFor(db, key, scope));
  const baselines = sourceFor(db, 'curriculumbaselines', scope);
  doc.curriculumbaselines = pagedRows(db, {
    table: 'curriculumbaseline',
    pk: 'curriculumbaselineid',
    columns: ['curriculumbaselineid', 'curriculumid', 'baselineid'],
    where: (q) => { baselines.where?.(q); q.whereNull('created_by'); },
  });
  doc.levelquizquestions = pagedRows(db, {
    ...sourceFor(db, 'levelquizquestions', scope),
    map: ({ lessonid: _lessonid, ...rest }) => rest,
  });
  return jsonZip(SYNCFILE_INI, doc, LEGACY_KEYS);
}

/** A JSON value whose arrays may be row sources paged out of the database. */
export type JsonDoc = RowSource | { [key: string]: JsonDoc };

const isRows = (v: JsonDoc): v is RowSource => Array.isArray(v) || Symbol.asyncIterator in v;

/** A one-entry ZIP of a JSON object whose values are row sources or nested objects of them, written as it is read. */
export function jsonZip(
  name: string,
  doc: { [key: string]: JsonDoc },
  keys: readonly string[] = Object.keys(doc),
): Readable {
  async function* encode(): AsyncGenerator<Buffer> {
    let buffer = '';
    async function* flush(force = false): AsyncGenerator<Buffer> {
      if (buffer && (force || buffer.length >= 64 * 1024)) {
        yield Buffer.from(buffer);
        buffer = '';
      }
    }
    async function* value(v: JsonDoc): AsyncGenerator<Buffer> {
      if (isRows(v)) {
        buffer += '[';
        let i = 0;
        for await (const row of v) {
          buffer += (i ? ',' : '') + JSON.stringify(row);
          i += 1;
          yield* flush();
        }
        buffer += ']';
        return;
      }
      const ks = Object.keys(v);
      buffer += '{';
      for (let k = 0; k < ks.length; k += 1) {
        buffer += `${k ? ',' : ''}${JSON.stringify(ks[k])}:`;
        yield* value(v[ks[k]]);
      }
      buffer += '}';
    }
    const ordered: { [key: string]: JsonDoc } = {};
    for (const k of keys) ordered[k] = doc[k];
    yield* value(ordered);
    yield* flush(true);
  }
  return singleEntryZip(name, Readable.from(encode()));
}

/**
 * Runs `read` on one consistent snapshot where the database offers one cheaply (PostgreSQL: a read-only
 * repeatable-read transaction), so that a package built while an author edits never pairs a practice with
 * a lesson that vanished between two pages. SQLite reads directly: a transaction there would hold its one
 * connection and stall every other request while the package is written.
 */
export async function onSnapshot<T>(db: Knex, read: (q: Knex) => Promise<T>): Promise<T> {
  const client = String((db.client as { config?: { client?: unknown } }).config?.client ?? '');
  if (client === 'pg' || client === 'postgres' || client === 'postgresql') {
    return db.transaction((trx) => read(trx), { isolationLevel: 'repeatable read', readOnly: true });
  }
  return read(db);
}

/** Writes a package to a temporary file (the push sends it from disk, with its length, and can send it again). */
export async function packageToTempFile(stream: Readable): Promise<{ path: string; dispose: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-sync-'));
  const file = path.join(dir, 'importfile.zip');
  const dispose = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    await streamToFile(stream, file);
    return { path: file, dispose };
  } catch (err) {
    dispose();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Rosters (contract C)

/** A school user row with its learner row nested as `student` (the shape of `students.ini`). */
export type RosterItem = Row & { student: Row };

/** The hash stays on the server except in the roster the classroom needs to let learners sign in. */
export const withoutHash = ({ schooluserpasswordhash: _hash, ...rest }: Row): Row => rest;

async function studentsOf(db: Knex, schooluserids: string[], schoolname?: string): Promise<Map<string, Row>> {
  const q = db('students').whereIn('schooluserid', schooluserids).orderBy('studentid');
  if (schoolname !== undefined) q.where('schoolname', schoolname);
  const byUser = new Map<string, Row>();
  for (const s of (await q) as Row[])
    if (!byUser.has(s.schooluserid as string)) byUser.set(s.schooluserid as string, s);
  return byUser;
}

/**
 * The learners of a school as the classroom roster wants them: active school users (`schooluserstatus`)
 * with a learner row of that school. Soft-deleted ones are included on purpose, so that `isdeleted`
 * reaches the classroom and its sign-in refuses them. Teacher accounts with a learner row only when asked.
 */
export async function schoolRoster(
  db: Knex,
  schoolname: string,
  o: { teacherAccounts: boolean; hash: boolean },
): Promise<RosterItem[]> {
  const users = (await db('schoolusers')
    .where('schooluserstatus', true)
    .whereIn('schooluserid', db('students').select('schooluserid').where('schoolname', schoolname))
    .orderBy('schooluserid')) as Row[];
  const out: RosterItem[] = [];
  for (let i = 0; i < users.length; i += PAGE) {
    const page = users.slice(i, i + PAGE);
    const students = await studentsOf(db, page.map((u) => u.schooluserid as string), schoolname);
    for (const u of page) {
      const student = students.get(u.schooluserid as string);
      if (!student) continue;
      if (!o.teacherAccounts && student.is_teacher_acc === true) continue;
      out.push({ ...(o.hash ? u : withoutHash(u)), student });
    }
  }
  return out;
}

/** The progress rows of the given learners, under the keys `students.ini` uses. */
export async function rosterProgress(db: Knex, studentids: string[]): Promise<Record<string, Row[]>> {
  const tables: Array<[string, string, string]> = [
    ['studentprogress', 'studentprogress', 'studentprogressid'],
    ['studentgradesprogress', 'studentgradesprogress', 'studentgradeprogressid'],
    ['studentlearningprogress', 'studentlearningsprogress', 'studentlearningprogressid'],
    ['studentlessonsprogress', 'studentlessonsprogress', 'studentlessonprogressid'],
    ['studentlevelsprogress', 'studentlevelsprogress', 'studentlevelprogressid'],
  ];
  const out: Record<string, Row[]> = {};
  for (const [key, table, pk] of tables) {
    out[key] = [];
    for (let i = 0; i < studentids.length; i += PAGE) {
      out[key].push(...((await db(table).whereIn('studentid', studentids.slice(i, i + PAGE)).orderBy(pk)) as Row[]));
    }
  }
  return out;
}

/**
 * Teacher school users (role 3) of a school, without their hash unless asked: the roster push carries it so
 * that a teacher signs in on the classroom server with the password central holds.
 */
export async function schoolTeachers(
  db: Knex,
  schoolname: string,
  o: { hash: boolean } = { hash: false },
): Promise<Row[]> {
  const rows = (await db('schoolusers').where({ schoolname, schooluserrole: 3 }).orderBy('schooluserid')) as Row[];
  return o.hash ? rows : rows.map(withoutHash);
}

/** The id of a school user's school (by the name the account carries), if that school exists. */
export async function schoolOfSchoolUser(db: Knex, schooluserid: string): Promise<string | undefined> {
  const row = await db('schoolusers as u')
    .join('schools as sc', 'sc.schoolname', 'u.schoolname')
    .where('u.schooluserid', schooluserid)
    .first('sc.schoolid');
  return row?.schoolid as string | undefined;
}

export async function schoolExists(db: Knex, schoolname: string): Promise<boolean> {
  return !!(await db('schools').where('schoolname', schoolname).first('schoolid'));
}

// ---------------------------------------------------------------------------------------------
// Report data (server-to-server pull, API key only)

const REPORT_CONTENT_KEYS = [
  'curriculums',
  'curriculumbaselines',
  'baselinequestion',
  'grades',
  'levels',
  'lessons',
  'lessonlearnings',
  'lessonpractices',
  'lessonpracticequestions',
  'lessonquizzes',
  'lessonquizquestions',
  'levelquizquestions',
  'questions',
  'documents',
  'standards',
  'schools',
  'countries',
] as const satisfies readonly ContentKey[];

/** Every school user with its learner row (when it has one), without the hash. */
async function* schoolUsersWithStudent(db: Knex): AsyncGenerator<Row> {
  let page: Row[] = [];
  const emit = async function* (): AsyncGenerator<Row> {
    const students = await studentsOf(db, page.map((u) => u.schooluserid as string));
    for (const u of page) {
      const student = students.get(u.schooluserid as string);
      yield student ? { ...withoutHash(u), student } : withoutHash(u);
    }
    page = [];
  };
  for await (const u of pagedRows(db, { table: 'schoolusers', pk: 'schooluserid' })) {
    page.push(u);
    if (page.length >= PAGE) yield* emit();
  }
  if (page.length) yield* emit();
}

/**
 * Attempts with their answered questions nested (`studentprogressquestions`
 * absent when there are none, as the log format has it).
 */
async function* resultsSince(db: Knex, since: string): AsyncGenerator<Row> {
  let page: Row[] = [];
  const emit = async function* (): AsyncGenerator<Row> {
    const questions = (await db('studentprogressquestions')
      .whereIn('studentprogressid', page.map((r) => r.studentprogressid as string))
      .orderBy('studentprogressquestionid')) as Row[];
    const byAttempt = new Map<string, Row[]>();
    for (const q of questions) {
      const list = byAttempt.get(q.studentprogressid as string) ?? [];
      list.push(q);
      byAttempt.set(q.studentprogressid as string, list);
    }
    for (const r of page) {
      const qs = byAttempt.get(r.studentprogressid as string);
      yield qs ? { ...r, studentprogressquestions: qs } : r;
    }
    page = [];
  };
  for await (const r of pagedRows(db, {
    table: 'studentprogress',
    pk: 'studentprogressid',
    where: (q) => q.where('starttime', '>', since),
  })) {
    page.push(r);
    if (page.length >= PAGE) yield* emit();
  }
  if (page.length) yield* emit();
}

/** Six calendar months before `now`, the window the log export uses too. */
export function sixMonthsBefore(now: Date): string {
  const d = new Date(now);
  d.setUTCMonth(d.getUTCMonth() - 6);
  return d.toISOString();
}

/**
 * `GET /sync/report-data`: content, every school user with its learner row, and the last six months of
 * activity, in one `syncfile.ini`. Password hashes are left out: no importer of this file signs anyone in.
 */
export function reportDataPackage(db: Knex, now = new Date()): Readable {
  const since = sixMonthsBefore(now);
  const contents: { [key: string]: JsonDoc } = {};
  for (const key of REPORT_CONTENT_KEYS) contents[key] = pagedRows(db, SOURCES[key]);
  contents.feedbacks = pagedRows(db, { table: 'feedbacks', pk: 'feedbackid' });
  contents.schoolcontribution = pagedRows(db, { table: 'schoolcontributedata', pk: 'schoolcontributeid' });
  contents.lessonplans = pagedRows(db, SOURCES.lessonplans);
  const after = (column: string) => (q: Knex.QueryBuilder) => q.where(column, '>', since);
  return jsonZip(SYNCFILE_INI, {
    contents,
    students: schoolUsersWithStudent(db),
    studentprogress: {
      studentactives: pagedRows(db, { table: 'studentactives', pk: 'studentactiveid', where: after('created_at') }),
      studentlearningprogress: pagedRows(db, {
        table: 'studentlearningsprogress',
        pk: 'studentlearningprogressid',
        where: after('lastupdated'),
      }),
      studentgradesprogress: pagedRows(db, {
        table: 'studentgradesprogress',
        pk: 'studentgradeprogressid',
        where: after('lastupdated'),
      }),
      studentlevelsprogress: pagedRows(db, {
        table: 'studentlevelsprogress',
        pk: 'studentlevelprogressid',
        where: after('lastupdated'),
      }),
      studentlessonsprogress: pagedRows(db, {
        table: 'studentlessonsprogress',
        pk: 'studentlessonprogressid',
        where: after('lastupdated'),
      }),
      studentpoints: pagedRows(db, { table: 'studentpoints', pk: 'studentpointid', where: after('created_at') }),
      studentappusages: pagedRows(db, {
        table: 'studentappusages',
        pk: 'studentappusageid',
        where: after('created_at'),
      }),
    },
    studentresult: resultsSince(db, since),
    studentaccess: pagedRows(db, { table: 'rpiuseraccess', pk: 'rpiuseraccessid', where: after('logintime') }),
  });
}
