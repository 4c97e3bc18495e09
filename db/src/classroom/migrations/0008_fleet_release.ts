import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * The box release central offers this box (one row, id 1, replaced at each sync; none when central offers
 * none), which the box's updater reads, and the updater's outcome of each release it tried, kept until the
 * agent delivered it to central (`sentat`). Expand only: new tables the previous release ignores.
 */
export const fleetReleaseTables: TableSpec[] = [
  {
    name: 'fleetrelease',
    primary: ['id'],
    columns: [
      { name: 'id', type: 'integer' },
      { name: 'releaseid', type: 'string', length: 36 },
      { name: 'version', type: 'string', length: 64 },
      { name: 'repourl', type: 'string', length: 500 },
      { name: 'keyfingerprint', type: 'string', length: 64 },
      { name: 'offeredat', type: 'timestamp', default: 'now' },
    ],
  },
  {
    name: 'fleetreleasereports',
    primary: ['releaseid'],
    columns: [
      { name: 'releaseid', type: 'string', length: 36 },
      { name: 'outcome', type: 'string', length: 16 },
      { name: 'fromversion', type: 'string', length: 64, nullable: true },
      { name: 'message', type: 'text', nullable: true },
      { name: 'at', type: 'timestamp', default: 'now' },
      { name: 'sentat', type: 'timestamp', nullable: true },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, fleetReleaseTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, fleetReleaseTables);
}
