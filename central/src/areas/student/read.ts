import { readRows, whereContains, whereJsonArrayHasAny, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { uuidParam } from '../../auth/validation';
import { classroomClientOf } from '../../classroom-client';
import {
  applyFilters,
  filterValues,
  pageEnvelope,
  pageOf,
  pagingBody,
  whereEach,
  type Paging,
} from '../../http/paging';
import { applyScope, type Scope } from '../../http/scope';
import { toDmy, WG } from './fields';

export const INVALID_STUDENT = 'Invalid student id';
export const studentParams = uuidParam('studentid', 'must be a valid GUID');
export const schooluserParams = uuidParam('schooluserid', 'must be a valid GUID');
export const studentListBody = pagingBody(
  [
    'studentfirstname',
    'schoolname',
    'mothername',
    'fathername',
    'city',
    'country',
    'state',
    'standard',
    'schooluser.schoolusername',
    'schooltype',
    'curriculum.curriculumname',
  ],
  { maxFilters: 6, exact: ['standard'] },
);

type Row = Record<string, unknown>;
type ClassroomConfig = { rpiCloud: string; serverSyncKey: string };

// The school user's columns a learner row carries (no hash; its school and id are the learner's own).
const SCHOOLUSER_COLUMNS = [
  'schoolusername',
  'schooluserrole',
  'schooluserstatus',
  'isdisabled',
  'isdeleted',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
  'deleted_at',
  'deleted_by',
] as const;
// The curriculum's columns (its id, status, description and deletion flag are left out, as in the original).
const CURRICULUM_COLUMNS = [
  'curriculumname',
  'subjectid',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
  'deleted_at',
  'deleted_by',
] as const;

/** How long a list waits for the classroom server's sign-in times before it answers with central's own. */
const CLASSROOM_LOGIN_TIMEOUT_MS = 2000;

const later = (a: unknown, b: unknown): string | null => {
  const ta = a ? new Date(String(a)).getTime() : Number.NaN;
  const tb = b ? new Date(String(b)).getTime() : Number.NaN;
  if (Number.isNaN(ta) && Number.isNaN(tb)) return null;
  if (Number.isNaN(tb) || ta >= tb) return new Date(ta).toISOString();
  return new Date(tb).toISOString();
};

/**
 * The last sign-in of each school user: the latest of the rows central holds (brought by activity
 * logs) and of the classroom server's own (`POST /student/logintime`). The classroom's answer only
 * adds: when it is down or slow the list answers with central's times.
 */
export async function lastLogins(db: Knex, config: ClassroomConfig, userids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!userids.length) return out;
  const remote = classroomClientOf(config, {
    attempts: 1,
    totalTimeoutMs: CLASSROOM_LOGIN_TIMEOUT_MS,
    idleTimeoutMs: CLASSROOM_LOGIN_TIMEOUT_MS,
  })
    .postJson('student/logintime', userids)
    .then((a) =>
      Array.isArray((a.body as { data?: unknown })?.data)
        ? (a.body as { data: Array<{ userid?: unknown; logintime?: unknown }> }).data
        : [],
    )
    .catch(() => []);
  const local = await readRows<{ userid: string; last: unknown }>(
    db('rpiuseraccess').whereIn('userid', userids).groupBy('userid').select('userid').max({ last: 'logintime' }),
  );
  for (const r of local) {
    const t = later(r.last, null);
    if (t) out.set(r.userid, t);
  }
  const wanted = new Set(userids);
  for (const r of await remote) {
    if (typeof r.userid !== 'string' || !wanted.has(r.userid)) continue;
    const t = later(r.logintime, out.get(r.userid));
    if (t) out.set(r.userid, t);
  }
  return out;
}

/** The names of every curriculum of `ids`, in one query. */
async function curriculumRows(db: Knex, ids: Iterable<unknown>): Promise<Map<string, Row>> {
  const unique = [...new Set([...ids].filter((x): x is string => typeof x === 'string'))];
  if (!unique.length) return new Map();
  const rows = await readRows<Row>(
    db('curriculums')
      .whereIn('curriculumid', unique)
      .select('curriculumid', ...CURRICULUM_COLUMNS),
  );
  return new Map(rows.map((r) => [String(r.curriculumid), r]));
}

