import { whereContains, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { num, round2 } from '../common';
import { PROGRESS } from '../result/progress';

const learnersOfSchool = (db: Knex, schoolname: string) =>
  db('students')
    .whereRaw('lower(students.schoolname) = ?', [schoolname.toLowerCase()])
    .andWhere('students.isactive', true);

/** One entry per class among the school's learners; learners with no class give one `{standard: null}`, first. */
export async function standardsOf(db: Knex, schoolname: string) {
  const rows = await learnersOfSchool(db, schoolname).groupBy('standard').select('standard')
    .orderByRaw('standard is not null, standard');
  return rows.map((r) => ({ standard: r.standard }));
}

export async function statsOf(db: Knex, schoolname: string) {
  const rows: Array<Record<string, unknown>> = await learnersOfSchool(db, schoolname)
    .groupBy('genderid')
    .select('genderid')
    .count({ count: '*' })
    .orderBy('genderid');
  const gendercount = rows.map((r) => ({ genderid: Number(r.genderid), count: Number(r.count) }));
  return { total: gendercount.reduce((s, g) => s + g.count, 0), gendercount };
}

export const studentsOf = (db: Knex, schoolname: string) =>
  learnersOfSchool(db, schoolname).select('students.*').orderBy('studentfirstname');

/** "Nov 20, 2026, 8:00:00 AM", as the teacher dashboard shows the previous sign-in (UTC). */
export function enUsDateTime(iso: string): string {
  return new Date(iso).toLocaleString('en-US', {
    timeZone: 'UTC',
    month: 'short',
    day: 'numeric',
    year: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    second: '2-digit',
  });
}

export async function teacherProfile(db: Knex, schooluserid: string, standard: string | undefined) {
  const user = await db('schoolusers').where({ schooluserid }).first('schooluserid', 'schoolusername', 'schoolname');
  const accesses = await db('rpiuseraccess')
    .where({ userid: schooluserid })
    .orderBy('logintime', 'desc')
    .limit(2)
    .select('logintime');
  if (!user || !accesses.length) throw httpError(400, 'No teacher!');
  const schoolname = user.schoolname ?? '';
  const learners = learnersOfSchool(db, schoolname);
  if (standard) learners.andWhere('standard', standard);
  const ids = (await learners.select('schooluserid')).map((r) => r.schooluserid as string);
  const since = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const usage: Array<Record<string, unknown>> = ids.length
    ? await db('studentappusages')
        .whereIn('schooluserid', ids)
        .andWhere('created_at', '>=', since)
        .groupBy('schooluserid')
        .select('schooluserid')
        .sum({ seconds: 'time_spent' })
    : [];
  const minutes = usage.reduce((s, u) => s + num(u.seconds), 0) / 60;
  // Another school's class is not named to this teacher.
  const chosen = standard
    ? await standardsOfSchool(db, schoolname).where({ standardid: standard }).first('standardid', 'standardname')
    : undefined;
  return {
    teacher: {
      schoolusername: user.schoolusername,
      // The learner app's dashboard labels this field "Class name": with a class chosen it carries the class.
      schoolname: chosen?.standardname ?? schoolname,
      ...(chosen ? { standardid: chosen.standardid, standardname: chosen.standardname } : {}),
      schooluserid: user.schooluserid,
      rpiuseraccesses: accesses.map((a) => ({ logintime: a.logintime })),
      logintime: accesses[1] ? enUsDateTime(accesses[1].logintime) : '',
    },
    numberofstudents: ids.length,
    averagestudentusage: usage.length ? round2(minutes / usage.length) : 0,
  };
}

/** A learner a staff caller may look at: a learner of their own school (any learner for the sync key). */
export async function visibleStudent(db: Knex, studentid: string, schoolname: string | undefined) {
  const q = db('students').where({ studentid });
  if (schoolname !== undefined) q.whereRaw('lower(schoolname) = ?', [schoolname.toLowerCase()]);
  const row = await q.first();
  if (!row) throw httpError(400, 'Invalid Student ID');
  return row;
}

/** Attempts of one kind with the names and orders of the lesson, level and grade they belong to. */
export async function attemptsWithContent(db: Knex, studentid: string, progresstype: number) {
  const q = db('studentprogress as sp')
    .where({ 'sp.studentid': studentid, 'sp.progresstype': progresstype })
    .orderBy('sp.starttime', 'desc');
  if (progresstype === PROGRESS.levelquiz) {
    q.leftJoin('levels as lv', 'lv.levelid', 'sp.studentprogressreferenceid');
  } else {
    const content =
      progresstype === PROGRESS.practice ? ['lessonpractices', 'lessonpracticeid'] : ['lessonquizzes', 'lessonquizid'];
    q.leftJoin(`${content[0]} as c`, `c.${content[1]}`, 'sp.studentprogressreferenceid')
      .leftJoin('lessons as ls', 'ls.lessonid', 'c.lessonid')
      .leftJoin('levels as lv', 'lv.levelid', 'ls.levelid')
      .select('ls.lessonname', 'ls.lessonorder', 'ls.lessonid');
  }
  return q.leftJoin('grades as g', 'g.gradeid', 'lv.gradeid')
    .select('sp.*', 'lv.levelid', 'lv.levelname', 'lv.levelorder', 'g.gradename', 'g.gradeorder', 'g.gradeid');
}

/** The learner's last passed lesson quiz with where it sits in the curriculum; undefined when there is none. */
export async function lastPassedQuiz(db: Knex, studentid: string) {
  return db('studentprogress as sp')
    .where({ 'sp.studentid': studentid, 'sp.progresstype': PROGRESS.quiz, 'sp.ispass': true })
    .join('lessonquizzes as q', 'q.lessonquizid', 'sp.studentprogressreferenceid')
    .join('lessons as ls', 'ls.lessonid', 'q.lessonid')
    .join('levels as lv', 'lv.levelid', 'ls.levelid')
    .join('grades as g', 'g.gradeid', 'lv.gradeid')
    .orderBy('sp.starttime', 'desc')
    .first(
      'sp.*',
      'q.lessonquizname',
      'ls.lessonid',
      'ls.lessonname',
      'ls.lessonorder',
      'lv.levelid',
      'lv.levelname',
      'lv.levelorder',
      'g.gradeid',
      'g.gradename',
      'g.gradeorder',
    );
}

export async function studentStats(db: Knex, student: Record<string, unknown>) {
  const last = await db('rpiuseraccess')
    .where({ userid: student.schooluserid })
    .orderBy('logintime', 'desc')
    .first('logintime');
  const quiz = await lastPassedQuiz(db, String(student.studentid));
  const out: Record<string, unknown> = { ...student, lastlogin: last?.logintime ?? null };
  if (quiz) {
    Object.assign(out, {
      currentlessonname: quiz.lessonname, currentlessonorder: quiz.lessonorder, currentlessonid: quiz.lessonid,
      currentlevelid: quiz.levelid, currentlevelname: quiz.levelname, currentlevelorder: quiz.levelorder,
      currentgradename: quiz.gradename, currentgradeorder: quiz.gradeorder, currentgradeid: quiz.gradeid,
    });
  }
  return out;
}

const standardsOfSchool = (db: Knex, schoolname: string) =>
  db('standards').where('isdeleted', false).andWhere((w) => {
    w.whereRaw('lower(schoolname) = ?', [schoolname.toLowerCase()]).orWhereIn(
      'schoolid',
      db('schools').whereRaw('lower(schoolname) = ?', [schoolname.toLowerCase()]).select('schoolid'),
    );
  });

export async function standardsLike(db: Knex, schoolname: string, text: string | undefined) {
  const q = standardsOfSchool(db, schoolname);
  whereContains(q, 'standardname', text);
  return q.orderBy('standardname').select('standardid', 'standardname');
}

/** The first lesson of the lowest grade and level of a curriculum. */
async function firstLessonOf(db: Knex, curriculumid: string): Promise<string | undefined> {
  const row = await db('lessons as ls')
    .join('levels as lv', 'lv.levelid', 'ls.levelid')
    .join('grades as g', 'g.gradeid', 'lv.gradeid')
    .where({ 'g.curriculumid': curriculumid, 'ls.isdeleted': false, 'lv.isdeleted': false, 'g.isdeleted': false })
    .orderBy([{ column: 'g.gradeorder' }, { column: 'lv.levelorder' }, { column: 'ls.lessonorder' }])
    .first('ls.lessonid');
  return row?.lessonid;
}

/** The class score sheet of one lesson: each learner's lesson progress and best quiz attempt. */
export async function classScoreSheet(db: Knex, schoolname: string, filters: { standard?: string; lessonid?: string }) {
  if (!schoolname) throw httpError(400, 'User has no school!');
  const firstLearner = await learnersOfSchool(db, schoolname)
    .orderBy('studentfirstname')
    .first('standard', 'curriculumid');
  if (!firstLearner) throw httpError(400, 'school has no student!');
  const standard = filters.standard ?? firstLearner.standard;
  const lessonid = filters.lessonid ?? (await firstLessonOf(db, firstLearner.curriculumid));
  const learners = await learnersOfSchool(db, schoolname)
    .andWhere('students.standard', standard)
    .join('schoolusers', 'schoolusers.schooluserid', 'students.schooluserid')
    .orderBy('students.studentfirstname')
    .select(
      'students.studentid',
      'students.studentfirstname',
      'students.studentlastname',
      'students.schooluserid',
      'schoolusers.schoolusername',
    );
  const ids = learners.map((l) => l.studentid);
  const lessonRows =
    lessonid && ids.length
      ? await db('studentlessonsprogress')
          .where({ lessonid })
          .whereIn('studentid', ids)
          .select('studentid', 'progress', 'scores', 'lessonid')
      : [];
  const quizIds = lessonid
    ? (await db('lessonquizzes').where({ lessonid }).select('lessonquizid')).map((q) => q.lessonquizid)
    : [];
  const attempts =
    quizIds.length && ids.length
      ? await db('studentprogress')
          .where('progresstype', PROGRESS.quiz)
          .whereIn('studentprogressreferenceid', quizIds)
          .whereIn('studentid', ids)
          .orderBy('resultpercentage', 'desc')
          .orderBy('starttime', 'desc')
      : [];
  const counts = new Map<string, number>();
  if (attempts.length) {
    const rows: Array<Record<string, unknown>> = await db('studentprogressquestions')
      .whereIn(
        'studentprogressid',
        attempts.map((a) => a.studentprogressid),
      )
      .groupBy('studentprogressid')
      .select('studentprogressid')
      .count({ n: '*' });
    for (const r of rows) counts.set(String(r.studentprogressid), Number(r.n));
  }
  return learners.map((l, i) => {
    const best = attempts.find((a) => a.studentid === l.studentid);
    const marks = best ? num(best.marks) : 0;
    return {
      studentid: l.studentid,
      studentfirstname: l.studentfirstname,
      // The app's score sheet shows "<last name> <first name>" and "<mark>/<totalquestions>": both keys are
      // sent beside the original's `marks`, which other clients read.
      studentlastname: l.studentlastname ?? '',
      schooluserid: l.schooluserid,
      studentlessonsprogresses: lessonRows
        .filter((r) => r.studentid === l.studentid)
        .map((r) => ({ progress: num(r.progress), scores: num(r.scores), lessonid: r.lessonid })),
      studentprogress: best
        ? {
            studentprogressreferenceid: best.studentprogressreferenceid,
            scores: num(best.scores),
            resultpercentage: num(best.resultpercentage),
            marks,
            mark: marks,
            ispass: best.ispass ? 1 : 0,
            totalquestions: counts.get(best.studentprogressid) ?? 0,
          }
        : {
            studentprogressreferenceid: null,
            scores: 0,
            resultpercentage: 0,
            marks,
            mark: marks,
            ispass: 0,
            totalquestions: 0,
          },
      index: i + 1,
      schooluser: { schoolusername: l.schoolusername },
    };
  });
}
