import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * The settings the box took from central (docs/fleet-protocol.md, "Settings"): at most one row (`id` = 1)
 * with the effective settings central answered and their version, kept so that a restart applies them before
 * the first contact and the box reports the version it applied. Expand only: a new table.
 */
export const fleetSettingsTables: TableSpec[] = [
  {
    name: 'fleetsettings',
    primary: ['id'],
    columns: [
      { name: 'id', type: 'integer' },
      { name: 'version', type: 'integer', default: 0 },
      { name: 'settings', type: 'json' },
      { name: 'appliedat', type: 'timestamp', default: 'now' },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, fleetSettingsTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, fleetSettingsTables);
}
