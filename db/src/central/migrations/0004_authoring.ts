import type { Knex } from 'knex';

/**
 * The "already exists" rules of curriculum authoring, held by the database as well: two requests that
 * pass the check at the same moment cannot both write. Each rule looks at live rows only (a deleted
 * subject's name may be used again), hence partial indexes, which SQLite and PostgreSQL both have. Names
 * compare as stored, exactly as the rules do.
 */
export const LIVE_UNIQUE: ReadonlyArray<{ table: string; columns: string[] }> = [
  { table: 'subjects', columns: ['subjectname'] },
  { table: 'questiontags', columns: ['questiontagname'] },
  { table: 'questions', columns: ['questionidentifier'] },
  { table: 'curriculums', columns: ['curriculumname'] },
  { table: 'grades', columns: ['curriculumid', 'gradename'] },
];

const indexName = (table: string, columns: string[]) => `${table}_${columns.join('_')}_live_unique`;

/** A database carried over from elsewhere may already break a rule: say which rows, rather than fail on the index. */
async function refuseDuplicates(knex: Knex, table: string, columns: string[]): Promise<void> {
  const dupes = (await knex(table)
    .where('isdeleted', false)
    .groupBy(columns)
    .havingRaw('count(*) > 1')
    .select(columns)
    .limit(10)) as Array<Record<string, unknown>>;
  if (dupes.length) {
    const list = dupes.map((d) => columns.map((c) => String(d[c])).join(' / ')).join('; ');
    throw new Error(
      `${table}: live rows share ${columns.join(', ')} (${list}); rename or delete the extra rows, then migrate again`,
    );
  }
}

export async function up(knex: Knex): Promise<void> {
  for (const { table, columns } of LIVE_UNIQUE) {
    await refuseDuplicates(knex, table, columns);
    await knex.raw(`CREATE UNIQUE INDEX ?? ON ?? (${columns.map(() => '??').join(', ')}) WHERE NOT isdeleted`, [
      indexName(table, columns),
      table,
      ...columns,
    ]);
  }
  // A curriculum is offered in a country once; the country side is what the scope and the country feed look up.
  await knex.schema.alterTable('curriculumcountry', (t) => {
    t.unique(['curriculumid', 'countryid'], { indexName: 'curriculumcountry_curriculumid_countryid_unique' });
    t.index(['countryid'], 'curriculumcountry_countryid_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('curriculumcountry', (t) => {
    t.dropIndex(['countryid'], 'curriculumcountry_countryid_idx');
    t.dropUnique(['curriculumid', 'countryid'], 'curriculumcountry_curriculumid_countryid_unique');
  });
  for (const { table, columns } of [...LIVE_UNIQUE].reverse())
    await knex.raw('DROP INDEX ??', [indexName(table, columns)]);
}
