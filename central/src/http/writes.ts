import { isUniqueViolation, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';

/**
 * Runs a write in one transaction. Its "already exists" rule is checked inside the transaction; should a
 * concurrent request commit the same row between that check and the write, the unique index refuses the
 * second one, which is answered with the same 400 (`duplicate`) as if the check had caught it.
 */
export async function writeTransaction<T>(
  db: Knex,
  duplicate: string | undefined,
  fn: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  try {
    return await db.transaction(fn);
  } catch (err) {
    if (duplicate && isUniqueViolation(err)) throw httpError(400, duplicate);
    throw err;
  }
}

/**
 * Locks the rows `q` selects until the transaction ends, on PostgreSQL (`share`: others may read and
 * share-lock them, not change them; `update`: nobody else may lock them). SQLite needs nothing: it runs
 * one write transaction at a time.
 */
export function locked<Q extends Knex.QueryBuilder>(trx: Knex, q: Q, mode: 'share' | 'update'): Q {
  if (trx.client.config.client !== 'pg') return q;
  return (mode === 'share' ? q.forShare() : q.forUpdate()) as Q;
}

/** The time written to `updated_at` / `deleted_at`. */
export const now = (): string => new Date().toISOString();
