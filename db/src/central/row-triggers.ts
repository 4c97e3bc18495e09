import type { Knex } from 'knex';

export type RowOp = 'insert' | 'update' | 'delete';

/**
 * Row triggers that keep a summary table in the writing transaction: AFTER INSERT, UPDATE (only when one of
 * `changed` changed) and DELETE on `table`, each running `statements(op)` with `OLD` and `NEW`. Named
 * `<name>_insert`, `<name>_update`, `<name>_delete`; on PostgreSQL one plpgsql function `<name>_keep`.
 */
export interface RowTriggers {
  name: string;
  table: string;
  statements: (op: RowOp) => string[];
  changed: readonly string[];
}

const OPS: RowOp[] = ['insert', 'update', 'delete'];

/** Creates the triggers (and, on PostgreSQL, their function); safe to run again. */
export async function createRowTriggers(knex: Knex, dialect: 'sqlite' | 'pg', t: RowTriggers): Promise<void> {
  if (dialect === 'pg') {
    const fn = `${t.name}_keep`;
    const body = (op: RowOp) => t.statements(op).map((s) => `    ${s};`).join('\n');
    await knex.raw(`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
${body('insert')}
  ELSIF TG_OP = 'UPDATE' THEN
${body('update')}
  ELSE
${body('delete')}
  END IF;
  RETURN NULL;
END
$fn$`);
    const changed = t.changed.map((c) => `OLD.${c} IS DISTINCT FROM NEW.${c}`).join(' OR ');
    for (const op of OPS) {
      await knex.raw(`DROP TRIGGER IF EXISTS ${t.name}_${op} ON ${t.table}`);
      await knex.raw(`CREATE TRIGGER ${t.name}_${op} AFTER ${op.toUpperCase()} ON ${t.table}
      FOR EACH ROW ${op === 'update' ? `WHEN (${changed}) ` : ''}EXECUTE PROCEDURE ${fn}()`);
    }
    return;
  }
  const changed = t.changed.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(' OR ');
  for (const op of OPS) {
    await knex.raw(
      `CREATE TRIGGER IF NOT EXISTS ${t.name}_${op} AFTER ${op.toUpperCase()} ON ${t.table} ` +
        `FOR EACH ROW ${op === 'update' ? `WHEN ${changed} ` : ''}BEGIN\n` +
        `${t.statements(op).map((s) => `  ${s};`).join('\n')}\nEND`,
    );
  }
}

export async function dropRowTriggers(knex: Knex, dialect: 'sqlite' | 'pg', t: RowTriggers): Promise<void> {
  for (const op of OPS) {
    await knex.raw(`DROP TRIGGER IF EXISTS ${t.name}_${op}${dialect === 'pg' ? ` ON ${t.table}` : ''}`);
  }
  if (dialect === 'pg') await knex.raw(`DROP FUNCTION IF EXISTS ${t.name}_keep()`);
}
