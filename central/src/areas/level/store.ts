import crypto from 'node:crypto';
import { readRows, whereContains, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { guid, number, optionalText, text } from '../../http/fields';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { now, writeTransaction } from '../../http/writes';
import { gradesUnder, type Curricula } from '../../http/scope';
import { LESSON_TOTAL_POINTS, recomputeLevels, resetAllLevelQuizPoints } from '../../content/points';

export const INVALID_LEVEL = 'Invalid Level id';
const INVALID_GRADE = 'Invalid Grade id';
const LEVEL_EXISTS = 'Level already exists';

export const levelParams = z.object({ levelid: guid('Level ID') });
export const levelListBody = pagingBody(['levelname', 'leveldescription']);
/** The admin UI sends `level`; `levelname` is read as well. */
export const levelAllQuery = z.looseObject({
  gradeid: z.string().optional(),
  level: z.string().optional(),
  levelname: z.string().optional(),
});
export const levelBody = strictBody({
  levelname: text('Level Name', { min: 3, max: 50, nonblank: true }),
  leveldescription: optionalText('Level description', { min: 3, max: 500, nonblank: true }),
  levelorder: number('Level order', { int: true, min: 0, max: 2147483647 }),
  gradeid: guid('Grade ID'),
  // Required, as the admin UI sends them, and then ignored: the points model sets them (contract §14).
  quiz_points: number('Lesson Level-Quiz Points'),
  passing_points: number('Lesson Level Passing Points'),
});
type LevelBody = z.infer<typeof levelBody>;

/** What a level looks like in the paged list and `GET /level/:levelid`. */
const ITEM_COLUMNS = [
  'l.gradeid',
  'l.leveldescription',
  'l.isdeleted',
  'l.levelid',
  'l.levelname',
  'l.levelorder',
  'l.levelstatus',
  'g.gradename',
  'l.quiz_points',
  'l.passing_points',
];

/** The level picker: active, live levels of a grade whose name contains the text, by name. */
export async function allLevels(db: Knex, q: z.infer<typeof levelAllQuery>, curricula: Curricula) {
  const query = db('levels')
    .where({ isdeleted: false, levelstatus: true })
    .orderBy([{ column: 'levelname' }, { column: 'levelid' }]);
  if (curricula) query.whereIn('gradeid', gradesUnder(db, curricula));
  if (q.gradeid) query.where('gradeid', q.gradeid);
  const name = (q.level || q.levelname || '').trim();
  if (name) whereContains(query, 'levelname', name);
  return readRows(query.select());
}

export async function getLevel(db: Knex, levelid: string) {
  const [row] = await readRows(
    db('levels as l')
      .leftJoin('grades as g', 'g.gradeid', 'l.gradeid')
      .where({ 'l.levelid': levelid, 'l.isdeleted': false })
      .select(ITEM_COLUMNS)
      .limit(1),
  );
  if (!row) throw httpError(400, INVALID_LEVEL);
  return row;
}

export async function listLevels(db: Knex, body: Paging, curricula: Curricula) {
  const base = db('levels as l').leftJoin('grades as g', 'g.gradeid', 'l.gradeid').where('l.isdeleted', false);
  if (curricula) base.whereIn('g.curriculumid', curricula);
  applyFilters(base, body, (k) => `l.${k}`);
  return pageRows(
    base,
    body,
    [{ column: 'l.gradeid' }, { column: 'l.levelorder' }, { column: 'l.levelid' }],
    ITEM_COLUMNS,
  );
}

/** A live level, locked for the rest of the transaction on PostgreSQL. */
export async function liveLevel(trx: Knex, levelid: string): Promise<{ levelid: string; gradeid: string } | undefined> {
  return trx('levels').where({ levelid, isdeleted: false }).forNoKeyUpdate().first('levelid', 'gradeid');
}

async function requireGrade(trx: Knex, gradeid: string): Promise<void> {
  if (!(await trx('grades').where({ gradeid, isdeleted: false }).first('gradeid'))) throw httpError(400, INVALID_GRADE);
}

/** A live level of the grade already has the name (case aside, as the unique index compares). */
async function nameTaken(trx: Knex, gradeid: string, levelname: string, except?: string): Promise<boolean> {
  const q = trx('levels').where({ gradeid, isdeleted: false }).whereRaw('lower(levelname) = lower(?)', [levelname]);
  if (except) q.whereNot({ levelid: except });
  return !!(await q.first('levelid'));
}

const fullRow = (trx: Knex, levelid: string) => trx('levels').where({ levelid }).first();

/** `levelid`: given by the demo seed, whose rows have fixed ids; a request's level gets a new one. */
export function createLevel(db: Knex, body: LevelBody, by: string | null, levelid: string = crypto.randomUUID()) {
  return writeTransaction(db, LEVEL_EXISTS, async (trx) => {
    await requireGrade(trx, body.gradeid);
    if (await nameTaken(trx, body.gradeid, body.levelname)) throw httpError(400, LEVEL_EXISTS);
    await trx('levels').insert({
      levelid,
      gradeid: body.gradeid,
      levelname: body.levelname,
      leveldescription: body.leveldescription ?? null,
      levelorder: body.levelorder,
      levelstatus: true,
      isdeleted: false,
      quiz_points: LESSON_TOTAL_POINTS,
      passing_points: 0,
      points: 0,
      created_by: by,
      updated_by: by,
    });
    await recomputeLevels(trx, [levelid]);
    return fullRow(trx, levelid);
  });
}

/**
 * Name, description, order and grade as sent; quiz and passing
 * points back to 100 and 0; both grades' points when it moves.
 */
export function updateLevel(db: Knex, levelid: string, body: LevelBody, by: string | null) {
  return writeTransaction(db, LEVEL_EXISTS, async (trx) => {
    const level = await liveLevel(trx, levelid);
    if (!level) throw httpError(400, INVALID_LEVEL);
    await requireGrade(trx, body.gradeid);
    if (await nameTaken(trx, body.gradeid, body.levelname, levelid)) throw httpError(400, LEVEL_EXISTS);
    await trx('levels').where({ levelid }).update({
      levelname: body.levelname,
      leveldescription: body.leveldescription ?? null,
      levelorder: body.levelorder,
      gradeid: body.gradeid,
      quiz_points: LESSON_TOTAL_POINTS,
      passing_points: 0,
      updated_at: now(),
      updated_by: by,
    });
    await recomputeLevels(trx, [levelid], [level.gradeid]);
    return fullRow(trx, levelid);
  });
}

export function deleteLevel(db: Knex, levelid: string, by: string | null): Promise<true> {
  return writeTransaction(db, undefined, async (trx) => {
    if (!(await liveLevel(trx, levelid))) throw httpError(400, INVALID_LEVEL);
    await trx('levels').where({ levelid }).update({ isdeleted: true, deleted_at: now(), deleted_by: by });
    await recomputeLevels(trx, [levelid]);
    return true as const;
  });
}

export async function setLevelStatus(db: Knex, levelid: string, levelstatus: boolean): Promise<true> {
  const n = await db('levels').where({ levelid, isdeleted: false }).update({ levelstatus });
  if (!n) throw httpError(400, INVALID_LEVEL);
  return true;
}

export async function updateQuizPoints(db: Knex, by: string | null): Promise<string> {
  await db.transaction((trx) => resetAllLevelQuizPoints(trx, by));
  return 'updated levels';
}
