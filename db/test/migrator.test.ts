import { describe, expect, it } from 'vitest';
import {
  central,
  classroom,
  createKnex,
  createTestDatabase,
  migrate,
  migrateLatest,
  pendingMigrations,
  runDbCommand,
  UsageError,
  type Knex,
  type MigrationList,
  ONLINE_INDEX_MIN_ROWS,
} from '../src';

const onPg = !!process.env.TEST_DATABASE_URL;
const names = central.migrations.map(([n]) => n);
const last = names[names.length - 1];

async function run(db: Knex, cmd: string, args: string[] = []): Promise<string[]> {
  const lines: string[] = [];
  await runDbCommand(cmd, {
    service: 'central', db, migrations: central.migrations, nodeEnv: 'test', args,
    seedDemo: async () => [], out: (l) => lines.push(l),
  });
  return lines;
}

describe('rollback', () => {
  it('refuses without --step or --all --yes and changes nothing; --step undoes the last migration only', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    try {
      await t.db('countries').insert({ countryid: 'c1', countryname: 'Kenya' });
      await expect(run(t.db, 'rollback')).rejects.toThrow(UsageError);
      await expect(run(t.db, 'rollback')).rejects.toThrow(
        `rollback needs --step (undo the last migration, ${last}) or --all --yes (undo all ${names.length}`,
      );
      await expect(run(t.db, 'rollback', ['--all'])).rejects.toThrow(UsageError);
      await expect(run(t.db, 'rollback', ['--step', '--all', '--yes'])).rejects.toThrow(UsageError);
      expect(await pendingMigrations(t.db, central.migrations)).toEqual([]);

      expect(await run(t.db, 'rollback', ['--step'])).toEqual([`central: rolled back ${last}`]);
      expect(await pendingMigrations(t.db, central.migrations)).toEqual([last]);
      expect(await t.db('countries').select('countryid')).toEqual([{ countryid: 'c1' }]);
      expect(await run(t.db, 'migrate')).toEqual([`central: applied ${last}`]);

      const all = await run(t.db, 'rollback', ['--all', '--yes']);
      expect(all[0]).toBe(`central: rolled back ${[...names].reverse().join(', ')}`);
      expect(await t.db.schema.hasTable('countries')).toBe(false);
    } finally {
      await t.dispose();
    }
  });
});

describe('migrate', () => {
  it('two runs at once: one applies every migration, ' +
      'the other says it applied nothing after waiting for the lock', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations, migrate: false });
    const other = createKnex(t.target, { kinds: central.kinds });
    try {
      const waits: string[] = [];
      const [a, b] = await Promise.all([
        migrate(t.db, central.migrations, { onWait: (m) => waits.push(m) }),
        migrate(other, central.migrations, { onWait: (m) => waits.push(m) }),
      ]);
      const [winner, loser] = a.applied.length ? [a, b] : [b, a];
      expect(winner.applied).toEqual(names);
      expect(loser.applied).toEqual([]);
      expect(loser.waited).toBe(true);
      expect(loser.appliedByOther).toEqual(names);
      expect(waits).toHaveLength(1);
      expect(await t.db('knex_migrations').count({ n: '*' }).first()).toEqual({ n: names.length });
      expect(await run(t.db, 'migrate')).toEqual(['central: applied nothing; already up to date']);
    } finally {
      await other.destroy();
      await t.dispose();
    }
  });

  it('a run that waits for the lock says so, then applies what the other run left pending', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 8) });
    const other = createKnex(t.target, { kinds: central.kinds });
    try {
      // The other run takes the lock first and holds it until this run has started waiting.
      let release!: () => void;
      const held = new Promise<void>((r) => { release = r; });
      let waiting!: () => void;
      const started = new Promise<void>((r) => { waiting = r; });
      const lines: string[] = [];
      const first = migrate(other, [
        ...central.migrations.slice(0, 8),
        ['0010_hold', { up: () => held, down: async () => undefined }],
      ]);
      await new Promise((r) => setTimeout(r, 300));
      const second = runDbCommand('migrate', {
        service: 'central', db: t.db, migrations: central.migrations, nodeEnv: 'test', seedDemo: async () => [],
        out: (l) => { lines.push(l); if (l.includes('waiting')) waiting(); },
      });
      await started;
      release();
      await first;
      await second;
      expect(lines[0]).toMatch(/^central: another migrate or rollback run holds the lock/);
      // The holder's list lacks the migrations from 0009 on, so the waiting run still has them to apply.
      expect(lines[1]).toBe(`central: applied ${names.slice(8).join(', ')}`);
    } finally {
      await other.destroy();
      await t.dispose();
    }
  });
});

