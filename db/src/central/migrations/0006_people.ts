import type { Knex } from 'knex';

/**
 * Schools, classes, learners and teachers at scale:
 *  - a username is unique whatever its case (`Kofi1` and `kofi1` are one sign-in name on the classroom
 *    server), decided by the database so that two enrolments running at once cannot both take it;
 *  - so is a class name among a school's live classes (a deleted class's name may be used again);
 *  - the indexes the learner list (ordered by school and first name), the class checks, the last
 *    sign-in lookup, the teacher list and the fee records read by;
 *  - learner names and contacts as long as the contract admits (100 characters; the columns held 45
 *    and 20, and PostgreSQL refuses longer text where SQLite stores it).
 */
const WIDENED: ReadonlyArray<readonly [column: string, from: number]> = [
  ['studentfirstname', 45],
  ['studentlastname', 45],
  ['contact', 20],
];
const INDEXES: ReadonlyArray<readonly [name: string, table: string, columns: string[]]> = [
  ['students_schoolname_studentfirstname_idx', 'students', ['schoolname', 'studentfirstname', 'studentid']],
  ['students_standard_idx', 'students', ['standard']],
  ['rpiuseraccess_userid_logintime_idx', 'rpiuseraccess', ['userid', 'logintime']],
  ['schoolusers_schoolname_idx', 'schoolusers', ['schoolname', 'schooluserrole']],
  ['schoolcontributedata_schoolid_created_at_idx', 'schoolcontributedata', ['schoolid', 'created_at']],
];

export async function up(knex: Knex): Promise<void> {
  const clashes: Array<{ name: string }> = await knex('schoolusers')
    .select(knex.raw('lower(schoolusername) as name'))
    .groupByRaw('lower(schoolusername)')
    .havingRaw('count(*) > 1');
  if (clashes.length) {
    throw new Error(
      'schoolusers: these usernames exist in more than one case and must be renamed ' +
        `before the case-insensitive unique index can be built: ${clashes.map((c) => c.name).join(', ')}`,
    );
  }
  await knex.raw('create unique index schoolusers_lower_schoolusername_unique on schoolusers (lower(schoolusername))');
  const classes: Array<{ schoolid: string; name: string }> = await knex('standards')
    .where({ isdeleted: false })
    .whereNotNull('schoolid')
    .select('schoolid', knex.raw('lower(standardname) as name'))
    .groupBy('schoolid', knex.raw('lower(standardname)'))
    .havingRaw('count(*) > 1')
    .limit(10);
  if (classes.length) {
    const names = classes.map((c) => `${c.schoolid} / ${c.name}`).join('; ');
    throw new Error(
      `standards: live classes of one school share a name (${names}); ` +
        'rename or delete the extra classes, then migrate again',
    );
  }
  await knex.raw(
    'create unique index standards_schoolid_lower_standardname_live_unique ' +
      'on standards (schoolid, lower(standardname)) where not isdeleted',
  );
  for (const [name, table, columns] of INDEXES) await knex.schema.alterTable(table, (t) => t.index(columns, name));
  if (knex.client.config.client === 'pg') {
    for (const [column] of WIDENED) await knex.raw('alter table students alter column ?? type varchar(100)', [column]);
  }
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') {
    for (const [column, from] of WIDENED)
      await knex.raw(`alter table students alter column ?? type varchar(${from}) using left(??, ${from})`, [
        column,
        column,
      ]);
  }
  for (const [name, table, columns] of [...INDEXES].reverse())
    await knex.schema.alterTable(table, (t) => t.dropIndex(columns, name));
  await knex.raw('drop index standards_schoolid_lower_standardname_live_unique');
  await knex.raw('drop index schoolusers_lower_schoolusername_unique');
}
