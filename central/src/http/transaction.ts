import { isUniqueViolation, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';

/**
 * Runs a write whose "already exists" rule is checked inside `fn`, in one transaction. When a concurrent
 * request slips past the check and a unique index refuses the write, the caller gets the rule's own 400
 * (`duplicate`), as if the check had caught it.
 */
export async function uniqueWrite<T>(db: Knex, duplicate: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(fn);
  } catch (err) {
    if (isUniqueViolation(err)) throw httpError(400, duplicate);
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
