import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline, type MigrationContext } from '../../migrator';

/**
 * App time read from the index alone: 0008's (schooluserid, created_at) index of studentappusages becomes
 * (schooluserid, created_at, time_spent), so that summing a learner's or a country's minutes never visits
 * the table. Replaced rather than added: the log import keeps writing one index of these rows, not two.
 *
 * Who reads it: GET /report/studentusage (a month of every school's app time, per country; on the
 * reports benchmark's 51 schools, SQLite 15 ms -> 2 ms for the sum) and POST /report/studentstatus and its
 * download (each learner's minutes in a window; on PostgreSQL the per-learner sub-plan becomes an
 * index-only scan, and the download's estimated cost falls below PostgreSQL's JIT threshold, which had
 * spent 0.5 s compiling a 90 ms query).
 */
const OLD = { columns: ['schooluserid', 'created_at'], name: 'studentappusages_user_time_index' };
const NEW = { columns: ['schooluserid', 'created_at', 'time_spent'], name: 'studentappusages_user_time_spent_index' };

// Built CONCURRENTLY on PostgreSQL (outside a transaction): the log import keeps writing this table meanwhile.
export const config = { transaction: false };

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  await createIndexOnline(knex, ctx, 'studentappusages', NEW.columns, NEW.name);
  await dropIndexOnline(knex, ctx, OLD.name);
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  await createIndexOnline(knex, ctx, 'studentappusages', OLD.columns, OLD.name);
  await dropIndexOnline(knex, ctx, NEW.name);
}
