import type { Knex } from 'knex';

/**
 * The box's school's name as central gave it at enrolment, so that the teacher page names the school before
 * the first roster arrives (or when central's roster is one the box refused). Expand only: a nullable column
 * the previous release ignores.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('fleetidentity', (t) => {
    t.string('schoolname', 200).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('fleetidentity', (t) => {
    t.dropColumn('schoolname');
  });
}
