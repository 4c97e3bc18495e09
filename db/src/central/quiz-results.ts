import type { Knex } from 'knex';
import type { TableSpec } from '../tables';
import { createRowTriggers, dropRowTriggers, type RowTriggers } from './row-triggers';

/**
 * `studentquizresults`: per learner, quiz (or level) reference and result type, the two attempts the reports
 * rank by: the best one (a pass before a fail, the earliest pass, else the latest fail, then the smallest id)
 * and the last one (the latest start, then the largest id). The reports rank these rows, one per quiz a
 * learner has tried, instead of every attempt, so that their cost follows the learners and the curriculum
 * rather than the years of results behind them. Both orders are total orders on attempts, so the best of a
 * lesson or level is the best of its quizzes' bests, and the last completed quiz is the last attempt of the
 * quiz that ranks first.
 *
 * Kept by triggers on `studentprogress`, in the writing transaction: every writer (the log import, a
 * previous release's import while an upgrade rolls, the takeover's COPY and `--again`, seeds) keeps it right
 * without knowing of it. A new or changed attempt is compared with the two kept ones (one keyed upsert); only
 * when the attempt that was kept changes or goes away is its quiz recomputed from its own attempts.
 */
export const QUIZ_RESULTS = 'studentquizresults';

export const quizResultTables: TableSpec[] = [
  {
    name: QUIZ_RESULTS,
    primary: ['studentid', 'studentprogressreferenceid', 'progresstype'],
    columns: [
      { name: 'studentid', type: 'string', length: 36 },
      { name: 'studentprogressreferenceid', type: 'string', length: 36 },
      { name: 'progresstype', type: 'integer' },
      { name: 'bestprogressid', type: 'string', length: 36 },
      { name: 'bestispass', type: 'boolean' },
      { name: 'beststarttime', type: 'timestamp' },
      { name: 'lastprogressid', type: 'string', length: 36 },
      { name: 'laststarttime', type: 'timestamp' },
    ],
  },
];

const T = QUIZ_RESULTS;
const COLUMNS = 'studentid, studentprogressreferenceid, progresstype, bestprogressid, bestispass, beststarttime, '
  + 'lastprogressid, laststarttime';

/** Keeps the better of the kept row and the incoming one (`excluded`), for each of the two attempts. */
const MERGE = (() => {
  const better =
    `(excluded.bestispass AND NOT ${T}.bestispass) OR (excluded.bestispass = ${T}.bestispass AND (` +
    `(CASE WHEN excluded.bestispass THEN excluded.beststarttime < ${T}.beststarttime ` +
    `ELSE excluded.beststarttime > ${T}.beststarttime END) OR ` +
    `(excluded.beststarttime = ${T}.beststarttime AND excluded.bestprogressid < ${T}.bestprogressid)))`;
  const later =
    `excluded.laststarttime > ${T}.laststarttime OR ` +
    `(excluded.laststarttime = ${T}.laststarttime AND excluded.lastprogressid > ${T}.lastprogressid)`;
  const pick = (cond: string, col: string) => `${col} = CASE WHEN ${cond} THEN excluded.${col} ELSE ${T}.${col} END`;
  return `ON CONFLICT (studentid, studentprogressreferenceid, progresstype) DO UPDATE SET ` +
    [pick(better, 'bestprogressid'), pick(better, 'bestispass'), pick(better, 'beststarttime'),
      pick(later, 'lastprogressid'), pick(later, 'laststarttime')].join(', ');
})();

const BEST_ORDER = 'ispass DESC, CASE WHEN ispass THEN starttime END ASC, starttime DESC, studentprogressid ASC';
const LAST_ORDER = 'starttime DESC, studentprogressid DESC';