const idsOf = (r: Row): string[] =>
  Array.isArray(r.curriculumids) && r.curriculumids.length
    ? (r.curriculumids as string[])
    : r.curriculumid
      ? [String(r.curriculumid)]
      : [];

/** `curriculum.curriculumname` filter: a learner matches when, for every text, a curriculum it studies contains it. */
function whereStudiesCurriculumNamed(db: Knex, q: Knex.QueryBuilder, texts: readonly string[]): void {
  whereEach(q, texts, false, (w, part) => {
    const named = whereContains(db('curriculums').select('curriculumid'), 'curriculumname', part);
    w.whereIn('s.curriculumid', named.clone());
    whereJsonArrayHasAny(w, 's.curriculumids', named.clone(), true);
  });
}

/**
 * The Students page: live learners by school then first name, each flattened as the original sends it
 * (`schooluser.<col>` and `curriculum.<col>` keys, `curriculum.curriculumname` every curriculum the
 * learner studies, `class`, `lastlogin`). Five queries whatever the page size.
 */
export async function listStudents(db: Knex, config: ClassroomConfig, scope: Scope, body: Paging) {
  const base = db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .where('s.isdeleted', false);
  const filters = body.filter ?? [];
  applyFilters(
    base,
    { ...body, filter: filters.filter((f) => f.key !== 'curriculum.curriculumname') },
    (k) => (k === 'schooluser.schoolusername' ? 'u.schoolusername' : `s.${k}`),
    false,
    ['standard'],
  );
  for (const f of filters)
    if (f.key === 'curriculum.curriculumname') whereStudiesCurriculumNamed(db, base, filterValues(f.value));
  applyScope(base, scope, { schoolname: 's.schoolname' });
  const total = Number((await base.clone().count({ n: '*' }).first())?.n ?? 0);
  const { limit, offset } = pageOf(body);
  const rows = await readRows<Row>(
    base.clone().leftJoin('standards as c', 'c.standardid', 's.standard')
      .orderBy([{ column: 's.schoolname' }, { column: 's.studentfirstname' }, { column: 's.studentid' }])
      .limit(limit).offset(offset)
      .select('s.*', 'c.standardname as classname'),
  );
  const userids = rows.map((r) => String(r.schooluserid));
  const users = userids.length
    ? new Map(
        (
          await readRows<Row>(
            db('schoolusers')
              .whereIn('schooluserid', userids)
              .select('schooluserid', ...SCHOOLUSER_COLUMNS),
          )
        ).map((u) => [String(u.schooluserid), u]),
      )
    : new Map<string, Row>();
  const curricula = await curriculumRows(db, rows.flatMap((r) => [r.curriculumid, ...idsOf(r)]));
  const logins = await lastLogins(db, config, userids);
  const data = rows.map(({ classname, ...r }) => {
    const u = users.get(String(r.schooluserid)) ?? {};
    const primary = curricula.get(String(r.curriculumid)) ?? {};
    const names = idsOf(r).map((id) => curricula.get(id)?.curriculumname).filter((n) => typeof n === 'string');
    return {
      ...r,
      lastlogin: logins.get(String(r.schooluserid)) ?? null,
      schooluser: null,
      ...Object.fromEntries(SCHOOLUSER_COLUMNS.map((c) => [`schooluser.${c}`, u[c] ?? null])),
      curriculum: null,
      ...Object.fromEntries(CURRICULUM_COLUMNS.map((c) => [`curriculum.${c}`, primary[c] ?? null])),
      'curriculum.curriculumname': names.length ? names.join(', ') : (primary.curriculumname ?? null),
      class: { standardname: classname ?? null },
    };
  });
  return pageEnvelope(data, total, body);
}

/** A learner (deleted ones too: their history stays readable) within the caller's scope, or the area's refusal. */
async function learnerInScope(db: Knex, scope: Scope, studentid: string): Promise<Row> {
  const row = await applyScope(db('students as s').where('s.studentid', studentid), scope, {
    schoolname: 's.schoolname',
  }).first('s.*');
  if (!row) throw httpError(400, INVALID_STUDENT);
  return row;
}

