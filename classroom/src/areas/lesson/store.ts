import crypto from 'node:crypto';
import { whereContains, type Knex } from '@lms/db';
import { fileObject, num, round2, withLessonHeading } from '../common';
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

/** The latest row of each group by `starttime` (an attempt's start), keyed by `key`. */
function latestBy<T extends { starttime?: unknown }>(rows: T[], key: (r: T) => string): Map<string, T> {
  const out = new Map<string, T>();
  const at = (r: T) => new Date(r.starttime as string).getTime() || 0;
  for (const r of rows) {
    const k = key(r);
    const seen = out.get(k);
    if (!seen || at(r) > at(seen)) out.set(k, r);
  }
  return out;
}

/**
 * What the caller has done in each lesson of a level, in the existing server's terms: per lesson the active
 * learnings/practices/quizzes and how many of them the caller completed (a learning watched to the end, a
 * practice or quiz attempted), the points of the latest attempt of each, and the lesson's stars
 * (`student_scores`; `quiz_scores` without the star for completing it). A caller without a learner record
 * gets the counts with nothing completed.
 */
async function lessonActivity(db: Knex, studentid: string | undefined, lessonIds: string[]) {
  const where = (table: string, status: string, id: string) =>
    lessonIds.length
      ? db(table).whereIn('lessonid', lessonIds).andWhere(status, true).select(id, 'lessonid')
      : Promise.resolve([] as Array<Record<string, string>>);
  const [learnings, practices, quizzes] = await Promise.all([
    where('lessonlearnings', 'lessonlearningstatus', 'lessonlearningid'),
    where('lessonpractices', 'lessonpracticestatus', 'lessonpracticeid'),
    where('lessonquizzes', 'lessonquizstatus', 'lessonquizid'),
  ]);
  const watched = studentid && learnings.length
    ? await db('studentlearningsprogress')
        .where({ studentid })
        .andWhere('viewed', '>', 0)
        .whereIn('lessonlearningid', learnings.map((l) => l.lessonlearningid))
        .select('lessonlearningid', 'points')
    : [];
  const refs = [...practices.map((p) => p.lessonpracticeid), ...quizzes.map((q) => q.lessonquizid)];
  const attempts = studentid && refs.length
    ? await db('studentprogress')
        .where({ studentid })
        .whereIn('progresstype', [PROGRESS.practice, PROGRESS.quiz])
        .whereIn('studentprogressreferenceid', refs)
        .select('studentprogressreferenceid', 'points', 'starttime')
    : [];
  const latest = latestBy(attempts, (r) => r.studentprogressreferenceid);
  const lessonOf = new Map(learnings.map((l) => [l.lessonlearningid, l.lessonid]));
  return (lessonid: string) => {
    const mine = <T extends Record<string, string>>(rows: T[]) => rows.filter((r) => r.lessonid === lessonid);
    const seen = watched.filter((w) => lessonOf.get(w.lessonlearningid) === lessonid);
    const done = (rows: Array<Record<string, string>>, id: string) =>
      mine(rows).map((r) => latest.get(r[id])).filter((r) => r !== undefined);
    const practiced = done(practices, 'lessonpracticeid');
    const quizzed = done(quizzes, 'lessonquizid');
    return {
      student_learning_points: seen.reduce((n, w) => n + num(w.points), 0),
      number_completed_learnings: seen.length,
      student_practice_points: practiced.reduce((n, r) => n + num(r.points), 0),
      student_quiz_points: quizzed.reduce((n, r) => n + num(r.points), 0),
      number_completed_practices: practiced.length,
      number_completed_quizzes: quizzed.length,
      number_learnings: mine(learnings).length,
      number_practices: mine(practices).length,
      number_quizzes: mine(quizzes).length,
    };
  };
}

