import type { Knex } from 'knex';
import type { TableSpec } from '../../tables';

/**
 * A question's answer feedback, `{correctmessage, incorrectmessage}`, which the admin UI's question editor
 * sends and the learner app shows after a practice answer. The classroom servers have held the column since
 * their first schema; central now keeps it too, sends it in the content package, and copies it from an
 * existing central that has it.
 *
 * Expand only: a nullable column; a release that does not know it keeps working (it neither reads nor writes it).
 */
export const questionFeedbackColumns: TableSpec[] = [
  { name: 'questions', columns: [{ name: 'questionfeedback', type: 'json', nullable: true }] },
];

export async function up(knex: Knex): Promise<void> {
  if (await knex.schema.hasColumn('questions', 'questionfeedback')) return;
  await knex.schema.alterTable('questions', (t) => {
    if (knex.client.config.client === 'pg') t.jsonb('questionfeedback').nullable();
    else t.text('questionfeedback').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('questions', (t) => {
    t.dropColumn('questionfeedback');
  });
}
