import { whereContains, type Knex } from '@lms/db';
import { num, round2, studentsInScope, withLessonHeading } from '../common';

export const activeCurriculums = (db: Knex) => db('curriculums').where({ isdeleted: false, curriculumstatus: true });

export function allCurriculums(db: Knex) {
  return db('curriculums').where('isdeleted', false).orderBy('curriculumname');
}

/** The curriculum ids of the first learner matching a student id, or a class (standard) of a school. */
export async function curriculumIdsOfLearner(
  db: Knex,
  q: { studentid?: string; standardid?: string; schoolname?: string },
): Promise<string[] | undefined> {
  let student: Record<string, unknown> | undefined;
  if (q.studentid)
    student = await db('students')
      .where('studentid', q.studentid)
      .orWhere('schooluserid', q.studentid)
      .first('curriculumid', 'curriculumids');
  else if (q.standardid) {
    const standard = await db('standards').where('standardid', q.standardid).first('standardname', 'schoolname');
    if (!standard) return [];
    // students.standard holds the class id; some clients wrote the class name there instead.
    const s = db('students').where((w) =>
      w.where('standard', q.standardid!).orWhere('standard', standard.standardname),
    );
    const school = q.schoolname || standard.schoolname;
    if (school) s.andWhereRaw('lower(schoolname) = ?', [String(school).toLowerCase()]);
    student = await s.orderBy('studentid').first('curriculumid', 'curriculumids');
  } else return undefined;
  if (!student) return [];
  const ids = Array.isArray(student.curriculumids) ? (student.curriculumids as string[]) : [];
  return ids.length ? ids : student.curriculumid ? [String(student.curriculumid)] : [];
}

export async function searchCurriculums(
  db: Knex,
  q: { cur?: string; studentid?: string; standardid?: string; schoolname?: string },
) {
  const ids = await curriculumIdsOfLearner(db, q);
  const query = whereContains(activeCurriculums(db), 'curriculumname', q.cur);
  if (ids) query.whereIn('curriculumid', ids);
  return query.orderBy('curriculumname');
}

/** Mean of a learner's grade percentages in a curriculum, 2 decimals; 0 when there is nothing yet. */
export async function curriculumProgress(db: Knex, studentid: string, curriculumid: string): Promise<number> {
  const grades = await db('grades').where({ curriculumid, isdeleted: false, gradestatus: true }).select('gradeid');
  if (!grades.length) return 0;
  const rows = await db('studentgradesprogress')
    .where({ studentid, curriculumid })
    .whereIn(
      'gradeid',
      grades.map((g) => g.gradeid),
    )
    .select('progress');
  return round2(rows.reduce((s, r) => s + num(r.progress), 0) / grades.length);
}

export async function subjectsOf(db: Knex, studentid: string | undefined, curriculumids: string[]) {
  if (!curriculumids.length) return [];
  const rows = await activeCurriculums(db).whereIn('curriculumid', curriculumids).orderBy('curriculumname');
  const out = [];
  for (const r of rows)
    out.push({ ...r, progress: studentid ? await curriculumProgress(db, studentid, r.curriculumid) : 0 });
  return out;
}

export const curriculumById = (db: Knex, curriculumid: string) =>
  db('curriculums').where({ curriculumid, isdeleted: false }).first();

/** The curriculum tree with the learner's points on each node; null when the curriculum has no active grade. */
export async function curriculumMap(db: Knex, curriculum: Record<string, unknown>, studentid: string | undefined) {
  const curriculumid = String(curriculum.curriculumid);
  const grades = await db('grades').where({ curriculumid, isdeleted: false, gradestatus: true }).orderBy('gradeorder');
  if (!grades.length) return null;
  const gradeIds = grades.map((g) => g.gradeid);
  const levels = await db('levels')
    .whereIn('gradeid', gradeIds)
    .andWhere({ isdeleted: false, levelstatus: true })
    .orderBy('levelorder');
  const levelIds = levels.map((l) => l.levelid);
  const lessons = levelIds.length
    ? await db('lessons')
        .whereIn('levelid', levelIds)
        .andWhere({ isdeleted: false, lessonstatus: true })
        .orderBy('lessonorder')
    : [];
  const quizLevels = levelIds.length
    ? new Set(
        (
          await db('levelquizquestions')
            .whereIn('levelid', levelIds)
            .andWhere('levelquizquestionstatus', true)
            .distinct('levelid')
        ).map((r) => r.levelid),
      )
    : new Set();
  const pointsBy = async (table: string, key: string, ids: string[]) => {
    if (!studentid || !ids.length) return new Map<string, number>();
    const rows = await db(table).where({ studentid }).whereIn(key, ids).select(key, 'points');
    return new Map(rows.map((r) => [String(r[key]), num(r.points)]));
  };
  const [gp, lp, sp] = await Promise.all([
    pointsBy('studentgradesprogress', 'gradeid', gradeIds),
    pointsBy('studentlevelsprogress', 'levelid', levelIds),
    pointsBy('studentlessonsprogress', 'lessonid', lessons.map((l) => l.lessonid)),
  ]);
  return {
    ...curriculum,
    grades: grades.map((g) => ({
      ...g,
      gradepoints: gp.get(g.gradeid) ?? 0,
      levels: levels.filter((l) => l.gradeid === g.gradeid).map((l) => ({
        ...l,
        hasquiz: quizLevels.has(l.levelid),
        levelpoints: lp.get(l.levelid) ?? 0,
        lessons: lessons.filter((x) => x.levelid === l.levelid)
          .map((x) => ({ ...withLessonHeading(x), lessonpoints: sp.get(x.lessonid) ?? 0 })),
      })),
    })),
  };
}