/** One learner with its school user (no hash), its curriculum and its last sign-in. */
export async function getStudent(db: Knex, config: ClassroomConfig, scope: Scope, studentid: string) {
  const s = await learnerInScope(db, scope, studentid);
  const user = await db('schoolusers').where({ schooluserid: s.schooluserid }).first(...SCHOOLUSER_COLUMNS);
  const curricula = await curriculumRows(db, [s.curriculumid, ...idsOf(s)]);
  const primary = curricula.get(String(s.curriculumid));
  const logins = await lastLogins(db, config, [String(s.schooluserid)]);
  return {
    ...s,
    schooluser: user ?? null,
    curriculum: primary ? Object.fromEntries(CURRICULUM_COLUMNS.map((c) => [c, primary[c] ?? null])) : null,
    lastlogin: logins.get(String(s.schooluserid)) ?? null,
  };
}

const PLACE = [
  'lessons.lessonname',
  'lessons.lessonorder',
  'lessons.lessonid',
  'levels.levelid',
  'levels.levelname',
  'levels.levelorder',
  'grades.gradename',
  'grades.gradeorder',
  'grades.gradeid',
];

/** The learner with the most advanced lesson quiz it passed (grade, level, then lesson order); null when none. */
export async function studentStats(db: Knex, scope: Scope, studentid: string) {
  const s = await learnerInScope(db, scope, studentid);
  const best = await db('studentprogress as sp')
    .join('lessonquizzes as lq', 'lq.lessonquizid', 'sp.studentprogressreferenceid')
    .join('lessons', 'lessons.lessonid', 'lq.lessonid')
    .join('levels', 'levels.levelid', 'lessons.levelid')
    .join('grades', 'grades.gradeid', 'levels.gradeid')
    .where({ 'sp.studentid': studentid, 'sp.progresstype': 2, 'sp.ispass': true })
    .orderBy([
      { column: 'grades.gradeorder', order: 'desc' },
      { column: 'levels.levelorder', order: 'desc' },
      { column: 'lessons.lessonorder', order: 'desc' },
      { column: 'sp.starttime', order: 'desc' },
    ])
    .first('sp.starttime', ...PLACE);
  if (!best) return null;
  return {
    ...s,
    lastlogin: best.starttime,
    currentlessonname: best.lessonname, currentlessonorder: best.lessonorder, currentlessonid: best.lessonid,
    currentlevelid: best.levelid, currentlevelname: best.levelname, currentlevelorder: best.levelorder,
    currentgradename: best.gradename, currentgradeorder: best.gradeorder, currentgradeid: best.gradeid,
  };
}

/** The learner's attempts of one kind with where they sit in the curriculum, oldest first. */
export async function studentAttempts(db: Knex, scope: Scope, studentid: string, kind: 'practice' | 'quiz' | 'level') {
  await learnerInScope(db, scope, studentid);
  const q = db('studentprogress as sp')
    .where({ 'sp.studentid': studentid })
    .orderBy([{ column: 'sp.starttime' }, { column: 'sp.studentprogressid' }]);
  if (kind === 'level') {
    return readRows(
      q
        .where('sp.progresstype', 3)
        .join('levels', 'levels.levelid', 'sp.studentprogressreferenceid')
        .join('grades', 'grades.gradeid', 'levels.gradeid')
        .select(
          'sp.*',
          'levels.levelid',
          'levels.levelname',
          'levels.levelorder',
          'grades.gradename',
          'grades.gradeorder',
          'grades.gradeid',
        ),
    );
  }
  const [table, id, name, type] = kind === 'practice'
    ? ['lessonpractices', 'lessonpracticeid', 'lessonpracticename', 1]
    : ['lessonquizzes', 'lessonquizid', 'lessonquizname', 2];
  return readRows(q.where('sp.progresstype', type)
    .join(`${table} as a`, `a.${id}`, 'sp.studentprogressreferenceid')
    .join('lessons', 'lessons.lessonid', 'a.lessonid')
    .join('levels', 'levels.levelid', 'lessons.levelid')
    .join('grades', 'grades.gradeid', 'levels.gradeid')
    .select('sp.*', `a.${name}`, `a.${id}`, ...PLACE));
}

