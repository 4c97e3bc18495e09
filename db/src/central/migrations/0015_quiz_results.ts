import type { Knex } from 'knex';
import { createTables, dropTables } from '../../tables';
import type { MigrationContext } from '../../migrator';
import {
  backfillQuizResults, createQuizResultTriggers, dropQuizResultTriggers, QUIZ_RESULTS, quizResultTables,
} from '../quiz-results';

/**
 * The quiz results the reports rank (see ../quiz-results.ts): a new table, the triggers that keep it from
 * now on, then a back-fill of every learner's attempts, 200 learners a statement, each statement its own
 * transaction (the back-fill merges with what the triggers wrote meanwhile, so imports may run throughout).
 *
 * Expand only: the previous release neither reads nor writes the table, and its imports keep it right
 * through the triggers while an upgrade rolls. Safe to run again after it stopped halfway.
 */
export const config = { transaction: false };

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  if (!(await knex.schema.hasTable(QUIZ_RESULTS))) await createTables(knex, quizResultTables);
  if (ctx.dialect === 'pg') {
    // Creating a trigger takes a short lock on the attempts table: wait for it a bounded time, not behind
    // an import's whole transaction with every reader queued behind the request.
    await knex.transaction(async (trx) => {
      await trx.raw(`SET LOCAL lock_timeout = ${Math.round(ctx.lockTimeoutMs)}`);
      await createQuizResultTriggers(trx, ctx.dialect);
    });
  } else {
    await createQuizResultTriggers(knex, ctx.dialect);
  }
  await backfillQuizResults(knex);
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  await dropQuizResultTriggers(knex, ctx.dialect);
  await dropTables(knex, quizResultTables);
}
