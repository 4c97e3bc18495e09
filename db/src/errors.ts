/**
 * A write refused by a unique index or primary key (PostgreSQL 23505, SQLite's UNIQUE/PRIMARY KEY
 * constraint): the answer to a race that a check before the write could not see.
 */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null | undefined;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || /UNIQUE constraint failed/.test(e?.message ?? '');
}
