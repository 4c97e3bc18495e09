import type { Knex } from '@lms/db';

/**
 * The points model of a curriculum (contract §13), in one place. Every write that changes a lesson's
 * learnings, practices or quizzes, or a lesson or level itself, calls the matching recompute inside the
 * same transaction, so that:
 *  - a live lesson's `total_points` is 100 and its components' points add up to it (when it has any);
 *  - a level's `points` is the sum of its live lessons' `total_points` plus its `quiz_points`;
 *  - a grade's `points` is the sum of its live levels' `points`.
 * Client-sent points are never trusted: these functions overwrite them.
 *
 * Any number of lessons, levels or grades is recomputed in a fixed number of statements (reads in
 * chunks of ids; writes grouped by the value they set), so the two bulk routes cost about what one
 * lesson does. On PostgreSQL the rows whose sums are rewritten are locked first (lessons, then levels,
 * then grades, each in id order, the one order every writer takes): two transactions changing the same
 * lesson or level take turns, and the second sums what the first committed.
 */
export const LESSON_TOTAL_POINTS = 100;

const COMPONENTS = [
  { table: 'lessonlearnings', id: 'lessonlearningid', order: 'lessonlearningorder' },
  { table: 'lessonpractices', id: 'lessonpracticeid', order: 'lessonpracticeorder' },
  { table: 'lessonquizzes', id: 'lessonquizid', order: 'lessonquizorder' },
] as const;

/** Ids per statement: well below SQLite's bound-parameter limit, and a short IN list for PostgreSQL. */
const CHUNK = 500;

function chunks<T>(list: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) out.push(list.slice(i, i + CHUNK));
  return out;
}

const distinctSorted = (ids: Iterable<string | null | undefined>): string[] =>
  [...new Set([...ids].filter((x): x is string => typeof x === 'string' && x !== ''))].sort();

/** Rows read in chunks of ids, the chunks in order (so that locks are taken in id order). */
async function readIn<T>(ids: string[], read: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (const c of chunks(ids)) out.push(...(await read(c)));
  return out;
}

/** Sets `values` on the rows of `ids`, one statement per distinct value set (and chunk). */
async function writeGrouped(
  trx: Knex,
  table: string,
  idColumn: string,
  rows: Array<{ id: string; values: Record<string, unknown> }>,
): Promise<void> {
  const groups = new Map<string, { values: Record<string, unknown>; ids: string[] }>();
  for (const r of rows) {
    const key = JSON.stringify(r.values);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { values: r.values, ids: [] }));
    g.ids.push(r.id);
  }
  for (const g of groups.values())
    for (const c of chunks(g.ids)) await trx(table).whereIn(idColumn, c).update(g.values);
}

interface Spread {
  lessonid: string;
  brick: number;
  counts: [number, number, number];
  /** The component that takes the remainder: its kind (index in COMPONENTS) and id; none without components. */
  last?: { kind: number; id: string };
  remainder: number;
}

/**
 * Spreads 100 points over a lesson's learnings, practices and quizzes: each gets floor(100 / n), the
 * remainder goes to the last quiz (else the last practice, else the last learning) by their order
 * (ties by id). A lesson without components keeps its 100 points with none spread.
 */
function spread(lessonid: string, lists: Array<Array<{ id: string; ord: number | null }>>): Spread {
  const n = lists.reduce((s, l) => s + l.length, 0);
  const brick = n ? Math.floor(LESSON_TOTAL_POINTS / n) : 0;
  const remainder = n ? LESSON_TOTAL_POINTS - brick * n : 0;
  let last: Spread['last'];
  for (let kind = COMPONENTS.length - 1; kind >= 0 && !last; kind -= 1) {
    const l = lists[kind];
    if (!l.length) continue;
    const top = l.reduce((a, b) =>
      (b.ord ?? 0) > (a.ord ?? 0) || ((b.ord ?? 0) === (a.ord ?? 0) && b.id > a.id) ? b : a,
    );
    last = { kind, id: top.id };
  }
  return { lessonid, brick, counts: [lists[0].length, lists[1].length, lists[2].length], last, remainder };
}

