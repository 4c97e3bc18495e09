import crypto from 'node:crypto';
import { whereContains, type Knex } from '@lms/db';
import { num, round2, withLessonHeading } from '../common';
import { LINKS, parentsWithQuestions } from '../question/store';
import { ACTIVE, PROGRESS, lessonTotals, recordActive, refreshAggregates } from '../result/progress';

export async function searchLessons(db: Knex, q: { levelid?: string; lesson?: string }) {
  const query = whereContains(db('lessons').where({ isdeleted: false, lessonstatus: true }), 'lessonname', q.lesson);
  if (q.levelid) query.andWhere('levelid', q.levelid);
  return (await query.orderBy('lessonorder')).map(withLessonHeading);
}

const activeLessons = (db: Knex, levelid: string) =>
  db('lessons').where({ levelid, isdeleted: false, lessonstatus: true }).orderBy('lessonorder');
const levelHasQuiz = async (db: Knex, levelid: string) =>
  Boolean(
    await db('levelquizquestions').where({ levelid, levelquizquestionstatus: true }).first('levelquizquestionid'),
  );

async function lessonProgressRows(db: Knex, studentid: string | undefined, ids: string[]) {
  if (!studentid || !ids.length) return [];
  return db('studentlessonsprogress')
    .where({ studentid })
    .whereIn('lessonid', ids)
    .select('lessonid', 'points', 'completed', 'scores', 'progress');
}

async function passedLevelQuizzes(db: Knex, studentid: string | undefined, levelid: string) {
  if (!studentid) return [];
  return db('studentprogress')
    .where({ studentid, studentprogressreferenceid: levelid, progresstype: PROGRESS.levelquiz, ispass: true })
    .orderBy('starttime')
    .select('points', 'scores');
}

export async function lessonsOfLevel(db: Knex, levelid: string, studentid: string | undefined) {
  const level = await db('levels')
    .where({ levelid, isdeleted: false })
    .first('levelid', 'levelname', 'leveldescription');
  const lessons = await activeLessons(db, levelid);
  const progress = await lessonProgressRows(db, studentid, lessons.map((l) => l.lessonid));
  const passed = await passedLevelQuizzes(db, studentid, levelid);
  return {
    lesson: lessons.map((l) => {
      const mine = progress.filter((p) => p.lessonid === l.lessonid);
      return {
        ...withLessonHeading(l),
        studentlessonsprogresses: mine.map((p) => ({ points: num(p.points), completed: Boolean(p.completed) })),
        progress: round2(num(mine[0]?.progress)),
      };
    }),
    level_has_quiz: await levelHasQuiz(db, levelid),
    level: level
      ? {
          ...level,
          studentprogresses: passed.map((p) => ({ points: num(p.points) })),
          progress: passed.length ? 100 : 0,
        }
      : null,
  };
}

export async function lessonsProgress(db: Knex, levelid: string, studentid: string | undefined) {
  const level = await db('levels')
    .where({ levelid, isdeleted: false })
    .first('levelid', 'levelname', 'leveldescription', 'quiz_points');
  const lessons = await activeLessons(db, levelid);
  const progress = await lessonProgressRows(db, studentid, lessons.map((l) => l.lessonid));
  const passed = await passedLevelQuizzes(db, studentid, levelid);
  const hasQuiz = await levelHasQuiz(db, levelid);
  return {
    lessonsresult: lessons.map((l) => ({
      ...withLessonHeading(l),
      studentlessonsprogresses: progress
        .filter((p) => p.lessonid === l.lessonid)
        .map((p) => ({
          points: num(p.points),
          completed: Boolean(p.completed),
          scores: num(p.scores),
          progress: round2(num(p.progress)),
        })),
    })),
    total_points: Math.round(progress.reduce((s, p) => s + num(p.points), 0)),
    level: level
      ? {
          levelid: level.levelid,
          levelname: level.levelname,
          leveldescription: level.leveldescription,
          // Three stars are the most a level quiz can earn.
          level_quiz_total_scores: hasQuiz ? 3 : 0,
          level_quiz_reward: num(level.quiz_points),
          level_quiz_scores: Math.max(0, ...passed.map((p) => num(p.scores))),
          progress: passed.length ? 100 : 0,
        }
      : null,
  };
}

