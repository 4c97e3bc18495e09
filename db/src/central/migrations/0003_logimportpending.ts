import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * Activity rows from a classroom log whose learner (students.studentid) or school user
 * (schoolusers.schooluserid) central does not know yet. The log path never creates learners, and dropping
 * such a row would lose a learner's activity for good, so PUT /log/import parks it here, whole and as
 * normalised, keyed like its target table: a re-upload overwrites it instead of piling up copies, and the
 * next import that carries the row after the learner reaches central moves it into its table.
 */
export const logImportPendingTables: TableSpec[] = [
  {
    name: 'logimportpending',
    primary: ['tablename', 'rowid'],
    indexes: [['learnerid'], ['syncid']],
    columns: [
      { name: 'tablename', type: 'string', length: 45 },
      { name: 'rowid', type: 'string', length: 45 },
      /** The unknown studentid or schooluserid (null when the row named none). */
      { name: 'learnerid', type: 'string', length: 45, nullable: true },
      /** `unknown student`, `unknown school user`, or `result parked` for a question row of a parked result. */
      { name: 'reason', type: 'string', length: 45 },
      { name: 'rowdata', type: 'json' },
      /** The import (syncs.syncid) that last carried the row. */
      { name: 'syncid', type: 'string', length: 36 },
      { name: 'created_at', type: 'timestamp', nullable: true, default: 'now' },
      { name: 'updated_at', type: 'timestamp', nullable: true, default: 'now' },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, logImportPendingTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, logImportPendingTables);
}
