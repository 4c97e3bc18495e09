import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { central, createTestDatabase, type Knex } from '../src';
import { backfillAppUsageTotals } from '../src/central/app-usage-totals';

// studentappusagetotals against the sum the activity report ran over every app-use row before it existed:
// after any mix of inserts, merges that change a row's time or user, and deletes, each user's total and
// row count are exactly that sum, on SQLite and PostgreSQL; the back-fill rebuilds the same, also while
// an import writes.

type Row = { schooluserid: string; time_spent: number; usages: number };

const sorted = (rows: Array<Record<string, unknown>>): Row[] =>
  rows
    .map((r) => ({
      schooluserid: String(r.schooluserid),
      time_spent: Number(r.time_spent),
      usages: Number(r.usages),
    }))
    .sort((a, b) => a.schooluserid.localeCompare(b.schooluserid));

async function summed(db: Knex): Promise<Row[]> {
  return sorted(
    (await db('studentappusages')
      .groupBy('schooluserid')
      .select('schooluserid', { time_spent: db.raw('sum(time_spent)'), usages: db.raw('count(*)') })) as Array<
      Record<string, unknown>
    >,
  );
}

async function kept(db: Knex): Promise<Row[]> {
  return sorted((await db('studentappusagetotals').select('schooluserid', 'time_spent', 'usages')) as Array<
    Record<string, unknown>
  >);
}

describe('studentappusagetotals', () => {
  let db: Knex;
  let close: () => Promise<void>;
  const pg = !!process.env.TEST_DATABASE_URL;
  const users = Array.from({ length: 5 }, () => crypto.randomUUID());

  beforeAll(async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    db = t.db;
    close = () => t.dispose();
  });
  afterAll(async () => close?.());

  it('holds each user’s sum and count through inserts, merges and deletes', async () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * n);
    };
    const ids: string[] = [];
    const seconds = () => rand(3600) + [0, 0.5, 0.25][rand(3)];
    for (let step = 0; step < 300; step += 1) {
      const op = rand(10);
      if (op < 5 || ids.length < 5) {
        const studentappusageid = crypto.randomUUID();
        ids.push(studentappusageid);
        await db('studentappusages').insert({
          studentappusageid,
          schooluserid: users[rand(users.length)],
          time_spent: seconds(),
        });
      } else if (op < 7) {
        // The import's merge: the same key sent again, changed or not.
        const studentappusageid = ids[rand(ids.length)];
        const row = await db('studentappusages').where({ studentappusageid }).first();
        await db('studentappusages')
          .insert({ ...row, time_spent: rand(2) ? row.time_spent : seconds() })
          .onConflict('studentappusageid')
          .merge(['time_spent']);
      } else if (op < 9) {
        const studentappusageid = ids[rand(ids.length)];
        await db('studentappusages')
          .where({ studentappusageid })
          .update(rand(2) ? { schooluserid: users[rand(users.length)] } : { time_spent: seconds() });
      } else {
        const [studentappusageid] = ids.splice(rand(ids.length), 1);
        await db('studentappusages').where({ studentappusageid }).del();
      }
      if (step % 50 === 49) expect(await kept(db)).toEqual(await summed(db));
    }
    expect((await kept(db)).length).toBe(users.length);
    expect(await kept(db)).toEqual(await summed(db));
    // A user whose last row goes away has no total row left.
    await db('studentappusages').where({ schooluserid: users[0] }).del();
    expect((await kept(db)).map((r) => r.schooluserid)).not.toContain(users[0]);
    expect(await kept(db)).toEqual(await summed(db));
  });

  it('is rebuilt the same by the back-fill', async () => {
    const before = await kept(db);
    await db('studentappusagetotals').del();
    expect(await backfillAppUsageTotals(db, pg ? 'pg' : 'sqlite', { batch: 2 })).toBe(before.length);
    expect(await kept(db)).toEqual(before);
  });

  it.runIf(pg)('counts a row an uncommitted import writes while the back-fill runs exactly once', async () => {
    const late = users[1];
    await db('studentappusagetotals').del();
    let inserted!: () => void;
    const rowWritten = new Promise<void>((resolve) => (inserted = resolve));
    let release!: () => void;
    const commit = new Promise<void>((resolve) => (release = resolve));
    const importing = db.transaction(async (trx) => {
      await trx('studentappusages').insert({
        studentappusageid: crypto.randomUUID(),
        schooluserid: late,
        time_spent: 77,
      });
      inserted();
      await commit;
    });
    await rowWritten;
    // The back-fill waits for the import's transaction (its lock), which commits meanwhile.
    const backfill = backfillAppUsageTotals(db, 'pg', { batch: 2, lockTimeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    release();
    await importing;
    await backfill;
    expect(await kept(db)).toEqual(await summed(db));
  });
});
