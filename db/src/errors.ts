/**
 * Whether a failed statement broke a unique index or primary key (PostgreSQL 23505, SQLite's
 * SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY): a write that raced another one past an "already exists"
 * check, which the caller answers like the check would have.
 */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
