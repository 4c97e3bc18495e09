import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * The log archive names (`logupload-<epoch ms>.zip`), claimed by each import before it stores the archive,
 * so that two instances receiving uploads in the same millisecond cannot write the same object: the
 * second claim of a name fails on the primary key and takes the next millisecond. A claim is committed
 * before the object is written and settled (`settled_at`) in the import's own transaction, so a claim
 * that stays unsettled names an archive of an import that never committed (a crash), which the
 * start-up and periodic sweep removes from the store.
 *
 * Expand only: a new table, back-filled with the names the log imports have used so far; the `syncs`
 * and `logfiles` rows keep the names as before, and a release without this table keeps working.
 */
export const logArchiveTables: TableSpec[] = [
  {
    name: 'logarchives',
    primary: ['archive'],
    indexes: [['settled_at', 'claimed_at']],
    columns: [
      { name: 'archive', type: 'string', length: 255 },
      { name: 'claimed_at', type: 'timestamp', default: 'now' },
      { name: 'settled_at', type: 'timestamp', nullable: true },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, logArchiveTables);
  // Names already used stay taken (and settled: their imports committed).
  await knex.raw(
    `INSERT INTO logarchives (archive, claimed_at, settled_at)
     SELECT filename, MIN(created_at), MIN(created_at) FROM syncs
     WHERE filename IS NOT NULL AND created_at IS NOT NULL GROUP BY filename`,
  );
  await knex.raw(
    `INSERT INTO logarchives (archive, claimed_at, settled_at)
     SELECT logfilename, MIN(created_at), MIN(created_at) FROM logfiles
     WHERE type = 2 AND created_at IS NOT NULL AND logfilename NOT IN (SELECT archive FROM logarchives) ` +
      'GROUP BY logfilename',
  );
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, logArchiveTables);
}
