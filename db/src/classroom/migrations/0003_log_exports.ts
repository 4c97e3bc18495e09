import type { Knex } from 'knex';

/**
 * One row per activity-log export that reached its last byte: when, by whom, how large. The teacher's
 * page shows the latest, so that a teacher can tell whether the log on a device is the newest one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('logexports', (t) => {
    t.string('logexportid', 36).primary();
    t.string('schooluserid', 36).notNullable();
    t.string('exported_at', 30).notNullable();
    t.integer('bytes').notNullable();
    t.index(['exported_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('logexports');
}
