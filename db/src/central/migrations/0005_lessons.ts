import type { Knex } from 'knex';

/**
 * The authoring rules' "already exists" as unique indexes, so that two requests racing past the check
 * inside their transactions cannot both write: the second meets the index and is answered with the same
 * refusal. Names compare without regard to case (`lower()` on both databases, as the checks do); levels
 * and lessons are soft-deleted, so only live rows hold a name. Learning items, plans, practices, quizzes
 * and the question links are removed for good, so every row counts.
 */
const INDEXES: Array<[name: string, table: string, expression: string, where?: string]> = [
  ['levels_gradeid_levelname_unique', 'levels', 'gradeid, lower(levelname)', 'NOT isdeleted'],
  ['lessons_levelid_lessonname_unique', 'lessons', 'levelid, lower(lessonname)', 'NOT isdeleted'],
  ['lessonlearnings_lessonid_documentid_unique', 'lessonlearnings', 'lessonid, documentid'],
  ['lessonplans_lessonid_documentid_unique', 'lessonplans', 'lessonid, documentid'],
  ['lessonpractices_lessonid_name_unique', 'lessonpractices', 'lessonid, lower(lessonpracticename)'],
  ['lessonquizzes_lessonid_name_unique', 'lessonquizzes', 'lessonid, lower(lessonquizname)'],
  ['lessonpracticequestions_practice_question_unique', 'lessonpracticequestions', 'lessonpracticeid, questionid'],
  ['lessonquizquestions_quiz_question_unique', 'lessonquizquestions', 'lessonquizid, questionid'],
  ['levelquizquestions_level_question_unique', 'levelquizquestions', 'levelid, questionid'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [name, table, expression, where] of INDEXES) {
    await knex.raw(`CREATE UNIQUE INDEX ${name} ON ${table} (${expression})${where ? ` WHERE ${where}` : ''}`);
  }
  // The lesson-plan lists read by lesson, as the other item tables already are.
  await knex.raw('CREATE INDEX lessonplans_lessonid_idx ON lessonplans (lessonid)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS lessonplans_lessonid_idx');
  for (const [name] of [...INDEXES].reverse()) await knex.raw(`DROP INDEX IF EXISTS ${name}`);
}
