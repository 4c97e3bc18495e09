import type { Knex } from 'knex';
import { readRows } from './read';

/**
 * Rejects unless the database answers a trivial query. On SQLite it reads on the reading connection
 * (see readRows), so a long write transaction holding the pool's one connection does not make the
 * service look down; on PostgreSQL it takes a connection of the pool, as every request does.
 */
export async function probeDatabase(db: Knex): Promise<void> {
  await readRows(db.select(db.raw('1 as ok')));
}

export interface PoolStats {
  /** Connections lent out to queries and transactions. */
  used: number;
  /** Open connections waiting in the pool. */
  free: number;
  /** Requests waiting for a connection. */
  waiting: number;
  /** The pool's ceiling. */
  max: number;
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/** What the connection pool (tarn, under Knex) holds now; zeros once the pool is destroyed. */
export function poolStats(db: Knex): PoolStats {
  const pool = (db.client as { pool?: TarnPool | null }).pool;
  if (!pool) return { used: 0, free: 0, waiting: 0, max: 0 };
  return { used: pool.numUsed(), free: pool.numFree(), waiting: pool.numPendingAcquires(), max: pool.max };
}
