import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeSmallTables, central, createTestDatabase, migrate, type Knex, type TestDatabase } from '../src';

// The planner's statistics of the small tables a deployment's reports join (curriculum, schools): autovacuum
// never analyses a table below 50 changed rows, so without this a small curriculum is planned from guesses.

const onPg = Boolean(process.env.TEST_DATABASE_URL);
const CURRICULUM = ['curriculums', 'grades', 'levels', 'lessons'];

type Row = Record<string, unknown>;

/** A small deployment's curriculum: two curriculums, the first of 2 grades x 3 levels x 5 lessons. */
async function seedCurriculums(db: Knex): Promise<string> {
  const id = () => crypto.randomUUID();
  const subjectid = id();
  await db('subjects').insert({ subjectid, subjectname: 'Mathematics' });
  let first = '';
  for (const [c, size] of [
    [0, 2],
    [1, 1],
  ]) {
    const curriculumid = id();
    if (!first) first = curriculumid;
    await db('curriculums').insert({ curriculumid, curriculumname: `C${c}`, subjectid, curriculumstatus: true });
    for (let g = 0; g < size; g += 1) {
      const gradeid = id();
      await db('grades').insert({ gradeid, curriculumid, gradename: `G${g}`, gradeorder: g, gradestatus: true });
      for (let v = 0; v < 3; v += 1) {
        const levelid = id();
        await db('levels').insert({ levelid, gradeid, levelname: `L${v}`, levelorder: v, levelstatus: true });
        await db('lessons').insert(
          Array.from({ length: 5 }, (_, n) => ({
            lessonid: id(),
            levelid,
            lessonname: `Lesson ${n}`,
            lessonorder: n,
            lessonstatus: true,
          })),
        );
      }
    }
  }
  return first;
}

/** The server's statistics of a backend's writes reach pg_stat_user_tables about a second after it goes idle. */
async function changedSinceAnalyze(db: Knex, tables: string[]): Promise<Row[]> {
  for (let i = 0; i < 50; i += 1) {
    const { rows } = (await db.raw(
      `select relname, n_mod_since_analyze::int as n from pg_stat_user_tables
       where schemaname = current_schema() and relname = any(?) order by relname`,
      [tables],
    )) as { rows: Row[] };
    if (rows.length === tables.length && rows.every((r) => Number(r.n) > 0)) return rows;
    await new Promise((r) => setTimeout(r, 200));
    // A new snapshot of the statistics for the next read.
    await db.raw('select pg_stat_clear_snapshot()');
  }
  throw new Error(`the server never counted the writes to ${tables.join(', ')}`);
}

async function withStatistics(db: Knex, tables: string[]): Promise<string[]> {
  const { rows } = (await db.raw(
    `select distinct tablename from pg_stats where schemaname = current_schema() and tablename = any(?)
     order by tablename`,
    [tables],
  )) as { rows: Array<{ tablename: string }> };
  return rows.map((r) => r.tablename);
}

/** The estimated and the actual rows of the one-learner quiz-score report's curriculum join. */
async function estimate(db: Knex, curriculumid: string): Promise<{ planned: number; actual: number }> {
  const { rows } = (await db.raw(
    `explain (analyze, format json)
     select l.* from lessons l join levels lv on lv.levelid = l.levelid join grades g on g.gradeid = lv.gradeid
     join curriculums c on c.curriculumid = g.curriculumid
     where l.lessonstatus = true and l.isdeleted = false and c.curriculumid in (?)`,
    [curriculumid],
  )) as { rows: Array<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number; 'Actual Rows': number } }> }> };
  const plan = rows[0]['QUERY PLAN'][0].Plan;
  return { planned: plan['Plan Rows'], actual: plan['Actual Rows'] };
}

describe.runIf(onPg)('analyzeSmallTables on PostgreSQL', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
  });
  afterAll(async () => t?.dispose());

  it('migrate leaves no table of the fresh schema unanalysed', async () => {
    const { rows } = (await t.db.raw(
      `select relname from pg_stat_user_tables where schemaname = current_schema()
       and last_analyze is null and last_autoanalyze is null`,
    )) as { rows: Row[] };
    expect(rows).toEqual([]);
  });

  it('a small curriculum filled after migrate gets statistics, and the report join is estimated right', async () => {
    const curriculumid = await seedCurriculums(t.db);
    await changedSinceAnalyze(t.db, CURRICULUM);
    // Analysed while empty: no column statistics, and a guess of the join's size.
    expect(await withStatistics(t.db, CURRICULUM)).toEqual([]);
    const before = await estimate(t.db, curriculumid);
    expect(before.actual).toBe(30);
    expect(before.planned).not.toBe(30);

    const analysed = await analyzeSmallTables(t.db);
    expect(analysed).toEqual(expect.arrayContaining(CURRICULUM));
    expect(analysed).not.toContain('studentprogress');
    expect(await withStatistics(t.db, CURRICULUM)).toEqual([...CURRICULUM].sort());
    const after = await estimate(t.db, curriculumid);
    expect(after).toEqual({ planned: 30, actual: 30 });
  });

  it('analyses nothing that has not changed since, and the tables named whatever their state', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    await t.db.raw('select pg_stat_clear_snapshot()');
    expect(await analyzeSmallTables(t.db)).toEqual([]);
    expect(await analyzeSmallTables(t.db, { tables: ['lessons', 'grades', 'no_such_table'] })).toEqual([
      'grades',
      'lessons',
    ]);
  });

  it('leaves a table of more than 100,000 rows to autovacuum', async () => {
    await t.db.raw(
      `insert into countries (countryid, countryname) select md5(g::text)::uuid::text, 'C' || g
       from generate_series(1, 100001) g`,
    );
    await changedSinceAnalyze(t.db, ['countries']);
    expect(await analyzeSmallTables(t.db)).not.toContain('countries');
    // A migrate run analyses the same way.
    expect((await migrate(t.db, central.migrations)).analysed).not.toContain('countries');
  });
});

describe.runIf(!onPg)('analyzeSmallTables on SQLite', () => {
  it('does nothing', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    try {
      expect(await analyzeSmallTables(t.db)).toEqual([]);
      expect(await analyzeSmallTables(t.db, { tables: ['lessons'] })).toEqual([]);
    } finally {
      await t.dispose();
    }
  });
});
