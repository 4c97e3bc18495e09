import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * Learners whose identity was erased at central (on request, or by the retention of inactive learners),
 * one row each: the mark that makes erasure happen at most once per learner, whichever instance runs it,
 * and the pending erasure of each school (`rosterpushedat` stays empty until a roster carrying the
 * anonymised learner reached the school's classroom server). The row holds ids and the non-identifying
 * token the learner's sign-in name was replaced with, never the erased fields.
 *
 * Expand only: a new table that the previous release neither reads nor writes.
 */
export const learnerErasureTables: TableSpec[] = [
  {
    name: 'learnererasures',
    primary: ['studentid'],
    indexes: [['schoolname', 'rosterpushedat']],
    columns: [
      { name: 'studentid', type: 'string', length: 36 },
      { name: 'schooluserid', type: 'string', length: 36, nullable: true },
      { name: 'schoolname', type: 'string', length: 250, nullable: true },
      { name: 'token', type: 'string', length: 45 },
      /** request (a superadmin's erasure) or retention (LEARNER_RETENTION_YEARS). */
      { name: 'reason', type: 'string', length: 16 },
      { name: 'erasedat', type: 'timestamp', default: 'now' },
      { name: 'erasedby', type: 'string', length: 36, nullable: true },
      { name: 'rosterpushedat', type: 'timestamp', nullable: true },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, learnerErasureTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, learnerErasureTables);
}
