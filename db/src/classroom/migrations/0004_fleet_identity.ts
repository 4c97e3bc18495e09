import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * The box's own identity at central: at most one row (`id` = 1). The secret is generated on the box and
 * stays in its database (the database file is the service user's alone); central holds only its SHA-256.
 * Enrolling again replaces the row.
 */
export const fleetIdentityTables: TableSpec[] = [
  {
    name: 'fleetidentity',
    primary: ['id'],
    columns: [
      { name: 'id', type: 'integer' },
      { name: 'centralurl', type: 'string', length: 500 },
      { name: 'boxid', type: 'string', length: 36 },
      { name: 'schoolid', type: 'string', length: 36 },
      { name: 'secret', type: 'string', length: 64 },
      { name: 'enrolledat', type: 'timestamp' },
      { name: 'lastcontactat', type: 'timestamp', nullable: true },
      /** Central's time minus the box's, at the last contact. */
      { name: 'clockskewms', type: 'double', nullable: true },
      { name: 'lasterror', type: 'text', nullable: true },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, fleetIdentityTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, fleetIdentityTables);
}
