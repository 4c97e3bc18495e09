import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * What the box took from central on the down path: per body (package, students, teachers) the version tag it
 * applied, and the one it refused with central's words, so that a refused version is not fetched again until
 * central's tag changes. Expand only: a new table the previous release ignores.
 */
export const fleetDownTables: TableSpec[] = [
  {
    name: 'fleetdown',
    primary: ['kind'],
    columns: [
      { name: 'kind', type: 'string', length: 20 },
      { name: 'appliedtag', type: 'string', length: 64, nullable: true },
      { name: 'appliedat', type: 'timestamp', nullable: true },
      { name: 'refusedtag', type: 'string', length: 64, nullable: true },
      { name: 'refusal', type: 'text', nullable: true },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, fleetDownTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, fleetDownTables);
}