/** Every `table.column` of the database. */
async function columns(db: Knex): Promise<Set<string>> {
  const out = new Set<string>();
  if (db.client.config.client === 'pg') {
    const r = await db.raw(
      'select table_name, column_name from information_schema.columns where table_schema = current_schema()',
    );
    for (const c of r.rows as Array<{ table_name: string; column_name: string }>)
      out.add(`${c.table_name}.${c.column_name}`);
    return out;
  }
  const tables = (await db.raw(
    "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'",
  )) as Array<{ name: string }>;
  for (const { name } of tables) {
    for (const c of (await db.raw(`pragma table_info("${name}")`)) as Array<{ name: string }>)
      out.add(`${name}.${c.name}`);
  }
  return out;
}

describe.each([
  ['central', central.migrations, central.kinds],
  ['classroom', classroom.migrations, classroom.kinds],
] as const)('%s migrations: expand, then contract', (_name, list, kinds) => {
  // Old and new instances run side by side on the migrated database during a rolling upgrade, so a
  // migration may add tables and columns but not remove one the previous release reads. A release that
  // contracts lists its migration here, with the release whose code stopped reading what it drops.
  const contracting = new Map<string, string>();

  it('no migration removes a table or a column the release before it could read', async () => {
    const t = await createTestDatabase({ kinds, migrations: list, migrate: false });
    try {
      let before = await columns(t.db);
      for (let i = 0; i < list.length; i += 1) {
        await migrateLatest(t.db, list.slice(0, i + 1) as MigrationList);
        const after = await columns(t.db);
        const removed = [...before].filter((c) => !after.has(c) && !c.startsWith('knex_migrations'));
        if (!contracting.has(list[i][0]))
          expect({ migration: list[i][0], removed }).toEqual({ migration: list[i][0], removed: [] });
        before = after;
      }
    } finally {
      await t.dispose();
    }
  });
});

describe('migrations built outside a transaction', () => {
  it('0008 runs again after stopping halfway (some of its indexes and its column already there)', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 7) });
    try {
      await t.db.schema.alterTable('students', (tb) => { tb.index(['standard'], 'students_standard_index'); });
      await t.db.schema.alterTable('syncs', (tb) => { tb.integer('rowcount').nullable(); });
      expect(await migrateLatest(t.db, central.migrations)).toEqual(names.slice(7));
      expect(await t.db.schema.hasTable('contentpushes')).toBe(true);
      expect(await pendingMigrations(t.db, central.migrations)).toEqual([]);
    } finally {
      await t.dispose();
    }
  });
});

