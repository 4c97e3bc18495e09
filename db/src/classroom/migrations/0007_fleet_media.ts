import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * The media files the box fetched from central on the down path (into MEDIA_DIR), each with the SHA-256 it was
 * verified against: what the box holds without reading the files again, and the only files it removes when
 * central's list no longer names them (a file copied in by `sync-content` or by hand is never this table's).
 * `fleetdownreport` holds what the box applied and has not yet told central (one row, `pending`), so that a
 * link cut between applying and reporting loses no report. Expand only: new tables the previous release ignores.
 */
export const fleetMediaTables: TableSpec[] = [
  {
    name: 'fleetmedia',
    primary: ['name'],
    columns: [
      { name: 'name', type: 'string', length: 300 },
      { name: 'sha256', type: 'string', length: 64 },
      { name: 'size', type: 'double' },
      { name: 'fetchedat', type: 'timestamp', default: 'now' },
    ],
  },
  {
    name: 'fleetdownreport',
    primary: ['name'],
    columns: [
      { name: 'name', type: 'string', length: 20 },
      /** JSON: `[{kind, tag}]`, the last applied tag of each kind. */
      { name: 'applied', type: 'text' },
      { name: 'bytes', type: 'double', default: 0 },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, fleetMediaTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, fleetMediaTables);
}
