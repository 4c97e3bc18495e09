import { BatchWriteError, rowsPerStatement, type Knex } from '@lms/db';
import { httpError, minimisedForBox } from '@lms/shared';
import {
  CONTENT_COLUMNS,
  CONTENT_KEYS,
  LOG_COLUMNS,
  ROSTER_COLUMNS,
  ROSTER_MERGE_COLUMNS,
  ROSTER_PROGRESS_KEYS,
  normaliseRow,
  type ColumnSpec,
  type ContentKey,
  type ContentPackage,
  type ContentTable,
  type RosterProgressKey,
  type SchoolUserRow,
  type StudentsPackage,
} from '@lms/shared';

type Row = Record<string, unknown>;

/** JSON columns are written as text on both dialects (the knex layer parses them back on read). */
function forWrite(spec: ColumnSpec, row: Row): Row {
  const out: Row = {};
  for (const [column, value] of Object.entries(row)) {
    out[column] = spec[column] === 'json' && value !== null && value !== undefined ? JSON.stringify(value) : value;
  }
  return out;
}

/**
 * Insert-or-update by primary key, in batches. Rows are grouped by their set of columns (a multi-row
 * INSERT on SQLite would turn a missing column into NULL instead of its default) and de-duplicated by key
 * (PostgreSQL refuses to touch one row twice in a statement; the last occurrence wins, as sequential
 * upserts would). `merge` limits what an existing row gets overwritten with. Each statement carries as
 * many rows as the database takes in one (rowsPerStatement); a failure names the table and the batch's
 * size, never the statement.
 */
export async function upsertRows(
  trx: Knex,
  table: string,
  pk: string,
  spec: ColumnSpec,
  rows: Row[],
  merge?: readonly string[],
): Promise<void> {
  if (rows.length === 0) return;
  const byKey = new Map<unknown, Row>();
  for (const r of rows) byKey.set(r[pk], forWrite(spec, r));
  const groups = new Map<string, Row[]>();
  for (const r of byKey.values()) {
    const signature = Object.keys(r).sort().join(',');
    const g = groups.get(signature);
    if (g) g.push(r);
    else groups.set(signature, [r]);
  }
  for (const group of groups.values()) {
    const columns = Object.keys(group[0]);
    const update = columns.filter((c) => c !== pk && (!merge || merge.includes(c)));
    const size = rowsPerStatement(trx, columns.length);
    for (let i = 0; i < group.length; i += size) {
      const batch = group.slice(i, i + size);
      const q = trx(table).insert(batch).onConflict(pk);
      try {
        await (update.length ? q.merge(update) : q.ignore());
      } catch (err) {
        throw new BatchWriteError(table, batch.length, columns.length, err);
      }
    }
  }
}

const pkOf = (table: ContentTable): string => Object.keys(CONTENT_COLUMNS[table])[0];

/** Content tables that no learner row points at: emptied and refilled, children first. */
const REFILLED: ContentTable[] = [
  'lessonquizquestions',
  'lessonpracticequestions',
  'levelquizquestions',
  'baselinequestion',
  'lessonquizzes',
  'lessonpractices',
  'lessonlearnings',
  'lessonplans',
  'curriculumbaseline',
  'questions',
  'documents',
  'standards',
  'schools',
  'countries',
  'subjects',
];

/**
 * Learners point at these (students.gradeid, startinglevelid, studentcurrentlevelid, studentcurrentlessonid): upserted,
 * then pruned.
 */
const PRUNED: ContentTable[] = ['lessons', 'levels', 'grades'];

/** Parents before children (contract B.3, with the foreign-key order fixed as the newest original does). */
const UPSERT_ORDER: ContentKey[] = [
  'documents',
  'questions',
  'curriculums',
  'curriculumbaselines',
  'grades',
  'levels',
  'lessons',
  'countries',
  'schools',
  'standards',
  'lessonlearnings',
  'lessonquizzes',
  'lessonpractices',
  'lessonpracticequestions',
  'lessonquizquestions',
  'levelquizquestions',
  'baselinequestion',
  'lessonplans',
  'subjects',
];

/**
 * Applies a curriculum package in one transaction so that the content tables end equal to the payload
 * (curriculums are only ever upserted) and learner rows are untouched. Instead of switching foreign-key
 * checks off as the original does, rows are ordered so that every check holds at every step: a package
 * that would leave a learner pointing at a grade, level or lesson it no longer contains fails as a whole.
 */
