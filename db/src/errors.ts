/**
 * Whether a database error is a unique-index violation (PostgreSQL 23505; SQLite's UNIQUE or PRIMARY KEY
 * constraint). A write that checked "already exists" inside its transaction can still meet one when a
 * concurrent transaction committed the same row first: the caller answers it as the same refusal.
 */
export function isUniqueViolation(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
