import crypto from 'node:crypto';
import { readRows, whereContains, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { guid, number, optionalText, text } from '../../http/fields';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { levelsUnder, type Curricula } from '../../http/scope';
import { now, writeTransaction } from '../../http/writes';
import { LESSON_TOTAL_POINTS, recomputeAllLessons, recomputeLessons, recomputeLevels } from '../../content/points';
import { INVALID_LEVEL } from '../level/store';

export const INVALID_LESSON = 'Invalid Lesson id';
const LESSON_EXISTS = 'Lesson already exists';

export const lessonParams = z.object({ lessonid: guid('Lesson ID') });
export const lessonListBody = pagingBody(['lessonname', 'lessondescription']);
/** The original reads `lesson`; the admin UI sends `lessonname`: both are read. */
export const lessonAllQuery = z.looseObject({
  levelid: z.string().optional(),
  lesson: z.string().optional(),
  lessonname: z.string().optional(),
});
export const lessonBody = strictBody({
  lessonname: text('Lesson Name', { min: 3, max: 50, nonblank: true }),
  lessondescription: optionalText('Lesson description', { min: 3, max: 500, nonblank: true }),
  lessonorder: number('Lesson order', { int: true, min: 0, max: 2147483647 }),
  // Required, as the admin UI sends them, and then ignored: a
  // lesson is worth 100 points and passing is 0 (contract §13).
  total_points: number('Total Points', { int: true, min: 0 }),
  levelid: guid('level ID'),
  passing_points: number('Lesson Lesson Passing Points'),
});
type LessonBody = z.infer<typeof lessonBody>;

/** What a lesson looks like in the paged list and `GET /lesson/:lessonid`. */
const ITEM_COLUMNS = [
  'ls.levelid',
  'ls.lessondescription',
  'ls.isdeleted',
  'ls.lessonid',
  'ls.lessonname',
  'ls.lessonorder',
  'ls.lessonstatus',
  'lv.levelname',
  'ls.total_points',
  'ls.learning_points',
  'ls.passing_points',
];

/** The lesson picker: active, live lessons of a level whose name contains the text, by name. */
export async function allLessons(db: Knex, q: z.infer<typeof lessonAllQuery>, curricula: Curricula) {
  const query = db('lessons')
    .where({ isdeleted: false, lessonstatus: true })
    .orderBy([{ column: 'lessonname' }, { column: 'lessonid' }]);
  if (curricula) query.whereIn('levelid', levelsUnder(db, curricula));
  if (q.levelid) query.where('levelid', q.levelid);
  const name = (q.lesson || q.lessonname || '').trim();
  if (name) whereContains(query, 'lessonname', name);
  return readRows(query.select());
}

export async function getLesson(db: Knex, lessonid: string) {
  const [row] = await readRows(
    db('lessons as ls')
      .leftJoin('levels as lv', 'lv.levelid', 'ls.levelid')
      .where({ 'ls.lessonid': lessonid, 'ls.isdeleted': false })
      .select(ITEM_COLUMNS)
      .limit(1),
  );
  if (!row) throw httpError(400, INVALID_LESSON);
  return row;
}

export async function listLessons(db: Knex, body: Paging, curricula: Curricula) {
  const base = db('lessons as ls').leftJoin('levels as lv', 'lv.levelid', 'ls.levelid').where('ls.isdeleted', false);
  if (curricula) base.whereIn('ls.levelid', levelsUnder(db, curricula));
  applyFilters(base, body, (k) => `ls.${k}`);
  return pageRows(
    base,
    body,
    [{ column: 'ls.levelid' }, { column: 'ls.lessonorder' }, { column: 'ls.lessonid' }],
    ITEM_COLUMNS,
  );
}

/**
 * Live lessons among `ids`, locked (in id order) for the rest of the transaction on PostgreSQL, so that
 * two writes to one lesson's items take turns and the second spreads the points the first committed.
 */
export async function lockLessons(
  trx: Knex,
  ids: string[],
): Promise<Map<string, { lessonid: string; levelid: string }>> {
  const rows = (await trx('lessons')
    .whereIn('lessonid', [...new Set(ids)])
    .where({ isdeleted: false })
    .orderBy('lessonid')
    .forNoKeyUpdate()
    .select('lessonid', 'levelid')) as Array<{ lessonid: string; levelid: string }>;
  return new Map(rows.map((r) => [r.lessonid, r]));
}

/** The level a lesson goes under is live (read, not locked: locks are taken lesson, then level, then grade). */
async function requireLevel(trx: Knex, levelid: string): Promise<void> {
  if (!(await trx('levels').where({ levelid, isdeleted: false }).first('levelid'))) throw httpError(400, INVALID_LEVEL);
}

async function nameTaken(trx: Knex, levelid: string, lessonname: string, except?: string): Promise<boolean> {
  const q = trx('lessons').where({ levelid, isdeleted: false }).whereRaw('lower(lessonname) = lower(?)', [lessonname]);
  if (except) q.whereNot({ lessonid: except });
  return !!(await q.first('lessonid'));
}

const fullRow = (trx: Knex, lessonid: string) => trx('lessons').where({ lessonid }).first();

/** `lessonid`: given by the demo seed, whose rows have fixed ids; a request's lesson gets a new one. */
export function createLesson(db: Knex, body: LessonBody, by: string | null, lessonid: string = crypto.randomUUID()) {
  return writeTransaction(db, LESSON_EXISTS, async (trx) => {
    await requireLevel(trx, body.levelid);
    if (await nameTaken(trx, body.levelid, body.lessonname)) throw httpError(400, LESSON_EXISTS);
    await trx('lessons').insert({
      lessonid,
      levelid: body.levelid,
      lessonname: body.lessonname,
      lessondescription: body.lessondescription ?? null,
      lessonorder: body.lessonorder,
      lessonstatus: true,
      isdeleted: false,
      lessonpasspercentage: 80,
      practicecount: 0,
      quizcount: 0,
      total_points: LESSON_TOTAL_POINTS,
      brick_points: 0,
      passing_points: 0,
      learning_points: 0,
      practices_points: 0,
      quizzes_points: 0,
      created_by: by,
      updated_by: by,
    });
    await recomputeLessons(trx, [lessonid]);
    return fullRow(trx, lessonid);
  });
}

/** Name, description, order and level as sent; 100 points, 0 to pass; both levels' points when it moves. */
export function updateLesson(db: Knex, lessonid: string, body: LessonBody, by: string | null) {
  return writeTransaction(db, LESSON_EXISTS, async (trx) => {
    const lesson = (await lockLessons(trx, [lessonid])).get(lessonid);
    if (!lesson) throw httpError(400, INVALID_LESSON);
    await requireLevel(trx, body.levelid);
    if (await nameTaken(trx, body.levelid, body.lessonname, lessonid)) throw httpError(400, LESSON_EXISTS);
    await trx('lessons').where({ lessonid }).update({
      lessonname: body.lessonname,
      lessondescription: body.lessondescription ?? null,
      lessonorder: body.lessonorder,
      levelid: body.levelid,
      total_points: LESSON_TOTAL_POINTS,
      passing_points: 0,
      updated_at: now(),
      updated_by: by,
    });
    await recomputeLessons(trx, [lessonid], [lesson.levelid]);
    return fullRow(trx, lessonid);
  });
}

export function deleteLesson(db: Knex, lessonid: string, by: string | null): Promise<true> {
  return writeTransaction(db, undefined, async (trx) => {
    const lesson = (await lockLessons(trx, [lessonid])).get(lessonid);
    if (!lesson) throw httpError(400, INVALID_LESSON);
    await trx('lessons').where({ lessonid }).update({ isdeleted: true, deleted_at: now(), deleted_by: by });
    await recomputeLevels(trx, [lesson.levelid]);
    return true as const;
  });
}

export async function setLessonStatus(db: Knex, lessonid: string, lessonstatus: boolean): Promise<true> {
  const n = await db('lessons').where({ lessonid, isdeleted: false }).update({ lessonstatus });
  if (!n) throw httpError(400, INVALID_LESSON);
  return true;
}

export async function updateRewardPoints(db: Knex, by: string | null): Promise<true> {
  await db.transaction((trx) => recomputeAllLessons(trx, by));
  return true;
}
