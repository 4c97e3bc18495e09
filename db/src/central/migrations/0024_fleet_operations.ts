import type { Knex } from 'knex';
import { addColumns, createTables, dropColumns, dropTables, type TableSpec } from '../../tables';

/**
 * Operating the fleet from central without visiting a box.
 *
 * `boxsettings`: settings a box takes from central, one row per level (`fleet` with an empty target, `school`
 * with a schoolid, `box` with a boxid), each holding only the settings set at that level (JSON). `version`
 * grows by one on every write of the row and rows are never deleted (a level is cleared by writing `{}`), so
 * the sum of the versions of the rows that apply to a box only ever grows: that sum is the box's wanted
 * settings version, with no shared counter for concurrent writers to race on.
 *
 * `boxdiagnostics`: a diagnostics request for a box and, once the box sent it on a later contact, what it
 * sent (a size-limited JSON body). Kept FLEET_DIAGNOSTICS_DAYS.
 *
 * `boxes` gains the settings version the box says it applied, and for a replacement the box it replaced and
 * what was lost with it (the old box's last reported rows waiting, its last good sync and last piece).
 *
 * Expand only: new tables and nullable columns; the previous release neither reads nor writes them.
 */
export const fleetOperationTables: TableSpec[] = [
  {
    name: 'boxsettings',
    primary: ['level', 'targetid'],
    columns: [
      /** fleet, school or box. */
      { name: 'level', type: 'string', length: 16 },
      { name: 'targetid', type: 'string', length: 36 },
      { name: 'settings', type: 'json' },
      { name: 'version', type: 'integer', default: 0 },
      { name: 'updatedat', type: 'timestamp', default: 'now' },
      { name: 'updatedby', type: 'string', length: 36, nullable: true },
    ],
  },
  {
    name: 'boxdiagnostics',
    primary: ['diagnosticid'],
    indexes: [['boxid', 'requestedat'], ['requestedat']],
    columns: [
      { name: 'diagnosticid', type: 'string', length: 36 },
      { name: 'boxid', type: 'string', length: 36 },
      { name: 'requestedat', type: 'timestamp', default: 'now' },
      { name: 'requestedby', type: 'string', length: 36, nullable: true },
      /** requested, then received. */
      { name: 'state', type: 'string', length: 16, default: 'requested' },
      { name: 'receivedat', type: 'timestamp', nullable: true },
      { name: 'bytes', type: 'integer', nullable: true },
      { name: 'body', type: 'text', nullable: true },
    ],
  },
];

export const fleetOperationColumns: TableSpec[] = [
  {
    name: 'boxes',
    columns: [
      /** The settings version the box said at its last contact that it applied. */
      { name: 'settingsversion', type: 'integer', nullable: true },
      { name: 'replacesboxid', type: 'string', length: 36, nullable: true },
      { name: 'replacedbyboxid', type: 'string', length: 36, nullable: true },
      /** What the replaced box had not sent: its rows waiting, as it last said, and its last good sync. */
      { name: 'lostrowswaiting', type: 'integer', nullable: true },
      { name: 'lostlastgoodat', type: 'timestamp', nullable: true },
      { name: 'lostlastupat', type: 'timestamp', nullable: true },
      { name: 'replacedat', type: 'timestamp', nullable: true },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, fleetOperationTables);
  for (const spec of fleetOperationColumns) await addColumns(knex, spec);
}

export async function down(knex: Knex): Promise<void> {
  for (const spec of fleetOperationColumns) await dropColumns(knex, spec);
  await dropTables(knex, fleetOperationTables);
}
