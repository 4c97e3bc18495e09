import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';
import type { MigrationContext } from '../../migrator';

/**
 * The box's own identity at central: at most one row (`id` = 1). The secret is generated on the box and
 * stays in its database (the database file is the service user's alone); central holds only its SHA-256.
 * Enrolling again replaces the row.
 *
 * `fleetchanges` is the box's journal of activity to send up: every insert or update of a row of the
 * activity log's tables adds (by trigger, in the writing transaction) one entry, numbered by the box's own
 * counter (`seq`, never reused), so that what is "new" never depends on the box's clock. Rows already on
 * the box when this runs are journaled once, so that the first sync sends them too. Entries central
 * acknowledged are deleted.
 *
 * Expand only: new tables and triggers; the previous release ignores them.
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
      /** The last journal entry central acknowledged, and when (central's time). */
      { name: 'ackedseq', type: 'double', default: 0 },
      { name: 'lastupat', type: 'timestamp', nullable: true },
    ],
  },
  {
    name: 'fleetchanges',
    columns: [
      { name: 'seq', type: 'increments' },
      { name: 'tablename', type: 'string', length: 40 },
      { name: 'rowkey', type: 'string', length: 64 },
    ],
  },
];

/** The activity log's tables and their keys (shared's LOG_PRIMARY_KEYS; repeated: a migration stays as written). */
export const JOURNALED: Record<string, string> = {
  studentprogress: 'studentprogressid',
  studentprogressquestions: 'studentprogressquestionid',
  rpiuseraccess: 'rpiuseraccessid',
  studentactives: 'studentactiveid',
  studentlearningsprogress: 'studentlearningprogressid',
  studentgradesprogress: 'studentgradeprogressid',
  studentlevelsprogress: 'studentlevelprogressid',
  studentlessonsprogress: 'studentlessonprogressid',
  studentpoints: 'studentpointid',
  studentappusages: 'studentappusageid',
};

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  await createTables(knex, fleetIdentityTables);
  for (const [table, key] of Object.entries(JOURNALED)) {
    await knex.raw(`INSERT INTO fleetchanges (tablename, rowkey) SELECT '${table}', ${key} FROM ${table} ` +
      `ORDER BY ${key}`);
    if (ctx.dialect === 'pg') {
      await knex.raw(`CREATE OR REPLACE FUNCTION fleet_journal_${table}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO fleetchanges (tablename, rowkey) VALUES ('${table}', NEW.${key});
  RETURN NULL;
END
$fn$`);
      for (const op of ['insert', 'update']) {
        await knex.raw(`CREATE TRIGGER fleet_journal_${table}_${op} AFTER ${op.toUpperCase()} ON ${table} ` +
          `FOR EACH ROW EXECUTE PROCEDURE fleet_journal_${table}()`);
      }
    } else {
      for (const op of ['insert', 'update']) {
        await knex.raw(`CREATE TRIGGER fleet_journal_${table}_${op} AFTER ${op.toUpperCase()} ON ${table} ` +
          `FOR EACH ROW BEGIN INSERT INTO fleetchanges (tablename, rowkey) VALUES ('${table}', NEW.${key}); END`);
      }
    }
  }
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  for (const table of Object.keys(JOURNALED)) {
    const on = ctx.dialect === 'pg' ? ` ON ${table}` : '';
    for (const op of ['insert', 'update']) await knex.raw(`DROP TRIGGER IF EXISTS fleet_journal_${table}_${op}${on}`);
    if (ctx.dialect === 'pg') await knex.raw(`DROP FUNCTION IF EXISTS fleet_journal_${table}()`);
  }
  await dropTables(knex, fleetIdentityTables);
}