/**
 * Recomputes the lessons' component points and totals, then their levels and grades. `alsoLevels`: levels
 * to recompute with them (the one a lesson moved away from), so that every level is locked before any grade.
 */
export async function recomputeLessons(
  trx: Knex,
  lessonids: Iterable<string>,
  alsoLevels: Iterable<string> = [],
): Promise<void> {
  const ids = distinctSorted(lessonids);
  if (!ids.length) {
    await recomputeLevels(trx, alsoLevels);
    return;
  }
  const lessons = await readIn(
    ids,
    (c) =>
      trx('lessons')
        .whereIn('lessonid', c)
        .orderBy('lessonid')
        .forNoKeyUpdate()
        .select('lessonid', 'levelid') as Promise<Array<{ lessonid: string; levelid: string }>>,
  );
  if (!lessons.length) {
    await recomputeLevels(trx, alsoLevels);
    return;
  }
  const found = lessons.map((l) => l.lessonid);
  const byLesson = new Map<string, Array<Array<{ id: string; ord: number | null }>>>(
    found.map((id) => [id, [[], [], []]]),
  );
  for (let kind = 0; kind < COMPONENTS.length; kind += 1) {
    const c = COMPONENTS[kind];
    const rows = await readIn(
      found,
      (part) =>
        trx(c.table).whereIn('lessonid', part).select(`${c.id} as id`, 'lessonid', `${c.order} as ord`) as Promise<
          Array<{ id: string; lessonid: string; ord: number | null }>
        >,
    );
    for (const r of rows)
      byLesson.get(r.lessonid)?.[kind].push({ id: r.id, ord: r.ord === null ? null : Number(r.ord) });
  }
  const spreads = found.map((id) => spread(id, byLesson.get(id)!));

  for (let kind = 0; kind < COMPONENTS.length; kind += 1) {
    const c = COMPONENTS[kind];
    // Every component of a lesson gets its brick; the last one then gets brick + remainder.
    const withKind = spreads.filter((s) => s.counts[kind] > 0);
    await writeGrouped(
      trx,
      c.table,
      'lessonid',
      withKind.map((s) => ({ id: s.lessonid, values: { points: s.brick } })),
    );
    const lasts = withKind.filter((s) => s.last?.kind === kind && s.remainder > 0);
    await writeGrouped(
      trx,
      c.table,
      c.id,
      lasts.map((s) => ({ id: s.last!.id, values: { points: s.brick + s.remainder } })),
    );
  }
  const sumOf = (s: Spread, kind: number) => s.counts[kind] * s.brick + (s.last?.kind === kind ? s.remainder : 0);
  await writeGrouped(trx, 'lessons', 'lessonid', spreads.map((s) => ({
    id: s.lessonid,
    values: {
      total_points: LESSON_TOTAL_POINTS,
      brick_points: s.brick,
      learning_points: sumOf(s, 0),
      practices_points: sumOf(s, 1),
      quizzes_points: sumOf(s, 2),
      practicecount: s.counts[1],
      quizcount: s.counts[2],
    },
  })));
  await recomputeLevels(trx, [...lessons.map((l) => l.levelid), ...alsoLevels]);
}

/**
 * Levels' points: their live lessons' total points plus their quiz points; then their grades, with
 * `alsoGrades` (the one a level moved away from).
 */
