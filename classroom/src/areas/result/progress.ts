import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { num, round2 } from '../common';

/** studentprogress.progresstype */
export const PROGRESS = { practice: 1, quiz: 2, levelquiz: 3, baseline: 4 } as const;
/** studentactives.referencetype */
export const ACTIVE = { learning: 1, practice: 2, quiz: 3, levelquiz: 4, baseline: 5 } as const;

const dayRange = (at: Date): [string, string] => {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  return [start.toISOString(), new Date(start.getTime() + 86_400_000).toISOString()];
};

/** One studentactives row per learner, reference and day. */
export async function recordActive(
  trx: Knex,
  studentid: string,
  referenceid: string,
  referencetype: number,
  at = new Date(),
): Promise<void> {
  const [from, to] = dayRange(at);
  const seen = await trx('studentactives')
    .where({ studentid, referenceid })
    .andWhere('created_at', '>=', from)
    .andWhere('created_at', '<', to)
    .first('studentactiveid');
  if (!seen)
    await trx('studentactives').insert({
      studentactiveid: crypto.randomUUID(),
      studentid,
      referenceid,
      referencetype,
      created_at: at.toISOString(),
    });
}

/**
 * Best points earned per reference id, on passing attempts (or on any attempt: a practice earns its points when done).
 */
async function bestPassing(
  trx: Knex,
  studentid: string,
  progresstype: number,
  refs: string[],
  anyAttempt = false,
): Promise<Map<string, { points: number; scores: number }>> {
  const out = new Map<string, { points: number; scores: number }>();
  if (!refs.length) return out;
  const rows: Array<Record<string, unknown>> = await trx('studentprogress')
    .where({ studentid, progresstype, ...(anyAttempt ? {} : { ispass: true }) })
    .whereIn('studentprogressreferenceid', refs)
    .groupBy('studentprogressreferenceid')
    .select('studentprogressreferenceid')
    .max({ points: 'points' })
    .max({ scores: 'scores' });
  for (const r of rows) out.set(String(r.studentprogressreferenceid), { points: num(r.points), scores: num(r.scores) });
  return out;
}

/** Upserts the single aggregate row of a learner for one node (studentid + key column). */
async function upsertAggregate(
  trx: Knex,
  table: string,
  idColumn: string,
  where: Record<string, string>,
  values: Record<string, unknown>,
): Promise<void> {
  const existing = await trx(table).where(where).first(idColumn);
  const row = { ...values, lastupdated: new Date().toISOString() };
  if (existing) await trx(table).where(idColumn, existing[idColumn]).update(row);
  else await trx(table).insert({ [idColumn]: crypto.randomUUID(), ...where, ...row });
}

export interface LessonTotals {
  full: number;
  learning: number;
  practice: number;
  quiz: number;
  completed: boolean;
  scores: number;
  fullLearning: number;
  fullPractice: number;
  fullQuiz: number;
}

/** What a learner has earned in one lesson, from the content's point values and the learner's passing attempts. */
export async function lessonTotals(trx: Knex, studentid: string, lessonid: string): Promise<LessonTotals> {
  // Sequential on purpose: inside a transaction every query shares one connection.
  const learnings = await trx('lessonlearnings')
    .where({ lessonid, lessonlearningstatus: true })
    .select('lessonlearningid', 'points');
  const practices = await trx('lessonpractices')
    .where({ lessonid, lessonpracticestatus: true })
    .select('lessonpracticeid', 'points');
  const quizzes = await trx('lessonquizzes')
    .where({ lessonid, lessonquizstatus: true })
    .select('lessonquizid', 'points');
  const learned = learnings.length
    ? await trx('studentlearningsprogress')
        .where({ studentid })
        .whereIn(
          'lessonlearningid',
          learnings.map((l) => l.lessonlearningid),
        )
        .select('lessonlearningid', 'points', 'progress_percentage')
    : [];
  const practiced = await bestPassing(
    trx,
    studentid,
    PROGRESS.practice,
    practices.map((p) => p.lessonpracticeid),
    true,
  );
  const practicePassed = await bestPassing(
    trx,
    studentid,
    PROGRESS.practice,
    practices.map((p) => p.lessonpracticeid),
  );
  const quizzed = await bestPassing(
    trx,
    studentid,
    PROGRESS.quiz,
    quizzes.map((q) => q.lessonquizid),
  );
  const fullLearning = learnings.reduce((s, l) => s + num(l.points), 0);
  const fullPractice = practices.reduce((s, p) => s + num(p.points), 0);
  const fullQuiz = quizzes.reduce((s, q) => s + num(q.points), 0);
  const learning = learned.reduce((s, l) => s + num(l.points), 0);
  const practice = [...practiced.values()].reduce((s, p) => s + p.points, 0);
  const quiz = [...quizzed.values()].reduce((s, p) => s + p.points, 0);
  // A lesson is done when every quiz is passed; a lesson without quizzes when every practice is, then every learning
  // viewed.
  const completed = quizzes.length
    ? quizzes.every((q) => quizzed.has(q.lessonquizid))
    : practices.length
      ? practices.every((p) => practicePassed.has(p.lessonpracticeid))
      : learnings.length > 0 &&
        learnings.every((l) =>
          learned.some((x) => x.lessonlearningid === l.lessonlearningid && num(x.progress_percentage) >= 100),
        );
  const scores = Math.max(0, ...[...quizzed.values()].map((q) => q.scores));
  return {
    full: fullLearning + fullPractice + fullQuiz,
    learning,
    practice,
    quiz,
    completed,
    scores,
    fullLearning,
    fullPractice,
    fullQuiz,
  };
}

