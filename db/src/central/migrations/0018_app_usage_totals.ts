import type { Knex } from 'knex';
import { createTables, dropTables } from '../../tables';
import type { MigrationContext } from '../../migrator';
import {
  APP_USAGE_TOTALS,
  appUsageTotalTables,
  backfillAppUsageTotals,
  createAppUsageTotalTriggers,
  dropAppUsageTotalTriggers,
} from '../app-usage-totals';

/**
 * Each user's app time in total (see ../app-usage-totals.ts): a new table, the triggers that keep it from
 * now on, then a back-fill of 500 users a transaction. Each back-fill transaction holds a SHARE lock on
 * `studentappusages` for its sums (imports writing app use wait for it, a few milliseconds, and it waits
 * for them, at most the migration's lock timeout, then tries that batch again).
 *
 * Expand only: the previous release neither reads nor writes the table, and its imports keep it right
 * through the triggers while an upgrade rolls. Safe to run again after it stopped halfway.
 */
export const config = { transaction: false };

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  if (!(await knex.schema.hasTable(APP_USAGE_TOTALS))) await createTables(knex, appUsageTotalTables);
  if (ctx.dialect === 'pg') {
    await knex.transaction(async (trx) => {
      await trx.raw(`SET LOCAL lock_timeout = ${Math.round(ctx.lockTimeoutMs)}`);
      await createAppUsageTotalTriggers(trx, ctx.dialect);
    });
  } else {
    await createAppUsageTotalTriggers(knex, ctx.dialect);
  }
  await backfillAppUsageTotals(knex, ctx.dialect, { lockTimeoutMs: ctx.lockTimeoutMs });
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  await dropAppUsageTotalTriggers(knex, ctx.dialect);
  await dropTables(knex, appUsageTotalTables);
}
