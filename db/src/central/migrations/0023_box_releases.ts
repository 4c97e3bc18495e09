import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * Releases of the classroom box's package, rolled out to the fleet in stages: a release names its version, the
 * signed apt repository that holds it and the fingerprint of the key that signs the repository; its stage is
 * the set of boxes it is offered to (chosen boxes, a percentage of the fleet by a stable hash, or all). Each
 * box's outcome is kept per release; a failure or a rollback pauses the release.
 *
 * Expand only: new tables; the previous release neither reads nor writes them.
 */
export const boxReleaseTables: TableSpec[] = [
  {
    name: 'boxreleases',
    primary: ['releaseid'],
    unique: [['version']],
    columns: [
      { name: 'releaseid', type: 'string', length: 36 },
      { name: 'version', type: 'string', length: 64 },
      { name: 'repourl', type: 'string', length: 500 },
      { name: 'keyfingerprint', type: 'string', length: 64 },
      { name: 'notes', type: 'text', nullable: true },
      /** staged (offered to no box yet), rolling, paused or withdrawn. */
      { name: 'state', type: 'string', length: 16, default: 'staged' },
      /** JSON array of the box ids chosen by name. */
      { name: 'stageboxids', type: 'text', default: '[]' },
      { name: 'stagepercent', type: 'integer', default: 0 },
      { name: 'stageall', type: 'boolean', default: false },
      { name: 'pausedreason', type: 'text', nullable: true },
      { name: 'createdat', type: 'timestamp', default: 'now' },
      { name: 'createdby', type: 'string', length: 36, nullable: true },
      { name: 'updatedat', type: 'timestamp', default: 'now' },
    ],
  },
  {
    name: 'boxreleasereports',
    primary: ['releaseid', 'boxid'],
    indexes: [['boxid']],
    columns: [
      { name: 'releaseid', type: 'string', length: 36 },
      { name: 'boxid', type: 'string', length: 36 },
      /** installed, failed or rolledback. */
      { name: 'outcome', type: 'string', length: 16 },
      { name: 'fromversion', type: 'string', length: 64, nullable: true },
      { name: 'message', type: 'text', nullable: true },
      { name: 'at', type: 'timestamp', default: 'now' },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, boxReleaseTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, boxReleaseTables);
}