// ---- GET /student/download-students ---------------------------------------------------------------------

export const downloadQuery = z.looseObject({
  countryid: z.string().optional(),
  schoolname: z.string().optional(),
  studentid: z.string().optional(),
});

/** The learner CSV's columns: the round-trip format of PUT /student/update. */
export const DOWNLOAD_COLUMNS = [
  'studentid',
  'schooluserid',
  'schoolusername',
  'schoolname',
  'curriculums',
  'standard',
  'studentfirstname',
  'studentlastname',
  'familyname',
  'mothername',
  'fathername',
  'contact',
  'genderid',
  ...WG,
  'dateofbirth',
  'dateofjoin',
  'schooltype',
  'city',
  'country',
  'state',
  'type',
  'isactive',
  'schooluserpasswordhash',
  'is_teacher_acc',
] as const;

/** Rows read per query: the download holds one batch at a time, whatever the number of learners. */
export const DOWNLOAD_BATCH = 1000;

/**
 * The learner CSV: active, live learners within the caller's scope, by school then first name. Unknown
 * filter values are refused before anything is sent; the rows are then read in batches (keyset on the
 * sort order) as the client takes them.
 */
export async function downloadStudents(db: Knex, scope: Scope, q: z.infer<typeof downloadQuery>) {
  const base = db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .leftJoin('standards as c', 'c.standardid', 's.standard')
    .where({ 's.isdeleted': false, 's.isactive': true, 'u.isdeleted': false });
  if (q.countryid) {
    if (!(await db('countries').where({ countryid: q.countryid }).first('countryid')))
      throw httpError(400, 'Country does not exists!');
    base.whereIn('s.schoolname', db('schools').where({ countryid: q.countryid }).select('schoolname'));
  }
  if (q.schoolname) {
    if (!(await db('schools').where({ schoolname: q.schoolname }).first('schoolid')))
      throw httpError(400, 'School does not exists!');
    base.where('s.schoolname', q.schoolname);
  }
  if (q.studentid) base.where('s.studentid', q.studentid);
  applyScope(base, scope, { schoolname: 's.schoolname' });
  const names = new Map(
    (
      await readRows<{ curriculumid: string; curriculumname: string }>(
        db('curriculums').select('curriculumid', 'curriculumname'),
      )
    ).map((c) => [c.curriculumid, c.curriculumname]),
  );
  return {
    filename: `students-${q.schoolname || 'all'}.csv`,
    columns: DOWNLOAD_COLUMNS,
    rows: downloadRows(db, base, names),
  };
}

async function* downloadRows(db: Knex, base: Knex.QueryBuilder, names: Map<string, string>): AsyncGenerator<Row> {
  let after: [string, string, string] | undefined;
  for (;;) {
    const q = base.clone()
      .orderByRaw("coalesce(s.schoolname, ''), s.studentfirstname, s.studentid")
      .limit(DOWNLOAD_BATCH)
      .select('s.*', 'u.schoolusername', 'c.standardname', db.raw("coalesce(s.schoolname, '') as sortschool"));
    if (after) q.whereRaw("(coalesce(s.schoolname, ''), s.studentfirstname, s.studentid) > (?, ?, ?)", after);
    const rows = await readRows<Row>(q);
    for (const r of rows) {
      yield {
        ...r,
        curriculums: idsOf(r).map((id) => names.get(id)).filter((n) => n !== undefined).join('/'),
        standard: r.standardname ?? '',
        genderid: r.genderid ?? '',
        dateofbirth: toDmy(r.dateofbirth),
        dateofjoin: toDmy(r.dateofjoin),
        schooltype: r.schooltype ?? '',
        type: r.type ?? '',
        isactive: r.isactive ? 1 : 0,
        schooluserpasswordhash: '',
        is_teacher_acc: r.is_teacher_acc ? '1' : '',
      };
    }
    if (rows.length < DOWNLOAD_BATCH) return;
    const last = rows[rows.length - 1];
    after = [String(last.sortschool), String(last.studentfirstname), String(last.studentid)];
  }
}