describe.runIf(onPg)('PostgreSQL: lock time limit, indexes built concurrently', () => {
  it("builds 0009's index CONCURRENTLY: while the build waits for an older transaction, " +
      "writes to the table go on", async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 8) });
    const holder = createKnex(t.target, { kinds: central.kinds });
    const writer = createKnex(t.target, { kinds: central.kinds });
    try {
      await t
        .db('schoolusers')
        .insert({ schooluserid: 'u1', schoolusername: 'amina', schooluserpasswordhash: 'x', schooluserrole: 4 });
      const usage = (id: string) => ({
        studentappusageid: id,
        schooluserid: 'u1',
        time_spent: 5,
        created_at: new Date(),
      });
      // A table large enough to be indexed concurrently (a smaller one is indexed in place).
      await t.db.raw(
        `insert into studentappusages (studentappusageid, schooluserid, time_spent) select 'g' || i, 'u1', ` +
          `i from generate_series(1, ${ONLINE_INDEX_MIN_ROWS}) i`,
      );
      let release!: () => void;
      const released = new Promise<void>((r) => { release = r; });
      let reading!: () => void;
      const isReading = new Promise<void>((r) => { reading = r; });
      // An older transaction that has read the table: a concurrent build waits for it to end, a plain one would not.
      const tx = holder.transaction(async (trx) => {
        await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        await trx('studentappusages').count({ n: '*' });
        reading();
        await released;
      });
      await isReading;
      let done = false;
      const migrating = migrateLatest(t.db, central.migrations, { lockTimeoutMs: 300 }).finally(() => { done = true; });
      await new Promise((r) => setTimeout(r, 1000));
      const t0 = Date.now();
      await writer('studentappusages').insert(usage('a1'));
      expect(Date.now() - t0).toBeLessThan(1000);
      // Still building, well past the 300 ms lock time limit: waiting for old transactions blocks nobody and has none.
      expect(done).toBe(false);
      release();
      await tx;
      expect(await migrating).toEqual(names.slice(8));
      const after = await t.db.raw(
        "select c.relname, i.indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n " +
          "on n.oid = c.relnamespace where n.nspname = current_schema() and c.relname like " +
            "'studentappusages_user_time%'",
      );
      expect(after.rows).toEqual([{ relname: 'studentappusages_user_time_spent_index', indisvalid: true }]);
      expect(await t.db('studentappusages').count({ n: '*' }).first()).toEqual({ n: ONLINE_INDEX_MIN_ROWS + 1 });
    } finally {
      await holder.destroy();
      await writer.destroy();
      await t.dispose();
    }
  });

  it('indexes a small table in place, under the lock time limit', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 8) });
    const holder = createKnex(t.target, { kinds: central.kinds });
    try {
      let release!: () => void;
      const released = new Promise<void>((r) => { release = r; });
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => { locked = r; });
      const tx = holder.transaction(async (trx) => {
        await trx.raw('LOCK TABLE studentappusages IN ROW EXCLUSIVE MODE');
        locked();
        await released;
      });
      await isLocked;
      await expect(migrateLatest(t.db, central.migrations, { lockTimeoutMs: 300 })).rejects.toThrow(
        '0009_usage_covering_index: a table lock was not granted within 0.3 s',
      );
      expect(await pendingMigrations(t.db, central.migrations)).toEqual(names.slice(8));
      release();
      await tx;
      expect(await migrateLatest(t.db, central.migrations)).toEqual(names.slice(8));
    } finally {
      await holder.destroy();
      await t.dispose();
    }
  });

  it('migrates with a pool of one connection (the migration lock holds a connection of its own)', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations, migrate: false });
    const single = createKnex(t.target, { kinds: central.kinds, pool: { max: 1 } });
    try {
      expect(await migrateLatest(single, central.migrations)).toHaveLength(central.migrations.length);
    } finally {
      await single.destroy();
      await t.dispose();
    }
  });

  it('a transactional migration waits at most the lock time limit too', async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations.slice(0, 9) });
    const holder = createKnex(t.target, { kinds: central.kinds });
    try {
      let release!: () => void;
      const released = new Promise<void>((r) => { release = r; });
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => { locked = r; });
      const tx = holder.transaction(async (trx) => {
        await trx.raw('LOCK TABLE countries IN ACCESS SHARE MODE');
        locked();
        await released;
      });
      await isLocked;
      const addColumn = {
        up: (k: Knex) =>
          k.schema.alterTable('countries', (tb) => {
            tb.string('extra').nullable();
          }),
        down: async () => undefined,
      };
      await expect(
        migrateLatest(t.db, [...central.migrations, ['9999_extra', addColumn]], { lockTimeoutMs: 300 }),
      ).rejects.toThrow(
        '9999_extra: a table lock was not granted within 0.3 s (a long query or transaction holds it); ' +
          'nothing of 9999_extra was applied',
      );
      expect(await t.db.schema.hasColumn('countries', 'extra')).toBe(false);
      release();
      await tx;
    } finally {
      await holder.destroy();
      await t.dispose();
    }
  });
});