export async function lessonSummary(db: Knex, lessonid: string, studentid: string | undefined) {
  const lesson = await db('lessons')
    .where({ lessonid, isdeleted: false })
    .first('lessonid', 'lessonname', 'lessonorder', 'levelid', 'total_points');
  if (!lesson) return null;
  const level = await db('levels').where('levelid', lesson.levelid).first('levelid', 'levelname', 'gradeid');
  const grade = level ? await db('grades').where('gradeid', level.gradeid).first('gradeid', 'gradename') : undefined;
  const count = async (table: string, status: string) =>
    Number(
      (
        await db(table)
          .where({ lessonid, [status]: true })
          .count({ n: '*' })
          .first()
      )?.n ?? 0,
    );
  const totals = studentid ? await lessonTotals(db, studentid, lessonid) : undefined;
  return {
    lesson: {
      ...lesson,
      level: level
        ? {
            levelid: level.levelid,
            levelname: level.levelname,
            grade: grade ? { gradeid: grade.gradeid, gradename: grade.gradename } : null,
          }
        : null,
      student_learning_points: totals?.learning ?? 0,
      student_practice_points: totals?.practice ?? 0,
      student_quiz_points: totals?.quiz ?? 0,
      number_learnings: await count('lessonlearnings', 'lessonlearningstatus'),
      number_practices: await count('lessonpractices', 'lessonpracticestatus'),
      number_quizzes: await count('lessonquizzes', 'lessonquizstatus'),
    },
  };
}

/** File facts the app resolves media by (the bytes come from a CDN or a device folder, never from this API). */
export function fileObject(documentname: string | null | undefined) {
  const filename = documentname ?? '';
  const fileext = filename.includes('.') ? filename.slice(filename.lastIndexOf('.') + 1).toLowerCase() : '';
  const filetype =
    fileext === 'mp3' ? 1 : fileext === 'mp4' ? 2 : ['jpg', 'jpeg', 'png', 'gif'].includes(fileext) ? 6 : 0;
  return { filename, filetype, fileext };
}

export async function lessonWithContent(
  db: Knex,
  lessonid: string,
  viewer: { withPlans: boolean; answerableOnly: boolean },
) {
  const lesson = await db('lessons').where({ lessonid, isdeleted: false }).first();
  if (!lesson) return null;
  const [lessonlearnings, practices, quizzes] = await Promise.all([
    db('lessonlearnings')
      .where({ lessonid, lessonlearningstatus: true })
      .orderBy('lessonlearningorder')
      .select('lessonlearningid', 'lessonlearningname', 'lessonlearningorder'),
    db('lessonpractices')
      .where({ lessonid, lessonpracticestatus: true })
      .orderBy('lessonpracticeorder')
      .select('lessonpracticeid', 'lessonpracticename', 'lessonpracticeorder'),
    db('lessonquizzes')
      .where({ lessonid, lessonquizstatus: true })
      .orderBy('lessonquizorder')
      .select('lessonquizid', 'lessonquizname', 'lessonquizorder'),
  ]);
  let lessonpractices = practices;
  let lessonquizzes = quizzes;
  // The learner app opens a practice or quiz at its first question without checking there is one, so a learner
  // is never offered one that has none to serve; staff still see every item, to find and fix such content.
  if (viewer.answerableOnly) {
    const answerablePractices = await parentsWithQuestions(
      db,
      LINKS.practice,
      practices.map((p) => p.lessonpracticeid),
    );
    const answerableQuizzes = await parentsWithQuestions(
      db,
      LINKS.quiz,
      quizzes.map((q) => q.lessonquizid),
    );
    lessonpractices = practices.filter((p) => answerablePractices.has(p.lessonpracticeid));
    lessonquizzes = quizzes.filter((q) => answerableQuizzes.has(q.lessonquizid));
  }
  const out: Record<string, unknown> = {
    ...withLessonHeading(lesson),
    lessonlearnings,
    lessonpractices,
    lessonquizzes,
  };
  // Lesson plans are teaching material: only teacher accounts see them.
  if (viewer.withPlans)
    out.lessonplans = await db('lessonplans')
      .where({ lessonid, lessonplanstatus: true })
      .orderBy('lessonplanorder')
      .select('lessonplanid', 'lessonplanname', 'lessonplanorder');
  return out;
}

