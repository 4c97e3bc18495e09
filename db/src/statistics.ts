import type { Knex } from 'knex';

/**
 * Tables up to this many rows are analysed whenever they changed. Autovacuum analyses a table only after
 * 50 rows plus a tenth of it changed, so a curriculum of a few dozen lessons, levels and grades is never
 * analysed and the planner guesses its size and its values (a report's plan then reads a whole table where an
 * index answers). ANALYZE of such a table reads it whole in milliseconds; larger tables are left to autovacuum.
 */
export const SMALL_TABLE_ROWS = 100_000;

export interface AnalyzeOptions {
  /** These tables of the current schema are analysed whatever their size and state (a package's tables). */
  tables?: readonly string[];
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * PostgreSQL: ANALYZE every table of the current schema of at most SMALL_TABLE_ROWS rows that was never
 * analysed or changed since its last ANALYZE (by hand or by autovacuum), or the tables named. Returns the
 * tables analysed. SQLite: nothing (its planner is given no statistics by this service).
 */
export async function analyzeSmallTables(knex: Knex, o: AnalyzeOptions = {}): Promise<string[]> {
  if (knex.client.config.client !== 'pg') return [];
  const named = o.tables ? [...new Set(o.tables)] : undefined;
  if (named && !named.length) return [];
  // n_live_tup counts rows written since the table was created even before its first ANALYZE (reltuples is
  // -1 until then); the larger of the two is the table's size as far as the server knows it.
  const { rows } = (await knex.raw(
    `select s.schemaname as schema, s.relname as name
     from pg_stat_user_tables s join pg_class c on c.oid = s.relid
     where s.schemaname = current_schema() and (${
       named
         ? 's.relname = any(?)'
         : `greatest(c.reltuples, s.n_live_tup) <= ? and (s.n_mod_since_analyze > 0 or
            (s.last_analyze is null and s.last_autoanalyze is null))`
     })
     order by s.relname`,
    [named ?? SMALL_TABLE_ROWS],
  )) as { rows: Array<{ schema: string; name: string }> };
  for (const r of rows) await knex.raw(`ANALYZE ${quote(r.schema)}.${quote(r.name)}`);
  return rows.map((r) => r.name);
}
