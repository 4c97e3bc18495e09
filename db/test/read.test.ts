import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex, createTestDatabase, readRows, sessionStatements, type Knex, type TestDatabase } from '../src';

const kinds = { boolean: new Set(['active']), json: new Set(['tags']), timestamp: new Set(['created']) };

describe('readRows', () => {
  let t: TestDatabase;
  let db: Knex;

  beforeAll(async () => {
    t = await createTestDatabase({ kinds });
    db = t.db;
    await db.schema.createTable('items', (tb) => {
      tb.string('id').primary();
      tb.string('name').notNullable();
      tb.boolean('active').notNullable();
      tb.json('tags');
      tb.timestamp('created', { useTz: true });
    });
    await db('items').insert([
      {
        id: 'a',
        name: 'Apple',
        active: true,
        tags: JSON.stringify(['red']),
        created: new Date('2026-01-02T03:04:05.000Z'),
      },
      {
        id: 'b',
        name: 'Banana',
        active: false,
        tags: JSON.stringify([]),
        created: new Date('2026-02-03T04:05:06.000Z'),
      },
      { id: 'c', name: 'Cherry', active: true, tags: null, created: null },
    ]);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('gives the rows awaiting the same query gives: bindings of every kind, rows normalised', async () => {
    const build = () =>
      db('items')
        .where({ active: true })
        .where('created', '<', new Date('2026-12-31T00:00:00.000Z'))
        .orWhereNull('created')
        .orderBy('name')
        .select();
    const rows = await readRows(build());
    expect(rows).toEqual(await build());
    expect(rows).toEqual([
      { id: 'a', name: 'Apple', active: true, tags: ['red'], created: '2026-01-02T03:04:05.000Z' },
      { id: 'c', name: 'Cherry', active: true, tags: null, created: null },
    ]);
    const grouped = db('items').groupBy('active').orderBy('active').select('active').min({ first: 'name' });
    expect(await readRows(grouped.clone())).toEqual(await grouped);
    expect(await readRows(db('items').where({ id: 'none' }).select())).toEqual([]);
  });

  it('reads only selects', async () => {
    await expect(readRows(db('items').where({ id: 'a' }).update({ name: 'x' }))).rejects.toThrow(TypeError);
    await expect(readRows(db('items').where({ id: 'a' }).first())).rejects.toThrow(TypeError);
    expect((await readRows(db('items').where({ id: 'a' }).select('name')))[0]).toEqual({ name: 'Apple' });
  });

  it('reads inside a transaction on its connection, ' +
      'and outside it the committed rows without waiting for it', async () => {
    const trx = await db.transaction();
    try {
      await trx('items').insert({ id: 'd', name: 'Date', active: true, tags: null, created: null });
      // On SQLite the transaction holds the pool's only connection: this read must not queue behind it.
      const outside = await Promise.race([
        readRows(db('items').orderBy('id').select('id')),
        new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 2000)),
      ]);
      expect(outside).toEqual([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
      expect(await readRows(trx('items').orderBy('id').select('id'))).toEqual([
        { id: 'a' },
        { id: 'b' },
        { id: 'c' },
        { id: 'd' },
      ]);
      await trx.commit();
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
    expect(await readRows(db('items').orderBy('id').select('id'))).toEqual([
      { id: 'a' },
      { id: 'b' },
      { id: 'c' },
      { id: 'd' },
    ]);
    await db('items').where({ id: 'd' }).del();
  });

  it('fails a bad query with the database error and stays usable', async () => {
    await expect(readRows(db('no_such_table').select())).rejects.toThrow(/no_such_table/);
    // On PostgreSQL the failed read gave its connection back: more reads than the pool holds still run.
    const many = await Promise.all(
      Array.from({ length: 25 }, () => readRows(db('items').where({ id: 'b' }).select('name'))),
    );
    expect(many.every((r) => r.length === 1 && r[0].name === 'Banana')).toBe(true);
  });

  it('refuses to read once the client is destroyed', async () => {
    const other = await createTestDatabase({ kinds });
    await other.db.schema.createTable('items', (tb) => tb.string('id'));
    expect(await readRows(other.db('items').select())).toEqual([]);
    await other.dispose();
    await expect(readRows(other.db('items').select())).rejects.toThrow();
  });

  it.runIf(process.env.TEST_DATABASE_URL)('reads on PostgreSQL sessions without just-in-time compilation', async () => {
    const shown = (await db.raw('show jit')) as { rows: Array<{ jit: string }> };
    expect(shown.rows[0].jit).toBe('off');
  });
});

describe('PostgreSQL session settings', () => {
  it('are SET after connecting (never startup options a pooler refuses), ' +
      'leave a jit setting of the URL alone, and can be switched off', () => {
    expect(sessionStatements('postgres://u:p@db:5432/lms', {})).toEqual(['SET jit = off']);
    expect(sessionStatements('postgres://u:p@db/lms?sslmode=require', { statementTimeoutMs: 5000 })).toEqual([
      'SET jit = off',
      'SET statement_timeout = 5000',
    ]);
    expect(sessionStatements('postgres://u:p@db/lms?options=-c%20jit%3Don', {})).toEqual([]);
    expect(sessionStatements('postgres://u:p@db/lms', { sessionSettings: false, statementTimeoutMs: 5000 })).toEqual(
      [],
    );
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    'set the pool size and statement timeout of the sessions, and send nothing when off',
    async () => {
      const url = process.env.TEST_DATABASE_URL!;
      const timed = createKnex(
        { dialect: 'pg', connection: url },
        { kinds: { boolean: new Set(), json: new Set(), timestamp: new Set() }, poolMax: 3, statementTimeoutMs: 300 },
      );
      const plain = createKnex(
        { dialect: 'pg', connection: url },
        { kinds: { boolean: new Set(), json: new Set(), timestamp: new Set() }, sessionSettings: false },
      );
      try {
        expect((timed.client as { pool: { max: number } }).pool.max).toBe(3);
        expect(((await timed.raw('show jit')) as { rows: Array<{ jit: string }> }).rows[0].jit).toBe('off');
        await expect(timed.raw('select pg_sleep(2)')).rejects.toThrow(/statement timeout/);
        // The connection still serves the next statement.
        expect(((await timed.raw('select 1 as n')) as { rows: Array<{ n: number }> }).rows[0].n).toBe(1);
        const settings = (await plain.raw(
          "select current_setting('statement_timeout') as t, (select setting from pg_settings where name = 'jit') as " +
            "jit, (select source from pg_settings where name = 'jit') as source",
        )) as { rows: Array<{ t: string; source: string }> };
        expect(settings.rows[0].t).toBe('0');
        expect(settings.rows[0].source).not.toBe('session');
      } finally {
        await timed.destroy();
        await plain.destroy();
      }
    },
  );
});
