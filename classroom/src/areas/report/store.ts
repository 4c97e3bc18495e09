import type { Knex } from '@lms/db';
import { num } from '../common';
import { PROGRESS } from '../result/progress';

export type Filters = Map<string, string[]>;

export interface LearnerRow {
  studentid: string;
  schooluserid: string;
  studentfirstname: string;
  studentlastname: string | null;
  standard: string | null;
  /** The class's name; `standard` holds the class id. */
  standardname: string | null;
  schoolname: string | null;
  curriculumid: string;
  schoolusername: string;
  schoolid: string | null;
  countryid: string | null;
  countryname: string | null;
  /** The learner's own country column (free text from the roster), which the status report shows. */
  country: string | null;
  isactive: boolean;
}

/**
 * The learners a report covers: narrowed by the filters the route reads and, for a teacher, to their own school.
 * Teacher accounts that have a students row are never counted as learners.
 */
export async function learners(
  db: Knex,
  f: Filters,
  keys: string[],
  school: string | undefined,
): Promise<LearnerRow[]> {
  const q = db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .leftJoin('schools as sc', function join() {
      this.on(db.raw('lower(sc.schoolname) = lower(s.schoolname)'));
    })
    .leftJoin('countries as c', 'c.countryid', 'sc.countryid')
    .leftJoin('standards as st', 'st.standardid', 's.standard')
    .where('u.isdeleted', false)
    .andWhere((w) => w.where('s.is_teacher_acc', false).orWhereNull('s.is_teacher_acc'))
    .select(
      's.studentid',
      's.schooluserid',
      's.studentfirstname',
      's.studentlastname',
      's.standard',
      's.schoolname',
      's.curriculumid',
      'u.schoolusername',
      'sc.schoolid',
      'sc.countryid',
      'c.countryname',
      's.country',
      's.isactive',
      'st.standardname',
    )
    .orderBy([{ column: 's.schoolname' }, { column: 's.standard' }, { column: 's.studentfirstname' }]);
  const has = (k: string) => keys.includes(k) && f.has(k);
  if (has('studentid')) q.whereIn('s.studentid', f.get('studentid')!);
  if (has('standard')) q.whereIn('s.standard', f.get('standard')!);
  if (has('curriculumid')) q.whereIn('s.curriculumid', f.get('curriculumid')!);
  if (has('schoolid')) q.whereIn('sc.schoolid', f.get('schoolid')!);
  if (has('countryid')) q.whereIn('sc.countryid', f.get('countryid')!);
  if (has('schoolname'))
    q.whereIn(
      db.raw('lower(s.schoolname)') as unknown as string,
      f.get('schoolname')!.map((s) => s.toLowerCase()),
    );
  if (school !== undefined) q.whereRaw('lower(s.schoolname) = ?', [school.toLowerCase()]);
  return q;
}

/**
 * `students.standard` holds the class id; a value that names no class row (a class name some clients wrote) is shown as
 * it is.
 */
const classNameOf = (p: LearnerRow): string | null => p.standardname ?? p.standard;

/** The class as the existing server nests it: `null` for a learner with no class. */
const classOf = (p: LearnerRow): { standardname: string | null } | null =>
  (p.standard === null && p.standardname === null ? null : { standardname: classNameOf(p) });

interface ContentRow {
  id: string;
  lessonid: string | null;
  lessonname: string | null;
  levelid: string;
  levelname: string;
  gradeid: string;
  gradename: string;
  curriculumid: string;
}

/** Lesson quizzes (or levels, for level quizzes) under the lesson/level/grade/curriculum filters. */
async function contentOf(db: Knex, f: Filters, type: number): Promise<Map<string, ContentRow>> {
  const q =
    type === PROGRESS.levelquiz
      ? db('levels as lv').select('lv.levelid as id', db.raw('null as lessonid'), db.raw('null as lessonname'))
      : db('lessonquizzes as qz')
          .join('lessons as ls', 'ls.lessonid', 'qz.lessonid')
          .join('levels as lv', 'lv.levelid', 'ls.levelid')
          .select('qz.lessonquizid as id', 'ls.lessonid', 'ls.lessonname');
  q.join('grades as g', 'g.gradeid', 'lv.gradeid').select(
    'lv.levelid',
    'lv.levelname',
    'g.gradeid',
    'g.gradename',
    'g.curriculumid',
  );
  if (f.has('lessonid') && type !== PROGRESS.levelquiz) q.whereIn('ls.lessonid', f.get('lessonid')!);
  if (f.has('levelid')) q.whereIn('lv.levelid', f.get('levelid')!);
  if (f.has('gradeid')) q.whereIn('g.gradeid', f.get('gradeid')!);
  if (f.has('curriculumid')) q.whereIn('g.curriculumid', f.get('curriculumid')!);
  const rows: ContentRow[] = await q;
  return new Map(rows.map((r) => [r.id, r]));
}

