import type { Knex } from 'knex';

/** A LIKE pattern that matches `text` literally anywhere (`%`, `_` and `\` are escaped), lower-cased. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * `column` contains `text`, case-insensitively on both dialects (SQLite's LIKE ignores ASCII case,
 * PostgreSQL's does not: both sides are lower-cased). The column name comes from code, never from a
 * request; it is bound as an identifier all the same. No text, no condition.
 */
export function whereContains<Q extends Knex.QueryBuilder>(
  q: Q,
  column: string,
  text: string | undefined,
  or = false,
): Q {
  if (!text) return q;
  const method = or ? 'orWhereRaw' : 'whereRaw';
  return q[method]("lower(??) like ? escape '\\'", [column, containsPattern(text)]) as Q;
}
