import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * The access record of learner data (central/src/access/record.ts): one row per request that returned,
 * changed or widened who may see a learner's identity, chained to the row before it by a SHA-256 hash,
 * and the learners each row names. Neither table holds personal data: ids, route, address and counts.
 *
 * `filter` is text, not JSON: the hash covers the exact characters written, which PostgreSQL's jsonb
 * would reorder. `at` is written by the service (milliseconds), not by the database, for the same reason.
 *
 * The superadmin filters by time, account and route (indexed, each with the time) and by learner.
 *
 * Expand only: two new tables that the previous release neither reads nor writes.
 */
export const accessRecordTables: TableSpec[] = [
  {
    name: 'accessrecord',
    primary: ['id'],
    indexes: [['at'], ['accountid', 'at'], ['route', 'at']],
    columns: [
      { name: 'id', type: 'increments' },
      { name: 'at', type: 'timestamp' },
      { name: 'requestid', type: 'string', length: 100, nullable: true },
      { name: 'accountid', type: 'string', length: 255, nullable: true },
      { name: 'accountkind', type: 'string', length: 20 },
      { name: 'method', type: 'string', length: 10 },
      { name: 'route', type: 'string', length: 255 },
      { name: 'path', type: 'text' },
      { name: 'client', type: 'string', length: 100, nullable: true },
      { name: 'stage', type: 'string', length: 20 },
      { name: 'outcome', type: 'integer', nullable: true },
      { name: 'learnercount', type: 'integer', nullable: true },
      { name: 'filter', type: 'text', nullable: true },
      { name: 'prevhash', type: 'string', length: 64 },
      { name: 'hash', type: 'string', length: 64 },
    ],
  },
  {
    name: 'accessrecordlearners',
    // No index leads with the learner: each entry's learners then land together at the end of the one
    // B-tree instead of on a page per learner, which kept the record's cost on a read of a whole school
    // several times higher. Finding one learner's entries (rare: a request to the data-protection officer)
    // reads the table through.
    primary: ['entryid', 'studentid'],
    columns: [
      { name: 'entryid', type: 'integer', references: { table: 'accessrecord', column: 'id', onDelete: 'CASCADE' } },
      { name: 'studentid', type: 'string', length: 255 },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, accessRecordTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, accessRecordTables);
}