export async function recomputeLevels(
  trx: Knex,
  levelids: Iterable<string>,
  alsoGrades: Iterable<string> = [],
): Promise<void> {
  const ids = distinctSorted(levelids);
  if (!ids.length) {
    await recomputeGrades(trx, alsoGrades);
    return;
  }
  const levels = await readIn(
    ids,
    (c) =>
      trx('levels')
        .whereIn('levelid', c)
        .orderBy('levelid')
        .forNoKeyUpdate()
        .select('levelid', 'gradeid', 'quiz_points') as Promise<
        Array<{ levelid: string; gradeid: string; quiz_points: number | null }>
      >,
  );
  if (!levels.length) {
    await recomputeGrades(trx, alsoGrades);
    return;
  }
  const sums = new Map<string, number>();
  const rows = await readIn(
    levels.map((l) => l.levelid),
    (c) =>
      trx('lessons')
        .whereIn('levelid', c)
        .where({ isdeleted: false })
        .groupBy('levelid')
        .select('levelid')
        .sum({ s: 'total_points' }) as Promise<Array<{ levelid: string; s: number | string | null }>>,
  );
  for (const r of rows) sums.set(r.levelid, Number(r.s ?? 0));
  await writeGrouped(
    trx,
    'levels',
    'levelid',
    levels.map((l) => ({ id: l.levelid, values: { points: (sums.get(l.levelid) ?? 0) + Number(l.quiz_points ?? 0) } })),
  );
  await recomputeGrades(trx, [...levels.map((l) => l.gradeid), ...alsoGrades]);
}

/** Grades' points: the sum of their live levels' points. */
export async function recomputeGrades(trx: Knex, gradeids: Iterable<string>): Promise<void> {
  const ids = distinctSorted(gradeids);
  if (!ids.length) return;
  const grades = await readIn(
    ids,
    (c) =>
      trx('grades').whereIn('gradeid', c).orderBy('gradeid').forNoKeyUpdate().select('gradeid') as Promise<
        Array<{ gradeid: string }>
      >,
  );
  const sums = new Map<string, number>();
  const rows = await readIn(
    grades.map((g) => g.gradeid),
    (c) =>
      trx('levels')
        .whereIn('gradeid', c)
        .where({ isdeleted: false })
        .groupBy('gradeid')
        .select('gradeid')
        .sum({ s: 'points' }) as Promise<Array<{ gradeid: string; s: number | string | null }>>,
  );
  for (const r of rows) sums.set(r.gradeid, Number(r.s ?? 0));
  await writeGrouped(
    trx,
    'grades',
    'gradeid',
    grades.map((g) => ({ id: g.gradeid, values: { points: sums.get(g.gradeid) ?? 0 } })),
  );
}

/** One lesson's components, then its level and grade. */
export const recomputeLesson = (trx: Knex, lessonid: string): Promise<void> => recomputeLessons(trx, [lessonid]);
/** One level, then its grade. */
export const recomputeLevel = (trx: Knex, levelid: string): Promise<void> => recomputeLevels(trx, [levelid]);
/** One grade. */
export const recomputeGrade = (trx: Knex, gradeid: string): Promise<void> => recomputeGrades(trx, [gradeid]);

/**
 * `POST /lesson/update_reward_points`: every active, live lesson back to 100 points and 0 passing
 * points, its components spread again; then the levels and grades above them.
 */
export async function recomputeAllLessons(trx: Knex, by: string | null = null): Promise<void> {
  const ids = (
    await trx('lessons')
      .where({ isdeleted: false, lessonstatus: true })
      .orderBy('lessonid')
      .forNoKeyUpdate()
      .select('lessonid')
  ).map((l: { lessonid: string }) => l.lessonid);
  const stamp = new Date().toISOString();
  await writeGrouped(
    trx,
    'lessons',
    'lessonid',
    ids.map((id) => ({ id, values: { passing_points: 0, updated_at: stamp, updated_by: by } })),
  );
  await recomputeLessons(trx, ids);
}

/** `POST /level/update_quiz_points`: every active, live level's quiz points set to 100; then levels and grades. */
export async function resetAllLevelQuizPoints(trx: Knex, by: string | null = null): Promise<void> {
  const ids = (
    await trx('levels')
      .where({ isdeleted: false, levelstatus: true })
      .orderBy('levelid')
      .forNoKeyUpdate()
      .select('levelid')
  ).map((l: { levelid: string }) => l.levelid);
  const stamp = new Date().toISOString();
  await writeGrouped(
    trx,
    'levels',
    'levelid',
    ids.map((id) => ({ id, values: { quiz_points: LESSON_TOTAL_POINTS, updated_at: stamp, updated_by: by } })),
  );
  await recomputeLevels(trx, ids);
}
