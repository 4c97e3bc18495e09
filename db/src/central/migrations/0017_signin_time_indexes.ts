import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline, type MigrationContext } from '../../migrator';

/**
 * The sign-in retention sweep (`SIGNIN_RETENTION_DAYS`, central/src/retention.ts) looks for rows older than a
 * date, every hour on every instance: without an index on the time alone each pass read the whole table
 * (the only index with `logintime` leads with the user). Sign-ins arrive in time order, so each index takes
 * its rows at one end. Built CONCURRENTLY on PostgreSQL (no lock against the import); the previous release
 * neither reads nor needs them.
 */
const ADDED: ReadonlyArray<{ name: string; table: string; columns: string[] }> = [
  { name: 'rpiuseraccess_logintime_idx', table: 'rpiuseraccess', columns: ['logintime'] },
  { name: 'lmsuseraccess_logintime_idx', table: 'lmsuseraccess', columns: ['logintime'] },
];

export const config = { transaction: false };

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  for (const i of ADDED) await createIndexOnline(knex, ctx, i.table, i.columns, i.name);
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  for (const i of ADDED) await dropIndexOnline(knex, ctx, i.name);
}