export async function applyContent(db: Knex, pkg: ContentPackage): Promise<Record<ContentKey, number>> {
  return db.transaction(async (trx) => {
    for (const table of REFILLED) await trx(table).del();
    for (const key of UPSERT_ORDER) {
      const table = CONTENT_KEYS[key];
      await upsertRows(trx, table, pkOf(table), CONTENT_COLUMNS[table], pkg[key] as Row[]);
    }
    const keyOf: Record<string, ContentKey> = { lessons: 'lessons', levels: 'levels', grades: 'grades' };
    const goneOf = new Map<ContentTable, string[]>();
    for (const table of PRUNED) {
      const pk = pkOf(table);
      const keep = new Set((pkg[keyOf[table]] as Row[]).map((r) => r[pk]));
      const existing: string[] = (await trx(table).select(pk)).map((r: Row) => r[pk] as string);
      goneOf.set(table, existing.filter((id) => !keep.has(id)));
    }
    await refuseDroppingLearnersPlaces(trx, goneOf);
    for (const table of PRUNED) {
      const gone = goneOf.get(table) ?? [];
      for (let i = 0; i < gone.length; i += 500) await trx(table).whereIn(pkOf(table), gone.slice(i, i + 500)).del();
    }
    const counts = Object.entries(pkg).map(([k, rows]) => [k, (rows as Row[]).length]);
    return Object.fromEntries(counts) as Record<ContentKey, number>;
  });
}

/** The learner columns that name a grade, level or lesson (students.*). */
const LEARNER_PLACES: Record<string, string[]> = {
  lessons: ['studentcurrentlessonid'], levels: ['studentcurrentlevelid', 'startinglevelid'], grades: ['gradeid'],
};
const SINGULAR: Record<string, string> = { lessons: 'lesson', levels: 'level', grades: 'grade' };
const LISTED = 20;

/**
 * A package that removes a grade, level or lesson a learner is on is refused whole, naming them: moving a
 * learner elsewhere is a teacher's decision, and the original (which never removes content on a box) gives no
 * rule for it. Central keeps such content (unpublished, not deleted) until no learner is on it.
 */
async function refuseDroppingLearnersPlaces(trx: Knex, goneOf: Map<ContentTable, string[]>): Promise<void> {
  const found: string[] = [];
  let more = 0;
  for (const [table, gone] of goneOf) {
    for (let i = 0; i < gone.length; i += 500) {
      const part = gone.slice(i, i + 500);
      const rows: Row[] = await trx('students').join('schoolusers', 'schoolusers.schooluserid', 'students.schooluserid')
        .where((w) => { for (const c of LEARNER_PLACES[table]) w.orWhereIn(`students.${c}`, part); })
        .select('schoolusers.schoolusername', ...LEARNER_PLACES[table].map((c) => `students.${c}`))
        .orderBy('schoolusers.schoolusername');
      const byPlace = new Map<string, string[]>();
      for (const r of rows) {
        for (const c of LEARNER_PLACES[table]) {
          const id = r[c] as string;
          if (!part.includes(id)) continue;
          const list = byPlace.get(id) ?? [];
          if (!list.includes(r.schoolusername as string)) list.push(r.schoolusername as string);
          byPlace.set(id, list);
        }
      }
      for (const [id, learners] of byPlace) {
        if (found.length < LISTED) found.push(`${SINGULAR[table]} ${id} (${learners.join(', ')})`);
        else more += 1;
      }
    }
  }
  if (!found.length) return;
  const list = found.join('; ') + (more ? `; and ${more} more` : '');
  throw httpError(409, `Invalid file: the package removes content that learners are on; move them first: ${list}`);
}

/**
 * A roster names schools and curriculums that the content push brings: without them its learners would point at
 * nothing, so it is refused naming what is missing and what to do.
 */
async function refuseRosterWithoutContent(trx: Knex, pkg: StudentsPackage): Promise<void> {
  const names = new Set<string>();
  const curriculums = new Set<string>();
  for (const { schooluser, student } of pkg.studentusers) {
    for (const n of [schooluser.schoolname, student?.schoolname]) if (typeof n === 'string' && n) names.add(n);
    if (typeof student?.curriculumid === 'string' && student.curriculumid) curriculums.add(student.curriculumid);
  }
  const lower = [...names].map((n) => n.toLowerCase());
  const held = new Set<string>();
  for (let i = 0; i < lower.length; i += 500) {
    const part = lower.slice(i, i + 500);
    const lowered = trx.raw('lower(schoolname)') as unknown as string;
    const rows = await trx('schools').whereIn(lowered, part).select('schoolname');
    for (const r of rows) held.add(String(r.schoolname).toLowerCase());
  }
  const missingSchools = [...names].filter((n) => !held.has(n.toLowerCase()));
  const ids = [...curriculums];
  const heldCurriculums = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx('curriculums').whereIn('curriculumid', ids.slice(i, i + 500)).select('curriculumid');
    for (const r of rows) heldCurriculums.add(r.curriculumid);
  }
  const missingCurriculums = ids.filter((id) => !heldCurriculums.has(id));
  if (!missingSchools.length && !missingCurriculums.length) return;
  const what = [
    ...(missingSchools.length ? [`school ${missingSchools.slice(0, LISTED).join(', ')}`] : []),
    ...(missingCurriculums.length ? [`curriculum ${missingCurriculums.slice(0, LISTED).join(', ')}`] : []),
  ].join(' and ');
  throw httpError(409, `This classroom server does not have ${what}: push the content first`);
}