async function questionCounts(db: Knex, ids: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows: Array<Record<string, unknown>> = await db('studentprogressquestions')
      .whereIn('studentprogressid', ids.slice(i, i + 500))
      .groupBy('studentprogressid')
      .select('studentprogressid')
      .count({ n: '*' });
    for (const r of rows) out.set(String(r.studentprogressid), Number(r.n));
  }
  return out;
}

/** Latest attempt per learner and quiz (or level), with the learner, class, school and content it belongs to. */
export async function latestAttempts(
  db: Knex,
  f: Filters,
  type: number,
  learnerKeys: string[],
  school: string | undefined,
  onlyPassed = false,
) {
  const people = await learners(db, f, learnerKeys, school);
  const content = await contentOf(db, f, type);
  if (!people.length || !content.size) return [];
  const byStudent = new Map(people.map((p) => [p.studentid, p]));
  const attempts: Array<Record<string, unknown>> = [];
  const ids = [...byStudent.keys()];
  for (let i = 0; i < ids.length; i += 500) {
    const q = db('studentprogress')
      .where('progresstype', type)
      .whereIn('studentid', ids.slice(i, i + 500))
      .whereIn('studentprogressreferenceid', [...content.keys()])
      .orderBy('starttime', 'desc');
    if (onlyPassed) q.andWhere('ispass', true);
    attempts.push(...(await q));
  }
  const latest = new Map<string, Record<string, unknown>>();
  for (const a of attempts) {
    const key = `${a.studentid}|${a.studentprogressreferenceid}`;
    if (!latest.has(key)) latest.set(key, a);
  }
  const counts = await questionCounts(
    db,
    [...latest.values()].map((a) => String(a.studentprogressid)),
  );
  return [...latest.values()].map((a) => {
    const p = byStudent.get(String(a.studentid))!;
    const c = content.get(String(a.studentprogressreferenceid))!;
    return {
      studentid: p.studentid,
      student: {
        studentid: p.studentid,
        studentfirstname: p.studentfirstname,
        studentlastname: p.studentlastname,
        schooluserid: p.schooluserid,
        schooluser: { schoolusername: p.schoolusername },
      },
      class: { standardname: classNameOf(p) },
      school: { schoolid: p.schoolid, schoolname: p.schoolname },
      curriculumid: c.curriculumid,
      grade: { gradeid: c.gradeid, gradename: c.gradename },
      level: { levelid: c.levelid, levelname: c.levelname },
      lesson: c.lessonid ? { lessonid: c.lessonid, lessonname: c.lessonname } : null,
      starttime: a.starttime,
      laststudentprogress: a,
      totalquestions: counts.get(String(a.studentprogressid)) ?? 0,
    };
  });
}

