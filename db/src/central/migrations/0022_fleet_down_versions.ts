import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';
import type { MigrationContext } from '../../migrator';

/**
 * What makes a box's poll cheap, whichever central instance answers it:
 * - `fleetversions`: counters that triggers bump in the writing transaction, `content` on any write to a table
 *   the curriculum package (or its narrowing, `curriculumcountry`) reads, `roster:<schoolname>` on any write to
 *   that school's school users or learners. A write from any instance, route or script moves them; nothing
 *   depends on a process remembering to invalidate.
 * - `fleetdowncache`: per school, the version tags last built and the counters they were built at.
 * - `mediadigests`: the SHA-256 of each media object, by its key, size and the store's ETag, so that a file is
 *   read to hash it once per version, not once per box.
 *
 * Expand only: new tables and triggers that only ever touch them; the previous release ignores both.
 */
export const CONTENT_TABLES = [
  'curriculums', 'curriculumbaseline', 'baselinequestion', 'grades', 'levels', 'lessons', 'lessonlearnings',
  'lessonpractices', 'lessonpracticequestions', 'lessonquizzes', 'lessonquizquestions', 'levelquizquestions',
  'questions', 'documents', 'standards', 'schools', 'countries', 'lessonplans', 'subjects', 'curriculumcountry',
] as const;
export const ROSTER_TABLES = ['schoolusers', 'students'] as const;

export const fleetDownVersionTables: TableSpec[] = [
  {
    name: 'fleetversions',
    primary: ['name'],
    columns: [
      { name: 'name', type: 'string', length: 300 },
      { name: 'version', type: 'double', default: 0 },
    ],
  },
  {
    name: 'fleetdowncache',
    primary: ['schoolid'],
    columns: [
      { name: 'schoolid', type: 'string', length: 36 },
      /** The counters the tags below were built at (`<content>.<roster>`). */
      { name: 'marker', type: 'string', length: 100 },
      { name: 'package', type: 'string', length: 64, nullable: true },
      { name: 'students', type: 'string', length: 64, nullable: true },
      { name: 'teachers', type: 'string', length: 64, nullable: true },
      { name: 'media', type: 'string', length: 64, nullable: true },
      /** The media list (JSON) whose SHA-256 is `media`. */
      { name: 'medialist', type: 'text', nullable: true },
      { name: 'builtat', type: 'timestamp', default: 'now' },
    ],
  },
  {
    name: 'mediadigests',
    primary: ['objectkey'],
    columns: [
      { name: 'objectkey', type: 'string', length: 300 },
      { name: 'size', type: 'double' },
      { name: 'etag', type: 'string', length: 200 },
      { name: 'sha256', type: 'string', length: 64 },
      { name: 'computedat', type: 'timestamp', default: 'now' },
    ],
  },
];

const trig = (table: string) => `fleetv_${table}`;

export async function up(knex: Knex, ctx: MigrationContext): Promise<void> {
  await createTables(knex, fleetDownVersionTables);
  await knex('fleetversions').insert({ name: 'content', version: 1 });
  if (ctx.dialect === 'pg') {
    // One bump per statement: a package import of thousands of rows moves the counter once.
    await knex.raw(`CREATE OR REPLACE FUNCTION fleetversion_content() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE fleetversions SET version = version + 1 WHERE name = 'content';
  RETURN NULL;
END
$fn$`);
    await knex.raw(`CREATE OR REPLACE FUNCTION fleetversion_roster() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.schoolname IS NOT NULL THEN
    INSERT INTO fleetversions (name, version) VALUES ('roster:' || OLD.schoolname, 1)
      ON CONFLICT (name) DO UPDATE SET version = fleetversions.version + 1;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.schoolname IS NOT NULL THEN
    INSERT INTO fleetversions (name, version) VALUES ('roster:' || NEW.schoolname, 1)
      ON CONFLICT (name) DO UPDATE SET version = fleetversions.version + 1;
  END IF;
  RETURN NULL;
END
$fn$`);
    for (const t of CONTENT_TABLES) {
      await knex.raw(`CREATE TRIGGER ${trig(t)} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${t}
        FOR EACH STATEMENT EXECUTE PROCEDURE fleetversion_content()`);
    }
    for (const t of ROSTER_TABLES) {
      await knex.raw(`CREATE TRIGGER ${trig(t)} AFTER INSERT OR UPDATE OR DELETE ON ${t}
        FOR EACH ROW EXECUTE PROCEDURE fleetversion_roster()`);
    }
    return;
  }
  const bumpContent = "UPDATE fleetversions SET version = version + 1 WHERE name = 'content';";
  const bumpRoster = (row: 'NEW' | 'OLD') =>
    `INSERT INTO fleetversions (name, version) SELECT 'roster:' || ${row}.schoolname, 1 ` +
    `WHERE ${row}.schoolname IS NOT NULL ON CONFLICT (name) DO UPDATE SET version = version + 1;`;
  for (const op of ['insert', 'update', 'delete'] as const) {
    for (const t of CONTENT_TABLES) {
      await knex.raw(`CREATE TRIGGER ${trig(t)}_${op} AFTER ${op.toUpperCase()} ON ${t} FOR EACH ROW BEGIN ` +
        `${bumpContent} END`);
    }
    const rows = op === 'insert' ? bumpRoster('NEW') : op === 'delete' ? bumpRoster('OLD')
      : `${bumpRoster('OLD')} ${bumpRoster('NEW')}`;
    for (const t of ROSTER_TABLES) {
      await knex.raw(`CREATE TRIGGER ${trig(t)}_${op} AFTER ${op.toUpperCase()} ON ${t} FOR EACH ROW BEGIN ` +
        `${rows} END`);
    }
  }
}

export async function down(knex: Knex, ctx: MigrationContext): Promise<void> {
  for (const t of [...CONTENT_TABLES, ...ROSTER_TABLES]) {
    if (ctx.dialect === 'pg') await knex.raw(`DROP TRIGGER IF EXISTS ${trig(t)} ON ${t}`);
    else for (const op of ['insert', 'update', 'delete']) await knex.raw(`DROP TRIGGER IF EXISTS ${trig(t)}_${op}`);
  }
  if (ctx.dialect === 'pg') {
    await knex.raw('DROP FUNCTION IF EXISTS fleetversion_content()');
    await knex.raw('DROP FUNCTION IF EXISTS fleetversion_roster()');
  }
  await dropTables(knex, fleetDownVersionTables);
}