export const learningProgressOf = (db: Knex, studentid: string | undefined, lessonlearningid: string) =>
  studentid
    ? db('studentlearningsprogress')
        .where({ studentid, lessonlearningid })
        .first()
        .then((r) => r ?? null)
    : Promise.resolve(null);

export async function learningProgressOfLesson(db: Knex, studentid: string | undefined, lessonid: string) {
  if (!studentid) return [];
  const ids = db('lessonlearnings').where({ lessonid }).select('lessonlearningid');
  return db('studentlearningsprogress').where({ studentid }).whereIn('lessonlearningid', ids);
}

export async function learning(db: Knex, lessonlearningid: string, studentid: string | undefined) {
  const row = await db('lessonlearnings').where({ lessonlearningid }).first();
  if (!row) return null;
  const doc = row.documentid
    ? await db('documents').where('documentid', row.documentid).first('documentname')
    : undefined;
  return {
    ...row,
    studentlearningprogress: await learningProgressOf(db, studentid, lessonlearningid),
    lessonlearningfileobject: fileObject(doc?.documentname),
  };
}

export async function plan(db: Knex, lessonplanid: string) {
  const row = await db('lessonplans').where({ lessonplanid }).first();
  if (!row) return null;
  const doc = row.documentid
    ? await db('documents').where('documentid', row.documentid).first('documentname')
    : undefined;
  return { ...row, lessonplanfileobject: fileObject(doc?.documentname) };
}

/**
 * Records how far a learner watched or listened. The furthest position is kept, so a late or replayed report
 * never lowers progress; the learning's points are earned once it is watched to the end.
 */
export async function saveLearningProgress(
  db: Knex,
  learner: { studentid: string; schooluserid: string },
  learningRow: { lessonlearningid: string; lessonid: string; points: number | null },
  body: { ended: boolean; time: number; content_length: number; date?: Date },
): Promise<void> {
  const at = body.date ?? new Date();
  const percentage = body.ended ? 100 : round2(Math.min(100, (body.time * 100) / body.content_length));
  await db.transaction(async (trx) => {
    const existing = await trx('studentlearningsprogress')
      .where({ studentid: learner.studentid, lessonlearningid: learningRow.lessonlearningid })
      .first();
    const best = Math.max(percentage, num(existing?.progress_percentage));
    const values = {
      progress: Math.max(Math.round(body.time), num(existing?.progress)),
      viewed: best >= 100 ? 1 : num(existing?.viewed),
      progress_percentage: best,
      content_length: Math.round(body.content_length),
      points: best >= 100 ? num(learningRow.points) : 0,
      lastupdated: at.toISOString(),
    };
    if (existing)
      await trx('studentlearningsprogress')
        .where('studentlearningprogressid', existing.studentlearningprogressid)
        .update(values);
    else
      await trx('studentlearningsprogress').insert({
        studentlearningprogressid: crypto.randomUUID(),
        studentid: learner.studentid,
        userid: learner.schooluserid,
        lessonlearningid: learningRow.lessonlearningid,
        ...values,
      });
    await recordActive(trx, learner.studentid, learningRow.lessonlearningid, ACTIVE.learning, at);
    const lesson = await trx('lessons').where('lessonid', learningRow.lessonid).first('lessonid', 'levelid');
    if (lesson) await refreshAggregates(trx, learner.studentid, lesson.levelid, lesson.lessonid);
  });
}
