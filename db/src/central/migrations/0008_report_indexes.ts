import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';
import { createIndexOnline, dropIndexOnline, type MigrationContext } from '../../migrator';

/**
 * The indexes the reports read by (each report is a fixed number of set-based queries; these keep every
 * one of them an index lookup per learner, class or school rather than a scan), and what the sync-status
 * report needs to know of each upload and content push.
 */
const INDEXES: Array<{ table: string; columns: string[]; name: string; why: string }> = [
  // Ranking a learner's attempts (the best attempt at a lesson or level: /studentprogress, /studentlevelquiz,
  // their class variants and downloads; the last completed quiz: /studentlastcompletedquiz): every column the
  // ranking reads, so that it never touches the table; the winners are read by primary key.
  {
    table: 'studentprogress',
    columns: ['studentid', 'studentprogressreferenceid', 'ispass', 'starttime', 'studentprogressid', 'progresstype'],
    name: 'studentprogress_ranking_index',
    why: 'best attempt and last completed quiz',
  },
  // Learners of a class (every class report, /student-grade-progress, /studentstatus with a class).
  { table: 'students', columns: ['standard'], name: 'students_standard_index', why: 'learners of a class' },
  // Learners of a school: the charts (/gender, /disability, /offlineonline, /dashboard/school), the scope of a
  // school-restricted caller, /studentstatus by school.
  { table: 'students', columns: ['schoolname'], name: 'students_schoolname_index', why: 'learners of a school' },
  // Learners of a country by name (/gender, /disability, /offlineonline, /dashboard with a country).
  { table: 'students', columns: ['country'], name: 'students_country_index', why: 'learners of a country' },
  // Teachers and learner accounts of a school (/dashboard, /dashboard/country,
  // /dashboard/school, /studentusage, /techdowntime scope).
  {
    table: 'schoolusers',
    columns: ['schoolname', 'schooluserrole'],
    name: 'schoolusers_school_role_index',
    why: 'school users of a school',
  },
  // A learner's last sign-in (/studentstatus and its download: max(logintime) per learner).
  {
    table: 'rpiuseraccess',
    columns: ['userid', 'logintime'],
    name: 'rpiuseraccess_user_time_index',
    why: 'last sign-in',
  },
  // A learner's app time in a period (/studentstatus totalusages, /studentusage); 0009 replaces it with one
  // that also holds time_spent.
  {
    table: 'studentappusages',
    columns: ['schooluserid', 'created_at'],
    name: 'studentappusages_user_time_index',
    why: 'app time per learner',
  },
  // Uploads of a school's teachers, newest first (/syncrecords, /syncstatus).
  {
    table: 'syncs',
    columns: ['created_by', 'created_at'],
    name: 'syncs_creator_time_index',
    why: 'uploads per teacher',
  },
  { table: 'syncs', columns: ['created_at'], name: 'syncs_time_index', why: 'sync records oldest first' },
  // Feedbacks of a period (/techdowntime).
  { table: 'feedbacks', columns: ['created_at'], name: 'feedbacks_time_index', why: 'feedbacks of a period' },
];

/**
 * Content sent towards classrooms, for GET /report/syncstatus: a curriculum push to the classroom server
 * (every school it serves: schoolid null), a roster push for one school, a teacher fetching the content
 * package for their classroom. Who, when, how many rows.
 */
export const contentPushTables: TableSpec[] = [
  {
    name: 'contentpushes',
    primary: ['contentpushid'],
    indexes: [['schoolid', 'created_at'], ['created_at']],
    columns: [
      { name: 'contentpushid', type: 'string', length: 36 },
      /** `content` (curriculum pushed), `students` (roster pushed), `download` (package fetched by a teacher). */
      { name: 'kind', type: 'string', length: 16 },
      { name: 'schoolid', type: 'string', length: 36, nullable: true },
      { name: 'rowcount', type: 'integer', default: 0 },
      /** The lmsuserid or schooluserid of whoever sent it, and their name as it was then. */
      { name: 'created_by', type: 'string', length: 36, nullable: true },
      { name: 'created_by_name', type: 'string', length: 250, nullable: true },
      { name: 'created_at', type: 'timestamp', nullable: true, default: 'now' },
    ],
  },
];

// The indexes are built CONCURRENTLY on PostgreSQL, outside a transaction (the attempts and sign-in tables are
// the largest and keep being written); every step checks what exists first, so a run that stopped can run again.
export const config = { transaction: false };

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  for (const i of INDEXES) await createIndexOnline(knex, ctx, i.table, i.columns, i.name);
  // Rows an upload wrote (null on uploads recorded before this column existed).
  if (!(await knex.schema.hasColumn('syncs', 'rowcount')))
    await knex.schema.alterTable('syncs', (t) => {
      t.integer('rowcount').nullable();
    });
  if (!(await knex.schema.hasTable('contentpushes'))) await createTables(knex, contentPushTables);
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  await dropTables(knex, contentPushTables);
  if (await knex.schema.hasColumn('syncs', 'rowcount'))
    await knex.schema.alterTable('syncs', (t) => {
      t.dropColumn('rowcount');
    });
  for (const i of [...INDEXES].reverse()) await dropIndexOnline(knex, ctx, i.name);
}
