import type { Knex } from 'knex';

/**
 * A box keeps no learner data it never uses: parents' names, birth date, contact and the disability
 * answers are blanked on every learner already held (the roster import stores them empty from now on).
 * The columns stay, so that the previous release still runs on this database while an upgrade rolls out.
 * Listed here rather than imported: a migration stays as it was written.
 */
const WITHHELD = [
  'mothername',
  'fathername',
  'contact',
  'dateofbirth',
  'wg_seeing',
  'wg_hearing',
  'wg_walking',
  'wg_remembering',
  'wg_selfcare',
  'wg_communicating',
  'wg_source',
  'wg_collected_at',
];

export async function up(knex: Knex): Promise<void> {
  const blank = Object.fromEntries(WITHHELD.map((c) => [c, null]));
  await knex('students').update(blank);
}

/** What was blanked cannot come back; the next roster from central does not carry it either. */
export async function down(): Promise<void> {}