const percent = (earned: number, full: number, completed: boolean): number =>
  full > 0 ? round2(Math.min(100, (earned * 100) / full)) : completed ? 100 : 0;

/**
 * Recomputes a learner's lesson, level and grade aggregates from the attempts, after any result or learning
 * progress. Recomputing (rather than incrementing) is what makes a replayed submission harmless.
 */
export async function refreshAggregates(
  trx: Knex,
  studentid: string,
  levelid: string,
  touchedLessonid?: string,
): Promise<void> {
  const level = await trx('levels').where({ levelid }).first();
  if (!level) return;
  const grade = await trx('grades').where({ gradeid: level.gradeid }).first();
  if (!grade) return;
  const curid = grade.curriculumid as string;

  const lessons = await trx('lessons')
    .where({ levelid, isdeleted: false, lessonstatus: true })
    .orderBy('lessonorder')
    .select('lessonid');
  let levelEarned = 0;
  let levelFull = 0;
  let allLessonsDone = lessons.length > 0;
  let touched: LessonTotals | undefined;
  for (const l of lessons) {
    const t = await lessonTotals(trx, studentid, l.lessonid);
    if (l.lessonid === touchedLessonid) touched = t;
    const earned = t.learning + t.practice + t.quiz;
    levelEarned += earned;
    levelFull += t.full;
    allLessonsDone &&= t.completed;
    const hasRow = await trx('studentlessonsprogress')
      .where({ studentid, lessonid: l.lessonid })
      .first('studentlessonprogressid');
    if (hasRow || earned > 0 || l.lessonid === touchedLessonid) {
      await upsertAggregate(
        trx,
        'studentlessonsprogress',
        'studentlessonprogressid',
        { studentid, lessonid: l.lessonid, levelid, gradeid: level.gradeid, curid },
        {
          points: earned,
          progress: percent(earned, t.full, t.completed),
          completed: t.completed,
          scores: t.scores,
        },
      );
    }
  }
  const hasLevelQuiz = Boolean(
    await trx('levelquizquestions').where({ levelid, levelquizquestionstatus: true }).first('levelquizquestionid'),
  );
  const levelQuiz = (await bestPassing(trx, studentid, PROGRESS.levelquiz, [levelid])).get(levelid);
  const quizFull = num(level.quiz_points);
  levelEarned += levelQuiz?.points ?? 0;
  levelFull += hasLevelQuiz ? quizFull : 0;
  const levelDone = allLessonsDone && (!hasLevelQuiz || Boolean(levelQuiz));
  await upsertAggregate(
    trx,
    'studentlevelsprogress',
    'studentlevelprogressid',
    { studentid, levelid, gradeid: level.gradeid, curid },
    {
      points: levelEarned,
      progress: percent(levelEarned, levelFull, levelDone),
      completed: levelDone,
      scores: levelQuiz?.scores ?? 0,
    },
  );

  const levels = await trx('levels')
    .where({ gradeid: level.gradeid, isdeleted: false, levelstatus: true })
    .select('levelid');
  const levelRows = await trx('studentlevelsprogress')
    .where({ studentid })
    .whereIn(
      'levelid',
      levels.map((l) => l.levelid),
    )
    .select('levelid', 'points', 'completed', 'scores');
  const gradeEarned = levelRows.reduce((s, r) => s + num(r.points), 0);
  const gradeFull = await gradeFullPoints(trx, level.gradeid);
  const gradeDone =
    levels.length > 0 && levels.every((l) => levelRows.some((r) => r.levelid === l.levelid && r.completed));
  await upsertAggregate(
    trx,
    'studentgradesprogress',
    'studentgradeprogressid',
    { studentid, gradeid: level.gradeid, curriculumid: curid },
    {
      points: gradeEarned,
      progress: percent(gradeEarned, gradeFull, gradeDone),
      completed: gradeDone,
      scores: levelRows.reduce((s, r) => s + num(r.scores), 0),
    },
  );

  const lessonid = touchedLessonid ?? lessons[lessons.length - 1]?.lessonid;
  if (lessonid) {
    const t = touched ?? (await lessonTotals(trx, studentid, lessonid));
    await upsertDailyPoints(trx, studentid, levelid, lessonid, {
      gradepoints: gradeEarned,
      levelpoints: levelEarned,
      levelquizscores: levelQuiz?.scores ?? 0,
      lessonpoints: t.learning + t.practice + t.quiz,
      learningpoints: t.learning,
      practicepoints: t.practice,
      quizpoints: t.quiz,
      scores: t.scores,
      totalgradepoints: gradeFull,
      totallevelpoints: levelFull,
      totallearningpoints: t.fullLearning,
      totalpracticepoints: t.fullPractice,
      totalquizpoints: t.fullQuiz,
    });
  }
}