const STUDENT_ROLE = 4;
const TEACHER_ROLE = 3;

function schoolUserForWrite(u: SchoolUserRow, role: number | undefined): Row {
  const row: Row = { ...u };
  if (role !== undefined) row.schooluserrole = role;
  else if (row.schooluserrole === undefined || row.schooluserrole === null) row.schooluserrole = STUDENT_ROLE;
  return row;
}

const hasHash = (r: Row): boolean => typeof r.schooluserpasswordhash === 'string' && r.schooluserpasswordhash !== '';

/**
 * The hash travels verbatim. A roster row without one (an export uploaded by hand) creates an account
 * that cannot sign in yet, and never blanks the password of an account that already exists.
 */
async function upsertSchoolUsers(trx: Knex, rows: Row[]): Promise<void> {
  const merge = ROSTER_MERGE_COLUMNS.schoolusers;
  await upsertRows(trx, 'schoolusers', 'schooluserid', ROSTER_COLUMNS.schoolusers, rows.filter(hasHash), merge);
  const without = rows.filter((r) => !hasHash(r)).map((r) => ({ ...r, schooluserpasswordhash: '' }));
  await upsertRows(
    trx,
    'schoolusers',
    'schooluserid',
    ROSTER_COLUMNS.schoolusers,
    without,
    merge.filter((c) => c !== 'schooluserpasswordhash'),
  );
}

/** Not-null text columns of students that central may leave empty. */
const STUDENT_TEXT_DEFAULTS = ['city', 'country', 'state'] as const;

/** Roster of learners (contract C): school users, their students rows and optional progress, in one transaction. */
export async function applyStudents(
  db: Knex,
  pkg: StudentsPackage,
): Promise<{ schoolusers: number; students: number }> {
  return db.transaction(async (trx) => {
    await refuseRosterWithoutContent(trx, pkg);
    await upsertSchoolUsers(
      trx,
      pkg.studentusers.map((s) => schoolUserForWrite(s.schooluser, undefined)),
    );
    const students = pkg.studentusers.map(({ student }) => {
      // Whatever the sender (an older central, a hand-made file), the box does not keep what it never uses.
      const row: Row = minimisedForBox({ ...student });
      for (const c of STUDENT_TEXT_DEFAULTS) if (row[c] === null || row[c] === undefined) row[c] = '';
      if (row.genderid === null || row.genderid === undefined) row.genderid = 0;
      return row;
    });
    await upsertRows(trx, 'students', 'studentid', ROSTER_COLUMNS.students, students, ROSTER_MERGE_COLUMNS.students);
    for (const key of Object.keys(ROSTER_PROGRESS_KEYS) as RosterProgressKey[]) {
      const raw = pkg.studentprogresses?.[key];
      if (!raw?.length) continue;
      const table = ROSTER_PROGRESS_KEYS[key];
      const spec: ColumnSpec = LOG_COLUMNS[table];
      const pk = Object.keys(spec)[0];
      // Like the log merge, but a roster never overwrites the learner's earned scores.
      const merge = Object.keys(spec).filter((c) => c !== pk && c !== 'scores');
      await upsertRows(
        trx,
        table,
        pk,
        spec,
        raw.map((r) => normaliseRow(table, spec, r) as Row),
        merge,
      );
    }
    return { schoolusers: pkg.studentusers.length, students: students.length };
  });
}

/** Roster of teachers (contract C): every row becomes a teacher account (role 3), whatever it says. */
export async function applyTeachers(db: Knex, rows: SchoolUserRow[]): Promise<number> {
  await db.transaction(async (trx) => {
    await upsertSchoolUsers(trx, rows.map((r) => schoolUserForWrite(r, TEACHER_ROLE)));
  });
  return rows.length;
}
