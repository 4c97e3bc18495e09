import type { Knex } from 'knex';
import type { TableSpec } from '../tables';
import { createRowTriggers, dropRowTriggers, type RowOp, type RowTriggers } from './row-triggers';

/**
 * `studentappusagetotals`: per school user, the sum of `time_spent` over all their `studentappusages` rows
 * and how many rows that is. The activity report without a window (`POST /report/studentstatus` and its
 * download) reads one row per learner here instead of summing every app-use row of their years.
 *
 * Kept by triggers on `studentappusages`, in the writing transaction, so that every writer (the log import,
 * a previous release's import while an upgrade rolls, the takeover's COPY and `--again`, deletes) keeps it
 * right without knowing of it: an insert adds its row, a delete takes it away, an update does both. A user
 * whose last row goes away loses their total row. Sums of whole (and half, quarter…) seconds are exact.
 */
export const APP_USAGE_TOTALS = 'studentappusagetotals';

export const appUsageTotalTables: TableSpec[] = [
  {
    name: APP_USAGE_TOTALS,
    primary: ['schooluserid'],
    columns: [
      { name: 'schooluserid', type: 'string', length: 36 },
      { name: 'time_spent', type: 'double', default: 0 },
      { name: 'usages', type: 'integer', default: 0 },
    ],
  },
];

const T = APP_USAGE_TOTALS;

function triggerStatements(op: RowOp): string[] {
  const out: string[] = [];
  if (op !== 'insert') {
    out.push(
      `UPDATE ${T} SET time_spent = time_spent - COALESCE(OLD.time_spent, 0), usages = usages - 1 ` +
        `WHERE schooluserid = OLD.schooluserid`,
    );
    out.push(`DELETE FROM ${T} WHERE schooluserid = OLD.schooluserid AND usages <= 0`);
  }
  if (op !== 'delete') {
    out.push(
      `INSERT INTO ${T} (schooluserid, time_spent, usages) VALUES (NEW.schooluserid, COALESCE(NEW.time_spent, 0), 1) ` +
        `ON CONFLICT (schooluserid) DO UPDATE SET time_spent = ${T}.time_spent + excluded.time_spent, ` +
        `usages = ${T}.usages + 1`,
    );
  }
  return out;
}

const CHANGED = ['schooluserid', 'time_spent'];
const TRIGGERS: RowTriggers = { name: T, table: 'studentappusages', statements: triggerStatements, changed: CHANGED };

/** The triggers (and, on PostgreSQL, their function) that keep `studentappusagetotals`; safe to run again. */
export async function createAppUsageTotalTriggers(knex: Knex, dialect: 'sqlite' | 'pg'): Promise<void> {
  await createRowTriggers(knex, dialect, TRIGGERS);
}

export async function dropAppUsageTotalTriggers(knex: Knex, dialect: 'sqlite' | 'pg'): Promise<void> {
  await dropRowTriggers(knex, dialect, TRIGGERS);
}

/**
 * Sets the totals of `schooluserids` from their rows. On PostgreSQL the caller's transaction first takes a
 * SHARE lock on `studentappusages` (writers wait for the statement, and it waits for theirs), so that no
 * row a concurrent writer's trigger adds is both left out of the sum and counted by that trigger.
 */
export async function fillAppUsageTotals(trx: Knex, dialect: 'sqlite' | 'pg', schooluserids: string[]): Promise<void> {
  if (!schooluserids.length) return;
  if (dialect === 'pg') await trx.raw('LOCK TABLE studentappusages IN SHARE MODE');
  const ids = schooluserids.map(() => '?').join(', ');
  await trx.raw(`DELETE FROM ${T} WHERE schooluserid IN (${ids})`, schooluserids);
  await trx.raw(
    `INSERT INTO ${T} (schooluserid, time_spent, usages) SELECT schooluserid, SUM(COALESCE(time_spent, 0)), ` +
      `COUNT(*) FROM studentappusages WHERE schooluserid IN (${ids}) GROUP BY schooluserid`,
    schooluserids,
  );
}

/**
 * Back-fills the totals of every user with rows, a batch of users per transaction, so that no transaction holds its
 * lock for longer than one batch's sums. `lockTimeoutMs` bounds each wait for the lock on PostgreSQL; a
 * batch whose lock was not granted is tried again after a pause, `attempts` times in all.
 */
export async function backfillAppUsageTotals(
  knex: Knex,
  dialect: 'sqlite' | 'pg',
  o: { batch?: number; lockTimeoutMs?: number; attempts?: number } = {},
): Promise<number> {
  const batch = o.batch ?? 500;
  let after = '';
  let done = 0;
  for (;;) {
    // The next users that have rows, one probe of the (schooluserid, …) index each: every row's user,
    // whether or not the user still exists, without reading the rows themselves.
    const ids: string[] = [];
    while (ids.length < batch) {
      const found = await knex('studentappusages')
        .where('schooluserid', '>', after)
        .min({ id: 'schooluserid' })
        .first();
      const next = found?.id as string | null | undefined;
      if (next == null) break;
      ids.push(next);
      after = next;
    }
    if (!ids.length) return done;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await knex.transaction(async (trx) => {
          if (dialect === 'pg' && o.lockTimeoutMs)
            await trx.raw(`SET LOCAL lock_timeout = ${Math.round(o.lockTimeoutMs)}`);
          await fillAppUsageTotals(trx, dialect, ids);
        });
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== '55P03' || attempt >= (o.attempts ?? 10)) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    done += ids.length;
  }
}