/** The statements a trigger runs for the row `OLD` (changed or deleted) and `NEW` (inserted or changed). */
function triggerStatements(op: 'insert' | 'update' | 'delete'): string[] {
  const out: string[] = [];
  if (op !== 'insert') {
    const key = (a: string) =>
      `${a}studentid = OLD.studentid AND ${a}studentprogressreferenceid = OLD.studentprogressreferenceid ` +
      `AND ${a}progresstype = OLD.progresstype`;
    const kept = `EXISTS (SELECT 1 FROM ${T} k WHERE ${key('k.')} ` +
      `AND (k.bestprogressid = OLD.studentprogressid OR k.lastprogressid = OLD.studentprogressid))`;
    // The kept attempt changed or went away: recompute its quiz from the quiz's own attempts.
    out.push(
      `INSERT INTO ${T} (${COLUMNS}) SELECT b.studentid, b.studentprogressreferenceid, b.progresstype, ` +
      `b.studentprogressid, b.ispass, b.starttime, l.studentprogressid, l.starttime FROM ` +
      `(SELECT studentid, studentprogressreferenceid, progresstype, studentprogressid, ispass, starttime ` +
      `FROM studentprogress WHERE ${key('')} ORDER BY ${BEST_ORDER} LIMIT 1) b, ` +
      `(SELECT studentprogressid, starttime FROM studentprogress WHERE ${key('')} ORDER BY ${LAST_ORDER} LIMIT 1) l ` +
      `WHERE ${kept} ON CONFLICT (studentid, studentprogressreferenceid, progresstype) DO UPDATE SET ` +
      `bestprogressid = excluded.bestprogressid, bestispass = excluded.bestispass, ` +
      `beststarttime = excluded.beststarttime, lastprogressid = excluded.lastprogressid, ` +
      `laststarttime = excluded.laststarttime`,
    );
    out.push(`DELETE FROM ${T} WHERE ${key('')} AND NOT EXISTS (SELECT 1 FROM studentprogress p WHERE ${key('p.')})`);
  }
  if (op !== 'delete') {
    out.push(
      `INSERT INTO ${T} (${COLUMNS}) VALUES (NEW.studentid, NEW.studentprogressreferenceid, NEW.progresstype, ` +
      `NEW.studentprogressid, NEW.ispass, NEW.starttime, NEW.studentprogressid, NEW.starttime) ${MERGE}`,
    );
  }
  return out;
}

/** Only a change of a column the two orders or the key read needs the kept rows looked at again. */
const CHANGED = ['studentid', 'studentprogressreferenceid', 'progresstype', 'ispass', 'starttime', 'studentprogressid'];

const TRIGGERS: RowTriggers = { name: T, table: 'studentprogress', statements: triggerStatements, changed: CHANGED };

/** The triggers (and, on PostgreSQL, their function) that keep `studentquizresults`; safe to run again. */
export async function createQuizResultTriggers(knex: Knex, dialect: 'sqlite' | 'pg'): Promise<void> {
  await createRowTriggers(knex, dialect, TRIGGERS);
}

export async function dropQuizResultTriggers(knex: Knex, dialect: 'sqlite' | 'pg'): Promise<void> {
  await dropRowTriggers(knex, dialect, TRIGGERS);
}

/**
 * Fills `studentquizresults` from the attempts of `studentids`, merged with what the triggers may have kept
 * meanwhile (the merge keeps the better of both, so a back-fill racing an import loses nothing).
 */
export async function fillQuizResults(knex: Knex, studentids: string[]): Promise<void> {
  if (!studentids.length) return;
  const ids = studentids.map(() => '?').join(', ');
  const ranked = (order: string) =>
    `SELECT studentid, studentprogressreferenceid, progresstype, studentprogressid, ispass, starttime, ` +
    `row_number() OVER (PARTITION BY studentid, studentprogressreferenceid, progresstype ORDER BY ${order}) AS rn ` +
    `FROM studentprogress WHERE studentid IN (${ids})`;
  await knex.raw(
    `INSERT INTO ${T} (${COLUMNS}) SELECT b.studentid, b.studentprogressreferenceid, b.progresstype, ` +
    `b.studentprogressid, b.ispass, b.starttime, l.studentprogressid, l.starttime ` +
    `FROM (${ranked(BEST_ORDER)}) b JOIN (${ranked(LAST_ORDER)}) l ON l.studentid = b.studentid ` +
    `AND l.studentprogressreferenceid = b.studentprogressreferenceid ` +
    `AND l.progresstype = b.progresstype AND l.rn = 1 ` +
    `WHERE b.rn = 1 ${MERGE}`,
    [...studentids, ...studentids],
  );
}

/**
 * Back-fills every learner's rows, a batch of learners per statement (each its own short transaction when
 * `knex` is not one), so that no statement holds locks on a year of attempts at once.
 */
export async function backfillQuizResults(knex: Knex, batch = 200, progress?: (done: number) => void): Promise<number> {
  let after = '';
  let done = 0;
  for (;;) {
    const rows = (await knex('students').where('studentid', '>', after).orderBy('studentid').limit(batch)
      .select('studentid')) as Array<{ studentid: string }>;
    if (!rows.length) return done;
    await fillQuizResults(knex, rows.map((r) => r.studentid));
    done += rows.length;
    progress?.(done);
    after = rows[rows.length - 1].studentid;
  }
}
