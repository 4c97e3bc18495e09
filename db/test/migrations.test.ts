import { describe, expect, it } from 'vitest';
import {
  central,
  classroom,
  createTestDatabase,
  migrateLatest,
  pendingMigrations,
  rollbackAll,
  type Knex,
} from '../src';
import { tables as centralTables } from '../src/central/schema-0001';
import { tables as classroomTables } from '../src/classroom/schema-0001';

async function tableNames(db: Knex): Promise<string[]> {
  if (db.client.config.client === 'pg') {
    const rows = await db('information_schema.tables').select('table_name').whereRaw('table_schema = current_schema()');
    return rows.map((r: { table_name: string }) => r.table_name);
  }
  const rows = await db('sqlite_master').select('name').where('type', 'table');
  return rows.map((r: { name: string }) => r.name);
}

describe.each([
  ['central', central, centralTables, 47],
  ['classroom', classroom, classroomTables, 37],
] as const)('%s schema', (_name, svc, specs, count) => {
  it('migrates up to every table, rolls back to none, and migrates up again', async () => {
    const t = await createTestDatabase({ kinds: svc.kinds, migrations: svc.migrations, migrate: false });
    try {
      expect(await pendingMigrations(t.db, svc.migrations)).toEqual(svc.migrations.map(([n]) => n));
      await migrateLatest(t.db, svc.migrations);
      expect(await pendingMigrations(t.db, svc.migrations)).toEqual([]);
      const names = await tableNames(t.db);
      expect(specs).toHaveLength(count);
      for (const s of specs) expect(names).toContain(s.name);
      await rollbackAll(t.db, svc.migrations);
      const after = await tableNames(t.db);
      for (const s of specs) expect(after).not.toContain(s.name);
      await migrateLatest(t.db, svc.migrations);
      expect(await pendingMigrations(t.db, svc.migrations)).toEqual([]);
    } finally {
      await t.dispose();
    }
  });

  it('has every column of the contract tables the spec names', () => {
    const byName = new Map(specs.map((s) => [s.name, s]));
    expect(byName.get('studentprogress')?.columns.map((c) => c.name)).toEqual(expect.arrayContaining([
      'studentprogressid', 'studentid', 'ispass', 'studentprogressreferenceid', 'starttime', 'endtime', 'progresstype',
      'resultpercentage', 'points', 'fullpoints', 'marks', 'scores',
    ]));
    expect(byName.get('studentprogressquestions')?.columns.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'studentprogressquestionid',
        'studentprogressid',
        'tries',
        'iscorrect',
        'referencequestionid',
      ]),
    );
    expect(byName.has('tokens')).toBe(true);
  });
});

/** Central's migrations from `first` on, in order: what a database migrated up to just before it still lacks. */
function namesFrom(first: string): string[] {
  const names = central.migrations.map(([name]) => name);
  return names.slice(names.indexOf(first));
}

