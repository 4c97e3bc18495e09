import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline, type MigrationContext } from '../../migrator';

/**
 * Indexes every log import pays for and no query needs, dropped (each is a write per imported row and
 * disk per row kept):
 *  - `rpiuseraccess`: 0006 and 0008 both built (userid, logintime); 0006's stays;
 *  - `studentappusages` (studentappusageid, schooluserid) leads with the primary key's column, so it only
 *    repeats the primary key; the reports read 0009's (schooluserid, created_at, time_spent);
 *  - `studentprogress` (studentid) is the first column of 0008's ranking index, which serves every lookup
 *    by learner.
 * Dropped CONCURRENTLY on PostgreSQL (no lock against the import); the previous release's queries read the
 * remaining indexes the same way.
 */
const DROPPED: ReadonlyArray<{ name: string; table: string; columns: string[] }> = [
  { name: 'rpiuseraccess_user_time_index', table: 'rpiuseraccess', columns: ['userid', 'logintime'] },
  {
    name: 'studentappusages_studentappusageid_schooluserid_idx', table: 'studentappusages',
    columns: ['studentappusageid', 'schooluserid'],
  },
  { name: 'studentprogress_studentid_idx', table: 'studentprogress', columns: ['studentid'] },
];

export const config = { transaction: false };

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  for (const i of DROPPED) await dropIndexOnline(knex, ctx, i.name);
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  for (const i of DROPPED) await createIndexOnline(knex, ctx, i.table, i.columns, i.name);
}