/** The baseline or endline in force for a school and curriculum at a date, and whether the learner has taken it. */
export async function baselineFor(
  db: Knex,
  curriculumid: string,
  schoolid: string,
  studentid: string | undefined,
  at: Date,
) {
  const iso = at.toISOString();
  const rows = await db('curriculumbaseline')
    .where({ curriculumid, isdeleted: false })
    .andWhere((q) => q.where('baselinestatus', true).orWhereNull('baselinestatus'))
    .andWhere((q) => q.whereNull('startdate').orWhere('startdate', '<=', iso))
    .andWhere((q) => q.whereNull('enddate').orWhere('enddate', '>=', iso))
    .orderBy('startdate', 'desc');
  // schoolid holds the list of schools the assessment is for; an empty or missing list means every school.
  const baseline = rows.find(
    (r) => !Array.isArray(r.schoolid) || r.schoolid.length === 0 || r.schoolid.includes(schoolid),
  );
  if (!baseline) return null;
  const taken = studentid
    ? await db('studentprogress')
        .where({ studentid, studentprogressreferenceid: baseline.curriculumbaselineid, progresstype: 4 })
        .first('studentprogressid')
    : undefined;
  return {
    baselinename: baseline.baselinename,
    curriculumbaselineid: baseline.curriculumbaselineid,
    baselinepass: Boolean(taken),
  };
}

/**
 * The school and learner a baseline question names, within the caller's school: another school, or a learner
 * of another school, is answered as one this server does not know.
 */
export async function schoolAndLearner(db: Knex, scope: string | undefined, schoolname: string, studentid: string) {
  const foreign = scope !== undefined && scope.toLowerCase() !== schoolname.toLowerCase();
  const school: { schoolid: string } | undefined = foreign ? undefined : await db('schools')
    .whereRaw('lower(schoolname) = ?', [schoolname.toLowerCase()]).andWhere('isdeleted', false).first('schoolid');
  // The app sends the schooluserid where the route names a studentid; both identify the learner.
  const student: { studentid: string } | undefined = await db('students')
    .where((w) => w.where('studentid', studentid).orWhere('schooluserid', studentid))
    .whereIn('studentid', studentsInScope(db, scope)).first('studentid');
  return { school, student };
}

export async function baselineResults(db: Knex, curriculumbaselineid: string, school?: string) {
  const baseline = await db('curriculumbaseline').where({ curriculumbaselineid }).first('baselinename');
  const rows = await db('studentprogress').where({ studentprogressreferenceid: curriculumbaselineid, progresstype: 4 })
    .whereIn('studentid', studentsInScope(db, school)).orderBy('starttime');
  if (!rows.length) return [];
  const studentIds = [...new Set(rows.map((r) => r.studentid))];
  const students = await db('students')
    .join('schoolusers', 'schoolusers.schooluserid', 'students.schooluserid')
    .whereIn('students.studentid', studentIds)
    .select('students.studentid', 'students.studentfirstname', 'students.schoolname', 'schoolusers.schoolusername');
  const counts: Array<Record<string, unknown>> = await db('studentprogressquestions')
    .whereIn(
      'studentprogressid',
      rows.map((r) => r.studentprogressid),
    )
    .groupBy('studentprogressid')
    .select('studentprogressid')
    .count({ n: '*' });
  const byId = new Map(students.map((s) => [s.studentid, s]));
  const n = new Map(counts.map((c) => [String(c.studentprogressid), Number(c.n)]));
  return rows.map((r) => {
    const s = byId.get(r.studentid);
    return {
      ...r,
      student: s
        ? {
            studentfirstname: s.studentfirstname,
            schoolname: s.schoolname,
            schooluser: { schoolusername: s.schoolusername },
          }
        : null,
      curriculumbaseline: { baselinename: baseline?.baselinename ?? null },
      totalquestions: n.get(r.studentprogressid) ?? 0,
    };
  });
}
