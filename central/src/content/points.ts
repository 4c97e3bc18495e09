import type { Knex } from '@lms/db';

/**
 * The points model of a curriculum (contract §13), in one place. Every write that changes a lesson's
 * learnings, practices or quizzes, or a lesson or level itself, calls the matching recompute inside the
 * same transaction, so that:
 *  - a live lesson's `total_points` is 100 and its components' points add up to it (when it has any);
 *  - a level's `points` is the sum of its live lessons' `total_points` plus its `quiz_points`;
 *  - a grade's `points` is the sum of its live levels' `points`.
 * Client-sent points are never trusted: these functions overwrite them.
 */
export const LESSON_TOTAL_POINTS = 100;

interface Component { table: 'lessonlearnings' | 'lessonpractices' | 'lessonquizzes'; id: string }

const COMPONENTS = [
  { table: 'lessonlearnings', id: 'lessonlearningid', order: 'lessonlearningorder' },
  { table: 'lessonpractices', id: 'lessonpracticeid', order: 'lessonpracticeorder' },
  { table: 'lessonquizzes', id: 'lessonquizid', order: 'lessonquizorder' },
] as const;

/**
 * Spreads a lesson's 100 points over its learnings, practices and quizzes: each gets floor(100 / n),
 * the remainder goes to the last quiz (else the last practice, else the last learning), in their
 * order. Then the lesson's level and grade are recomputed. A soft-deleted lesson keeps its rows but
 * no longer counts for its level.
 */
export async function recomputeLesson(trx: Knex, lessonid: string): Promise<void> {
  const lesson = await trx('lessons').where({ lessonid }).first('levelid');
  if (!lesson) return;
  const lists = await Promise.all(
    COMPONENTS.map((c) => trx(c.table).where({ lessonid }).orderBy([{ column: c.order }, { column: c.id }]).select(`${c.id} as id`) as Promise<Array<{ id: string }>>),
  );
  const n = lists.reduce((s, l) => s + l.length, 0);
  const brick = n ? Math.floor(LESSON_TOTAL_POINTS / n) : 0;
  const remainder = n ? LESSON_TOTAL_POINTS - brick * n : 0;
  // The last component that takes the remainder: quizzes, then practices, then learnings.
  let last: Component | undefined;
  for (let i = COMPONENTS.length - 1; i >= 0 && !last; i -= 1) {
    const l = lists[i];
    if (l.length) last = { table: COMPONENTS[i].table, id: l[l.length - 1].id };
  }
  for (let i = 0; i < COMPONENTS.length; i += 1) {
    const c = COMPONENTS[i];
    if (!lists[i].length) continue;
    await trx(c.table).where({ lessonid }).update({ points: brick });
    if (last && last.table === c.table && remainder) await trx(c.table).where({ [c.id]: last.id }).update({ points: brick + remainder });
  }
  const sumOf = (i: number) => lists[i].length * brick + (last && last.table === COMPONENTS[i].table ? remainder : 0);
  await trx('lessons').where({ lessonid }).update({
    total_points: LESSON_TOTAL_POINTS,
    brick_points: brick,
    learning_points: sumOf(0),
    practices_points: sumOf(1),
    quizzes_points: sumOf(2),
    practicecount: lists[1].length,
    quizcount: lists[2].length,
  });
  await recomputeLevel(trx, lesson.levelid as string);
}

/** A level's points: its live lessons' total points plus its quiz points; then its grade. */
export async function recomputeLevel(trx: Knex, levelid: string): Promise<void> {
  const level = await trx('levels').where({ levelid }).first('gradeid', 'quiz_points');
  if (!level) return;
  const row = await trx('lessons').where({ levelid, isdeleted: false }).sum({ s: 'total_points' }).first();
  const points = Number(row?.s ?? 0) + Number(level.quiz_points ?? 0);
  await trx('levels').where({ levelid }).update({ points });
  await recomputeGrade(trx, level.gradeid as string);
}

/** A grade's points: the sum of its live levels' points. */
export async function recomputeGrade(trx: Knex, gradeid: string): Promise<void> {
  const row = await trx('levels').where({ gradeid, isdeleted: false }).sum({ s: 'points' }).first();
  await trx('grades').where({ gradeid }).update({ points: Number(row?.s ?? 0) });
}

/** `POST /lesson/update_reward_points`: every active, live lesson back to 100 points, recomputed. */
export async function recomputeAllLessons(trx: Knex): Promise<void> {
  const lessons = await trx('lessons').where({ isdeleted: false, lessonstatus: true }).select('lessonid');
  for (const l of lessons as Array<{ lessonid: string }>) await recomputeLesson(trx, l.lessonid);
}

/** `POST /level/update_quiz_points`: every active, live level's quiz points set to 100, recomputed. */
export async function resetAllLevelQuizPoints(trx: Knex): Promise<void> {
  const levels = await trx('levels').where({ isdeleted: false, levelstatus: true }).select('levelid');
  await trx('levels').where({ isdeleted: false, levelstatus: true }).update({ quiz_points: LESSON_TOTAL_POINTS });
  for (const l of levels as Array<{ levelid: string }>) await recomputeLevel(trx, l.levelid);
}
