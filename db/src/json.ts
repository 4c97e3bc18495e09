import type { Knex } from 'knex';

const isPg = (q: Knex.QueryBuilder): boolean =>
  (q as unknown as { client: { config: { client: string } } }).client.config.client === 'pg';

/**
 * Rows whose JSON array `column` holds at least one of `values` (string elements compared exactly),
 * or one of the values a sub-query selects. PostgreSQL reads the jsonb array, SQLite the JSON text;
 * a value that is not an array (null, a stray scalar) holds nothing.
 */
export function whereJsonArrayHasAny<Q extends Knex.QueryBuilder>(
  q: Q,
  column: string,
  values: readonly string[] | Knex.QueryBuilder,
  or = false,
): Q {
  const method = or ? 'orWhereRaw' : 'whereRaw';
  const list = Array.isArray(values) ? values : undefined;
  if (list && list.length === 0) return q[method]('1 = 0') as Q;
  const inList = list ? `(${list.map(() => '?').join(', ')})` : '?';
  const bindings = list ? [...list] : [values];
  if (isPg(q)) {
    return q[method](
      'exists (select 1 from jsonb_array_elements_text(' +
        "case when jsonb_typeof(??) = 'array' then ?? else '[]'::jsonb end) " +
        `as e(v) where e.v in ${inList})`,
      [column, column, ...bindings],
    ) as Q;
  }
  return q[method](
    "exists (select 1 from json_each(case when json_valid(??) and json_type(??) = 'array' then ?? else '[]' end) " +
      `as e where e.value in ${inList})`,
    [column, column, column, ...bindings],
  ) as Q;
}