/** Per class and quiz (or level): how many learners attempted and passed, their mean result, the latest attempt. */
export function byClass(rows: Awaited<ReturnType<typeof latestAttempts>>) {
  const groups = new Map<string, typeof rows>();
  for (const r of rows) {
    const reference = String(r.laststudentprogress.studentprogressreferenceid);
    const key = `${r.school.schoolname}|${r.class.standardname}|${reference}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((g) => {
    const latest = [...g].sort((a, b) => String(b.starttime).localeCompare(String(a.starttime)))[0];
    return {
      class: latest.class,
      school: latest.school,
      grade: latest.grade,
      level: latest.level,
      lesson: latest.lesson,
      schooluser: latest.student.schooluser,
      learners: g.length,
      passed: g.filter((r) => r.laststudentprogress.ispass).length,
      averagepercentage:
        Math.round((g.reduce((s, r) => s + num(r.laststudentprogress.resultpercentage), 0) / g.length) * 100) / 100,
      laststudentprogress: latest.laststudentprogress,
      totalquestions: latest.totalquestions,
    };
  });
}

/** The last passed lesson quiz of each learner, with their curriculum and number of passed quizzes. */
export async function lastCompletedQuiz(db: Knex, f: Filters, school: string | undefined) {
  const rows = await latestAttempts(
    db,
    f,
    PROGRESS.quiz,
    ['studentid', 'standard', 'curriculumid', 'schoolid', 'countryid'],
    school,
    true,
  );
  const names = new Map(
    (await db('curriculums').select('curriculumid', 'curriculumname')).map((c) => [c.curriculumid, c.curriculumname]),
  );
  const perLearner = new Map<string, typeof rows>();
  for (const r of rows) perLearner.set(r.studentid, [...(perLearner.get(r.studentid) ?? []), r]);
  return [...perLearner.values()].map((list) => {
    const last = [...list].sort((a, b) => String(b.starttime).localeCompare(String(a.starttime)))[0];
    return {
      ...last,
      curriculum: { curriculumid: last.curriculumid, curriculumname: names.get(last.curriculumid) ?? null },
      studentprogresses: list.length,
    };
  });
}

/** Whether each learner has signed in, when last, and their app usage in minutes (optionally within a window). */
export async function studentStatus(db: Knex, f: Filters, school: string | undefined) {
  const people = await learners(db, f, ['countryid', 'schoolname', 'schoolid', 'standard', 'studentid'], school);
  if (!people.length) return [];
  const ids = people.map((p) => p.schooluserid);
  const start = f.get('startDate')?.[0];
  const end = f.get('endDate')?.[0];
  const iso = (s: string | undefined) => (s && !Number.isNaN(Date.parse(s)) ? new Date(s).toISOString() : undefined);
  const logins = new Map<string, unknown>();
  const usage = new Map<string, number>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const l: Array<Record<string, unknown>> = await db('rpiuseraccess')
      .whereIn('userid', chunk)
      .groupBy('userid')
      .select('userid')
      .max({ last: 'logintime' });
    for (const r of l) logins.set(String(r.userid), r.last);
    const u = db('studentappusages')
      .whereIn('schooluserid', chunk)
      .groupBy('schooluserid')
      .select('schooluserid')
      .sum({ seconds: 'time_spent' });
    if (iso(start)) u.andWhere('created_at', '>=', iso(start)!);
    if (iso(end)) u.andWhere('created_at', '<=', iso(end)!);
    for (const r of (await u) as Array<Record<string, unknown>>) usage.set(String(r.schooluserid), num(r.seconds));
  }
  const curricula = new Map(
    (await db('curriculums').select('curriculumid', 'curriculumname')).map((c) => [c.curriculumid, c.curriculumname]),
  );
  // `country` is the learner's own column and `lastLogin` is left out for a learner who never signed in, as the
  // existing server answers (its school's country is under `school.countries`).
  return people.map((p) => ({
    studentid: p.studentid,
    country: p.country,
    schoolname: p.schoolname,
    standard: p.standard,
    schooluserid: p.schooluserid,
    schooluser: { schoolusername: p.schoolusername },
    school: {
      schoolid: p.schoolid,
      schoolname: p.schoolname,
      countryid: p.countryid,
      countries: { countryname: p.countryname },
    },
    class: classOf(p),
    curriculum: { curriculumname: curricula.get(p.curriculumid) ?? null },
    status: logins.has(p.schooluserid),
    ...(logins.has(p.schooluserid) ? { lastLogin: logins.get(p.schooluserid) } : {}),
    totalusages: Math.round((usage.get(p.schooluserid) ?? 0) / 60),
  }));
}

/** Aggregate rows (grade, level or lesson progress) of the learners in scope, with the node's name. */
export async function aggregateRows(
  db: Knex,
  f: Filters,
  kind: 'grade' | 'level' | 'lesson',
  school: string | undefined,
) {
  const people = await learners(db, f, ['studentid', 'standard'], school);
  if (!people.length) return { rows: [], student: null };
  const byStudent = new Map(people.map((p) => [p.studentid, p]));
  const table = { grade: 'studentgradesprogress', level: 'studentlevelsprogress', lesson: 'studentlessonsprogress' }[
    kind
  ];
  const q = db(`${table} as a`)
    .whereIn('a.studentid', [...byStudent.keys()])
    .select('a.*');
  if (kind === 'grade')
    q.join('grades as g', 'g.gradeid', 'a.gradeid').select('g.gradename', 'g.gradeorder').orderBy('g.gradeorder');
  if (kind === 'level')
    q.join('levels as lv', 'lv.levelid', 'a.levelid').select('lv.levelname', 'lv.levelorder').orderBy('lv.levelorder');
  if (kind === 'lesson')
    q.join('lessons as ls', 'ls.lessonid', 'a.lessonid')
      .select('ls.lessonname', 'ls.lessonorder')
      .orderBy('ls.lessonorder');
  if (f.has('gradeid')) q.whereIn('a.gradeid', f.get('gradeid')!);
  if (f.has('levelid') && kind === 'lesson') q.whereIn('a.levelid', f.get('levelid')!);
  const rows = (await q).map((r: Record<string, unknown>) => {
    const p = byStudent.get(String(r.studentid))!;
    return {
      ...r,
      student: {
        studentfirstname: p.studentfirstname,
        studentlastname: p.studentlastname,
        schooluser: { schoolusername: p.schoolusername },
      },
      class: { standardname: classNameOf(p) },
      school: { schoolid: p.schoolid, schoolname: p.schoolname },
    };
  });
  const one = f.get('studentid')?.length === 1 ? (byStudent.get(f.get('studentid')![0]) ?? null) : null;
  return { rows, student: one };
}

/** Learners of a school and country who have an active account. */
export async function onlineCount(
  db: Knex,
  schoolname: string | undefined,
  countryid: string | undefined,
  school: string | undefined,
) {
  const f: Filters = new Map();
  if (schoolname) f.set('schoolname', [schoolname]);
  if (countryid) f.set('countryid', [countryid]);
  const people = await learners(db, f, ['schoolname', 'countryid'], school);
  return { name: 'Online', value: people.filter((p) => p.isactive).length };
}
