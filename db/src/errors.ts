/**
 * Whether a database error is a unique or primary-key violation (PostgreSQL 23505, SQLite's
 * SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY): the loser of a race for a name, which a route answers
 * with its "already exists" message rather than a 500.
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
