import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, groupCommit, inFlight, type Knex, type TestDatabase } from '../src';

const kinds = { boolean: new Set<string>(), json: new Set<string>(), timestamp: new Set<string>() };

describe('groupCommit', () => {
  let t: TestDatabase;
  let db: Knex;
  // Every transaction the database sees, counted at its first statement.
  let transactions = 0;

  beforeAll(async () => {
    t = await createTestDatabase({ kinds });
    db = t.db;
    await db.schema.createTable('rows', (tb) => {
      tb.string('id').primary();
      tb.integer('n').notNullable();
    });
    db.on('query', (q: { sql: string }) => {
      if (/^(begin|BEGIN)/.test(q.sql)) transactions += 1;
    });
  });
  afterAll(async () => {
    await t.dispose();
  });
  beforeEach(async () => {
    await db('rows').delete();
    transactions = 0;
  });

  const count = async () => Number((await db('rows').count({ n: '*' }).first())?.n);
  const insert = (id: string, n = 1) => async (trx: Knex) => {
    await trx('rows').insert({ id, n });
    return id;
  };

  it('commits units that arrive together in one transaction and answers each with its own result', async () => {
    const checking = inFlight();
    checking.enter();
    const commit = groupCommit(db, { maxWaitMs: 1000, expectMore: () => checking.count() > 0 });
    const answers = [commit(insert('a')), commit(insert('b')), commit(insert('c'))];
    // Nothing is committed while more are expected.
    await new Promise((r) => setTimeout(r, 50));
    expect(await count()).toBe(0);
    checking.leave();
    const last = commit(insert('d'));
    expect(await Promise.all([...answers, last])).toEqual(['a', 'b', 'c', 'd']);
    expect((await db('rows').orderBy('id').pluck('id'))).toEqual(['a', 'b', 'c', 'd']);
    expect(transactions).toBe(1);
  });

  it('rolls back only the unit that failed; the others of its batch are written', async () => {
    const commit = groupCommit(db, { maxWaitMs: 1000, expectMore: () => true, maxBatch: 3 });
    const results = await Promise.allSettled([
      commit(insert('a')),
      commit(async (trx) => {
        await trx('rows').insert({ id: 'half', n: 1 });
        await trx('rows').insert({ id: 'a', n: 2 }); // duplicate key: this unit fails
      }),
      commit(insert('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await db('rows').orderBy('id').pluck('id')).toEqual(['a', 'c']);
    expect(transactions).toBe(1);
  });

  it('a unit alone fails without writing anything', async () => {
    const commit = groupCommit(db);
    await expect(
      commit(async (trx) => {
        await trx('rows').insert({ id: 'x', n: 1 });
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await db('rows').pluck('id')).toEqual([]);
  });

  it('does not wait when nothing more is expected, and waits no longer than maxWaitMs when it is', async () => {
    const now = groupCommit(db, { maxWaitMs: 5000 });
    let t0 = Date.now();
    await now(insert('a'));
    expect(Date.now() - t0).toBeLessThan(2000);
    const bounded = groupCommit(db, { maxWaitMs: 100, expectMore: () => true });
    t0 = Date.now();
    await bounded(insert('b'));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(await db('rows').orderBy('id').pluck('id')).toEqual(['a', 'b']);
  });

  it('units arriving during a commit go into the next one, and every unit is answered', async () => {
    const commit = groupCommit(db);
    const answers = Array.from({ length: 25 }, (_, i) => commit(insert(`r${String(i).padStart(2, '0')}`, i)));
    expect(await Promise.all(answers)).toHaveLength(25);
    expect(await count()).toBe(25);
    expect(transactions).toBeLessThan(25);
  });
});