/** Full points of a grade: every active lesson's content plus each level's quiz. */
export async function gradeFullPoints(trx: Knex, gradeid: string): Promise<number> {
  const levels = await trx('levels')
    .where({ gradeid, isdeleted: false, levelstatus: true })
    .select('levelid', 'quiz_points');
  let full = 0;
  for (const l of levels) full += await levelFullPoints(trx, l.levelid, num(l.quiz_points));
  return full;
}

export async function levelFullPoints(trx: Knex, levelid: string, quizPoints?: number): Promise<number> {
  const lessonIds = trx('lessons').where({ levelid, isdeleted: false, lessonstatus: true }).select('lessonid');
  const sums = [
    await trx('lessonlearnings')
      .whereIn('lessonid', lessonIds.clone())
      .andWhere('lessonlearningstatus', true)
      .sum({ s: 'points' })
      .first(),
    await trx('lessonpractices')
      .whereIn('lessonid', lessonIds.clone())
      .andWhere('lessonpracticestatus', true)
      .sum({ s: 'points' })
      .first(),
    await trx('lessonquizzes')
      .whereIn('lessonid', lessonIds.clone())
      .andWhere('lessonquizstatus', true)
      .sum({ s: 'points' })
      .first(),
  ];
  let qp = quizPoints;
  if (qp === undefined) qp = num((await trx('levels').where({ levelid }).first('quiz_points'))?.quiz_points);
  const hasQuiz = Boolean(
    await trx('levelquizquestions').where({ levelid, levelquizquestionstatus: true }).first('levelquizquestionid'),
  );
  return sums.reduce((s, r) => s + num(r?.s), 0) + (hasQuiz ? qp : 0);
}

/** One studentpoints row per learner, lesson and day, holding that day's standing. */
async function upsertDailyPoints(
  trx: Knex,
  studentid: string,
  levelid: string,
  lessonid: string,
  values: Record<string, number>,
): Promise<void> {
  const now = new Date();
  const [from, to] = dayRange(now);
  const existing = await trx('studentpoints')
    .where({ studentid, lessonid })
    .andWhere('created_at', '>=', from)
    .andWhere('created_at', '<', to)
    .first('studentpointid');
  if (existing)
    await trx('studentpoints')
      .where('studentpointid', existing.studentpointid)
      .update({ ...values, levelid });
  else
    await trx('studentpoints').insert({
      studentpointid: crypto.randomUUID(),
      studentid,
      levelid,
      lessonid,
      ...values,
      created_at: now.toISOString(),
    });
}