describe('constraints the routes rely on', () => {
  it('holds the authoring rules among live rows, ' +
      'and will not index a database whose live rows already break one', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 3) });
    try {
      await t.db('subjects').insert([
        { subjectid: 's1', subjectname: 'Maths', isdeleted: false },
        { subjectid: 's2', subjectname: 'Maths', isdeleted: false },
        { subjectid: 's3', subjectname: 'Maths', isdeleted: true },
      ]);
      await expect(migrateLatest(t.db, central.migrations)).rejects.toThrow(
        'subjects: live rows share subjectname (Maths)',
      );
      expect(await pendingMigrations(t.db, central.migrations)).toEqual(namesFrom('0004_authoring'));
      await t.db('subjects').where({ subjectid: 's2' }).update({ isdeleted: true });
      await migrateLatest(t.db, central.migrations);
      expect(await pendingMigrations(t.db, central.migrations)).toEqual([]);
      await expect(t.db('subjects').where({ subjectid: 's3' }).update({ isdeleted: false })).rejects.toThrow();
      await t.db('subjects').insert({ subjectid: 's4', subjectname: 'Maths', isdeleted: true });
    } finally {
      await t.dispose();
    }
  });

  it('makes usernames unique whatever their case, ' +
      'and names the clashes of a database that already has some', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 5) });
    try {
      const user = (id: string, schoolusername: string) => ({
        schooluserid: id,
        schoolusername,
        schooluserpasswordhash: 'x',
        schooluserrole: 4,
      });
      await t.db('schoolusers').insert([user('u1', 'Amina'), user('u2', 'amina'), user('u3', 'kofi')]);
      await expect(migrateLatest(t.db, central.migrations)).rejects.toThrow(
        'these usernames exist in more than one case and must be renamed before the case-insensitive unique ' +
          'index can be built: amina',
      );
      expect(await pendingMigrations(t.db, central.migrations)).toEqual(namesFrom('0006_people'));
      await t.db('schoolusers').where({ schooluserid: 'u2' }).update({ schoolusername: 'amina2' });
      await migrateLatest(t.db, central.migrations);
      await expect(t.db('schoolusers').insert(user('u4', 'KOFI'))).rejects.toThrow();
      expect(await t.db('schoolusers').count({ n: '*' }).first()).toEqual({ n: 3 });
      // A class name once among a school's live classes, whatever its case; a deleted class frees it.
      await t.db('standards').insert([{ standardid: 'c1', standardname: 'Class 1', schoolid: null, isdeleted: true }]);
      await t.db('countries').insert({ countryid: 'k1', countryname: 'K' });
      await t.db('schools').insert({ schoolid: 's1', schoolname: 'S', countryid: 'k1', curriculums: '[]' });
      await t.db('standards').insert([
        { standardid: 'c2', standardname: 'Class 1', schoolid: 's1', isdeleted: false },
        { standardid: 'c3', standardname: 'Class 1', schoolid: 's1', isdeleted: true },
      ]);
      await expect(
        t.db('standards').insert({ standardid: 'c4', standardname: 'CLASS 1', schoolid: 's1' }),
      ).rejects.toThrow();
    } finally {
      await t.dispose();
    }
  });

  it('refuses a second school user with the same handle and a second link of the same role', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    try {
      const user = {
        schooluserid: 'a0000000-0000-4000-8000-000000000001',
        schoolusername: 'amina',
        schooluserpasswordhash: 'x',
        schooluserrole: 4,
      };
      await t.db('schoolusers').insert(user);
      await expect(
        t.db('schoolusers').insert({ ...user, schooluserid: 'a0000000-0000-4000-8000-000000000002' }),
      ).rejects.toThrow();
      await t.db('roles').insert({ roleid: 'r1', rolename: 'R' });
      await t
        .db('lmsusers')
        .insert({ lmsuserid: 'u1', lmsusername: 'a@b.c', lmsuserpasswordhash: 'x', firstname: 'A', lmsuserrole: 'r1' });
      await t.db('lmsusers_roles').insert({ lmsuserid: 'u1', roleid: 'r1' });
      await expect(t.db('lmsusers_roles').insert({ lmsuserid: 'u1', roleid: 'r1' })).rejects.toThrow();
      expect(await t.db('lmsusers_roles').where({ lmsuserid: 'u1' }).count({ n: '*' }).first()).toEqual({ n: 1 });
    } finally {
      await t.dispose();
    }
  });

  it('refuses a learner result whose learner does not exist (foreign keys are on)', async () => {
    const t = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
    try {
      await expect(t.db('studentprogress').insert({
        studentprogressid: 'p1', studentid: 'nobody', studentprogressreferenceid: 'q', progresstype: 2,
      })).rejects.toThrow();
      expect(await t.db('studentprogress').count({ n: '*' }).first()).toEqual({ n: 0 });
    } finally {
      await t.dispose();
    }
  });

  it('enforces the classroom submission key (studentid, studentprogressreferenceid, starttime)', async () => {
    const t = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
    try {
      await t.db('curriculums').insert({ curriculumid: 'k1', curriculumname: 'Maths' });
      await t
        .db('schoolusers')
        .insert({ schooluserid: 'su1', schoolusername: 'amina', schooluserpasswordhash: 'x', schooluserrole: 4 });
      await t.db('students').insert({
        studentid: 'st1',
        studentfirstname: 'Amina',
        genderid: 2,
        city: 'N/A',
        country: 'N/A',
        state: 'N/A',
        curriculumid: 'k1',
        schooluserid: 'su1',
      });
      const result = {
        studentid: 'st1',
        studentprogressreferenceid: 'quiz1',
        starttime: '2026-11-01T08:00:00.000Z',
        progresstype: 2,
      };
      await t.db('studentprogress').insert({ ...result, studentprogressid: 'p1' });
      await expect(t.db('studentprogress').insert({ ...result, studentprogressid: 'p2' })).rejects.toThrow();
      await t
        .db('studentprogress')
        .insert({ ...result, studentprogressid: 'p3', starttime: '2026-11-01T08:05:00.000Z' });
      expect(await t.db('studentprogress').count({ n: '*' }).first()).toEqual({ n: 2 });
    } finally {
      await t.dispose();
    }
  });
});

