import { whereContains, type Knex } from '@lms/db';
import { usersInScope } from '../common';

/**
 * At most 20 learners whose username contains the text. The existing server asks for no order and its table answers
 * in primary-key order, so the 20 are the first by learner id here too (the same 20 learners on both).
 */
export async function searchStudents(
  db: Knex, q: { userid?: string; schoolname?: string }, school: string | undefined,
) {
  const query = db('students').join('schoolusers', 'schoolusers.schooluserid', 'students.schooluserid')
    .where('schoolusers.isdeleted', false)
    .select('students.*', 'schoolusers.schoolusername as _schoolusername')
    .orderBy('students.studentid')
    .limit(20);
  whereContains(query, 'schoolusers.schoolusername', q.userid);
  if (q.schoolname) query.whereRaw('lower(students.schoolname) = ?', [q.schoolname.toLowerCase()]);
  if (school !== undefined) query.whereRaw('lower(students.schoolname) = ?', [school.toLowerCase()]);
  const rows = await query;
  return rows.map(({ _schoolusername, ...s }) => ({ ...s, schooluser: { schoolusername: _schoolusername } }));
}

export async function setProfileImage(db: Knex, studentid: string, filename: string): Promise<void> {
  await db('students').where({ studentid }).update({ profileimage: filename });
}

/** The latest sign-in of each listed user (users never signed in are left out). */
export async function lastLogins(db: Knex, userids: string[], school: string | undefined) {
  if (!userids.length) return [];
  const q = db('rpiuseraccess').whereIn('userid', userids);
  if (school !== undefined) q.whereIn('userid', usersInScope(db, school));
  const rows: Array<Record<string, unknown>> = await q.groupBy('userid').select('userid')
    .max({ logintime: 'logintime' });
  return rows.map((r) => ({
    logintime: r.logintime instanceof Date ? r.logintime.toISOString() : r.logintime,
    userid: r.userid,
  }));
}

interface Tally { lessonsCompleted: number; lessonsTotal: number; levelsCompleted: number; levelsTotal: number }
const zero = (): Tally => ({ lessonsCompleted: 0, lessonsTotal: 0, levelsCompleted: 0, levelsTotal: 0 });

/**
 * The learner's "My progress" figures (learner app): per curriculum, lessons and levels completed of those
 * open, and the level to go on with (the first, by grade then level order, that is not complete); totals over
 * all. A lesson is completed when its progress row says so or reaches 100 %; a level when it has active lessons
 * and all are completed; a level without active lessons is not counted. A fixed number of queries.
 */
export async function progressSummary(db: Knex, learner: { studentid: string; curriculumids: string[] } | undefined) {
  const totals = zero();
  if (!learner?.curriculumids.length) return { curricula: [], totals };
  const curricula = await db('curriculums').whereIn('curriculumid', learner.curriculumids)
    .where({ curriculumstatus: true, isdeleted: false }).orderBy('curriculumname')
    .select('curriculumid', 'curriculumname');
  if (!curricula.length) return { curricula: [], totals };
  // Ties in the orders are broken by name, then id, so the level to go on with never depends on row order.
  const grades = await db('grades').whereIn('curriculumid', curricula.map((c) => c.curriculumid))
    .where({ gradestatus: true, isdeleted: false }).orderBy([
      { column: 'gradeorder' }, { column: 'gradename' }, { column: 'gradeid' }])
    .select('gradeid', 'curriculumid', 'gradename');
  const levels = grades.length
    ? await db('levels').whereIn('gradeid', grades.map((g) => g.gradeid))
        .where({ levelstatus: true, isdeleted: false }).orderBy([
          { column: 'levelorder' }, { column: 'levelname' }, { column: 'levelid' }])
        .select('levelid', 'gradeid', 'levelname')
    : [];
  const lessons = levels.length
    ? await db('lessons').whereIn('levelid', levels.map((l) => l.levelid))
        .where({ lessonstatus: true, isdeleted: false }).select('lessonid', 'levelid')
    : [];
  const rows = lessons.length
    ? await db('studentlessonsprogress').where({ studentid: learner.studentid })
        .whereIn('lessonid', lessons.map((l) => l.lessonid)).select('lessonid', 'completed', 'progress')
    : [];
  const isDone = (r: { completed?: unknown; progress?: unknown }) =>
    Boolean(r.completed) || Number(r.progress ?? 0) >= 100;
  const done = new Set(rows.filter(isDone).map((r) => r.lessonid));
  const out = curricula.map((c) => {
    const tally = zero();
    let currentLevel: Record<string, unknown> | null = null;
    for (const g of grades.filter((x) => x.curriculumid === c.curriculumid)) {
      for (const l of levels.filter((x) => x.gradeid === g.gradeid)) {
        const mine = lessons.filter((x) => x.levelid === l.levelid);
        if (!mine.length) continue;
        const completed = mine.filter((x) => done.has(x.lessonid)).length;
        tally.lessonsTotal += mine.length;
        tally.lessonsCompleted += completed;
        tally.levelsTotal += 1;
        if (completed === mine.length) tally.levelsCompleted += 1;
        else if (!currentLevel)
          currentLevel = {
            levelid: l.levelid, levelname: l.levelname, gradeid: g.gradeid, gradename: g.gradename,
            lessonsCompleted: completed, lessonsTotal: mine.length,
          };
      }
    }
    for (const k of Object.keys(totals) as Array<keyof Tally>) totals[k] += tally[k];
    return { curriculumid: c.curriculumid, curriculumname: c.curriculumname, ...tally, currentLevel };
  });
  return { curricula: out, totals };
}