export async function lessonsProgress(db: Knex, levelid: string, studentid: string | undefined) {
  const level = await db('levels')
    .where({ levelid, isdeleted: false })
    .first('levelid', 'levelname', 'leveldescription');
  const lessons = await activeLessons(db, levelid);
  const ids = lessons.map((l) => l.lessonid);
  const progress = studentid && ids.length
    ? await db('studentlessonsprogress')
        .where({ studentid })
        .whereIn('lessonid', ids)
        .select('lessonid', 'points', 'completed', 'scores', 'progress', 'added_completed_scores')
    : [];
  const activity = await lessonActivity(db, studentid, ids);
  const attempts = studentid
    ? await db('studentprogress')
        .where({ studentid, studentprogressreferenceid: levelid, progresstype: PROGRESS.levelquiz })
        .orderBy('starttime')
        .select('points', 'scores', 'starttime', 'ispass')
    : [];
  const latest = latestBy(attempts, () => levelid).get(levelid);
  let totalPoints = 0;
  const lessonsresult = lessons.map((l) => {
    const mine = progress.filter((p) => p.lessonid === l.lessonid);
    const stars = mine[0] ? num(mine[0].scores) : 0;
    const completedStar = Boolean(mine[0]?.added_completed_scores);
    totalPoints += stars;
    return {
      ...withLessonHeading(l),
      studentlessonsprogresses: mine.map((p) => ({
        points: num(p.points),
        completed: Boolean(p.completed),
        scores: num(p.scores),
        progress: round2(num(p.progress)),
      })),
      ...activity(l.lessonid),
      student_scores: stars,
      added_completed_scores: completedStar ? 1 : 0,
      quiz_scores: Math.max(0, completedStar ? stars - 1 : stars),
    };
  });
  // The level part exists only for a level with a quiz to take, as on the existing server; its scores are
  // those of the latest attempt, plus one star for having taken it.
  const hasQuiz = await levelHasQuiz(db, levelid);
  if (latest && hasQuiz) totalPoints += num(latest.scores) + 1;
  return {
    lessonsresult,
    total_points: totalPoints,
    level: level && hasQuiz
      ? {
          levelid: level.levelid,
          levelname: level.levelname,
          leveldescription: level.leveldescription,
          studentprogresses: attempts.map((a) => ({
            points: num(a.points),
            scores: num(a.scores),
            starttime: a.starttime,
            ispass: Boolean(a.ispass),
          })),
          level_quiz_total_scores: latest ? num(latest.scores) + 1 : 0,
          level_quiz_reward: latest ? 1 : 0,
          level_quiz_scores: latest?.ispass ? num(latest.scores) : 0,
          progress: attempts.some((a) => a.ispass) ? 100 : 0,
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

/** A learning, practice or quiz counts as done at this percentage, as everywhere on the existing server. */
export const PASS_PERCENTAGE = 80;
type ActivityStatus = 'done' | 'inProgress' | 'todo';
const pct2 = (n: number) => Math.round(n * 100) / 100;

/**
 * The state of each active item of a lesson for the caller (the learner app's lesson screen): a learning is done
 * once watched to the end and in progress once started; a quiz is done once its best attempt reaches the pass
 * mark; a practice is scored by its best attempt's correct answers against its active questions (its stored
 * percentage counts the answers sent, which are the correct ones). A caller without a learner record sees every
 * item still to do. Null for an unknown lesson.
 */
export async function activitiesProgress(db: Knex, lessonid: string, studentid: string | undefined) {
  const lesson = await db('lessons').where({ lessonid, isdeleted: false }).first('lessonid');
  if (!lesson) return null;
  const [learnings, practices, quizzes] = await Promise.all([
    db('lessonlearnings').where({ lessonid, lessonlearningstatus: true }).orderBy('lessonlearningorder')
      .select('lessonlearningid'),
    db('lessonpractices').where({ lessonid, lessonpracticestatus: true }).orderBy('lessonpracticeorder')
      .select('lessonpracticeid'),
    db('lessonquizzes').where({ lessonid, lessonquizstatus: true }).orderBy('lessonquizorder').select('lessonquizid'),
  ]);
  const ids = (rows: Array<Record<string, string>>, key: string) => rows.map((r) => r[key]);
  const practiceIds = ids(practices, 'lessonpracticeid');
  const quizIds = ids(quizzes, 'lessonquizid');
  const learningRows = studentid && learnings.length
    ? await db('studentlearningsprogress').where({ studentid })
        .whereIn('lessonlearningid', ids(learnings, 'lessonlearningid'))
        .select('lessonlearningid', 'viewed', 'progress_percentage')
    : [];
  const attempts = studentid && (practiceIds.length || quizIds.length)
    ? await db('studentprogress').where({ studentid })
        .where((w) => {
          w.where((p) => p.where('progresstype', PROGRESS.practice).whereIn('studentprogressreferenceid', practiceIds))
            .orWhere((q) => q.where('progresstype', PROGRESS.quiz).whereIn('studentprogressreferenceid', quizIds));
        })
        .select('studentprogressreferenceid', 'marks', 'resultpercentage')
    : [];
  const questionCount = async (table: string, parent: string, status: string, parents: string[]) => {
    if (!parents.length) return new Map<string, number>();
    const rows = await db(table).whereIn(parent, parents).andWhere(status, true)
      .groupBy(parent).select(`${parent} as id`).count({ n: '*' });
    return new Map((rows as Array<{ id: string; n: unknown }>).map((r) => [String(r.id), Number(r.n)]));
  };
  const practiceQuestions = await questionCount('lessonpracticequestions', 'lessonpracticeid',
    'lessonpracticequestionstatus', practiceIds);
  const quizQuestions = await questionCount('lessonquizquestions', 'lessonquizid', 'lessonquizquestionstatus', quizIds);
  const of = (id: string) => attempts.filter((a) => a.studentprogressreferenceid === id);
  const byLearning = new Map(learningRows.map((r) => [r.lessonlearningid, r]));
  return {
    lessonid,
    pass_percentage: PASS_PERCENTAGE,
    learnings: learnings.map((l) => {
      const row = byLearning.get(l.lessonlearningid);
      const done = num(row?.viewed) > 0;
      const seen = Math.min(100, Math.max(0, num(row?.progress_percentage)));
      const status: ActivityStatus = done ? 'done' : seen > 0 ? 'inProgress' : 'todo';
      return { lessonlearningid: l.lessonlearningid, status, progress_percentage: done ? 100 : seen };
    }),
    practices: practiceIds.map((id) => {
      const tries = of(id);
      const count = practiceQuestions.get(id) ?? 0;
      let best: number | null = null;
      let status: ActivityStatus = tries.length ? 'done' : 'todo';
      // With no active question left there is nothing to fail: any attempt counts as done.
      if (tries.length && count) {
        best = pct2(Math.min(100, (Math.max(...tries.map((a) => num(a.marks))) / count) * 100));
        status = best >= PASS_PERCENTAGE ? 'done' : 'inProgress';
      }
      return { lessonpracticeid: id, status, attempts: tries.length, best_percentage: best, question_count: count };
    }),
    quizzes: quizIds.map((id) => {
      const tries = of(id);
      const best = tries.length ? pct2(Math.max(...tries.map((a) => num(a.resultpercentage)))) : null;
      const passed = best !== null && best >= PASS_PERCENTAGE;
      const status: ActivityStatus = passed ? 'done' : tries.length ? 'inProgress' : 'todo';
      const count = quizQuestions.get(id) ?? 0;
      return { lessonquizid: id, status, attempts: tries.length, best_percentage: best, question_count: count };
    }),
  };
}

/**
 * The same states for every active lesson of a level at once (the learner app's level screen draws a dot per
 * learning, practice and quiz step of each lesson). Null for an unknown level.
 */
export async function levelSteps(db: Knex, levelid: string, studentid: string | undefined) {
  const level = await db('levels').where({ levelid, isdeleted: false }).first('levelid');
  if (!level) return null;
  const lessons = await activeLessons(db, levelid).select('lessonid', 'lessonorder');
  const out = [];
  // A level holds a handful of lessons; each is read as the lesson screen reads it, so both screens agree.
  for (const l of lessons) {
    const p = await activitiesProgress(db, l.lessonid, studentid);
    if (p) out.push({ lessonid: l.lessonid, lessonorder: l.lessonorder, learnings: p.learnings,
      practices: p.practices, quizzes: p.quizzes });
  }
  return { levelid, pass_percentage: PASS_PERCENTAGE, lessons: out };
}