describe('rows read back the same on both databases', () => {
  it('returns real booleans, parsed JSON and ISO-8601 UTC timestamps', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    try {
      await t.db('countries').insert({ countryid: 'c1', countryname: 'Kenya' });
      await t.db('schools').insert({
        schoolid: 's1', schoolname: 'Hill School', countryid: 'c1', curriculums: JSON.stringify(['k1', 'k2']),
        brandingconfig: JSON.stringify({ displayname: 'Hill' }), created_at: new Date('2026-07-16T09:30:00.000Z'),
      });
      const row = await t.db('schools').where('schoolid', 's1').first();
      expect(row.isdeleted).toBe(false);
      expect(row.curriculums).toEqual(['k1', 'k2']);
      expect(row.brandingconfig).toEqual({ displayname: 'Hill' });
      expect(row.created_at).toBe('2026-07-16T09:30:00.000Z');
      expect(row.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(row.uitheme).toBe('kids');
      const later = await t.db('schools').where('created_at', '>', '2026-07-16T09:29:59.999Z').select('schoolid');
      expect(later).toEqual([{ schoolid: 's1' }]);
      const none = await t
        .db('schools')
        .where('created_at', '>', new Date('2026-07-16T09:30:00.001Z'))
        .select('schoolid');
      expect(none).toEqual([]);
    } finally {
      await t.dispose();
    }
  });
});

describe('log archive names (0010)', () => {
  it('takes over the names earlier imports used, once each, as settled claims', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 9) });
    try {
      const at = new Date('2026-05-01T08:00:00Z');
      // Two rows of one name: what two instances wrote when the name was unique within a process only.
      await t.db('syncs').insert([
        { syncid: 'y1', filename: 'logupload-1777622400000.zip', type: 1, offlineonline: false, created_at: at },
        { syncid: 'y2', filename: 'logupload-1777622400000.zip', type: 1, offlineonline: false, created_at: at },
        { syncid: 'y3', filename: 'logupload-1777622400001.zip', type: 1, offlineonline: false, created_at: at },
      ]);
      await t
        .db('logfiles')
        .insert({ logfileid: 'f1', logfilename: 'logupload-1777622399999.zip', type: 2, created_at: at });
      await migrateLatest(t.db, central.migrations);
      const rows = await t.db('logarchives').orderBy('archive').select('archive', 'settled_at');
      expect(rows.map((r: { archive: string }) => r.archive)).toEqual([
        'logupload-1777622399999.zip',
        'logupload-1777622400000.zip',
        'logupload-1777622400001.zip',
      ]);
      expect(rows.every((r: { settled_at: unknown }) => r.settled_at !== null)).toBe(true);
    } finally {
      await t.dispose();
    }
  });
});
