import type { Knex } from 'knex';

export type ColumnType = 'string' | 'text' | 'boolean' | 'integer' | 'increments' | 'double' | 'json' | 'timestamp';

export interface ColumnSpec {
  name: string;
  type: ColumnType;
  length?: number;
  nullable?: boolean;
  /** 'now' means the current UTC time at insert. */
  default?: string | number | boolean;
  references?: { table: string; column: string; onDelete?: string; onUpdate?: string };
}

export interface TableSpec {
  name: string;
  primary?: string[];
  unique?: string[][];
  indexes?: string[][];
  columns: ColumnSpec[];
}

/** ISO-8601 UTC with milliseconds, the one timestamp format stored on SQLite (sorts as text). */
export function nowDefault(knex: Knex): Knex.Raw {
  return knex.client.config.client === 'pg'
    ? knex.raw('CURRENT_TIMESTAMP')
    : knex.raw("(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
}

function addColumn(knex: Knex, t: Knex.CreateTableBuilder, c: ColumnSpec): void {
  let col: Knex.ColumnBuilder;
  switch (c.type) {
    case 'string': col = t.string(c.name, c.length ?? 255); break;
    case 'text': col = t.text(c.name); break;
    case 'boolean': col = t.boolean(c.name); break;
    case 'integer': col = t.integer(c.name); break;
    case 'increments': col = t.increments(c.name); break;
    case 'double': col = t.double(c.name); break;
    case 'json': col = knex.client.config.client === 'pg' ? t.jsonb(c.name) : t.text(c.name); break;
    case 'timestamp': col = t.timestamp(c.name, { useTz: true, precision: 3 }); break;
  }
  if (c.type !== 'increments') {
    if (c.nullable) col.nullable(); else col.notNullable();
  }
  if (c.default === 'now' && c.type === 'timestamp') col.defaultTo(nowDefault(knex));
  else if (c.default !== undefined) col.defaultTo(c.default as never);
  if (c.references) {
    const fk = col.references(c.references.column).inTable(c.references.table);
    if (c.references.onDelete) fk.onDelete(c.references.onDelete);
    if (c.references.onUpdate) fk.onUpdate(c.references.onUpdate);
  }
}

export async function createTables(knex: Knex, specs: TableSpec[]): Promise<void> {
  for (const spec of specs) {
    await knex.schema.createTable(spec.name, (t) => {
      for (const c of spec.columns) addColumn(knex, t, c);
      const serial = spec.columns.some((c) => c.type === 'increments');
      if (spec.primary && !serial) t.primary(spec.primary, `${spec.name}_pkey`);
      for (const u of spec.unique ?? []) t.unique(u, { indexName: `${spec.name}_${u.join('_')}_unique` });
      for (const i of spec.indexes ?? []) t.index(i, `${spec.name}_${i.join('_')}_idx`);
    });
  }
}

export async function dropTables(knex: Knex, specs: TableSpec[]): Promise<void> {
  for (const spec of [...specs].reverse()) await knex.schema.dropTableIfExists(spec.name);
}

/** Column names by kind across a database's tables, for normalising rows read back from SQLite. */
export interface ColumnKinds {
  boolean: Set<string>;
  json: Set<string>;
  timestamp: Set<string>;
}

export function columnKinds(specs: TableSpec[]): ColumnKinds {
  const kinds: ColumnKinds = { boolean: new Set(), json: new Set(), timestamp: new Set() };
  for (const s of specs) for (const c of s.columns) {
    if (c.type === 'boolean') kinds.boolean.add(c.name);
    if (c.type === 'json') kinds.json.add(c.name);
    if (c.type === 'timestamp') kinds.timestamp.add(c.name);
  }
  return kinds;
}

/** Adds columns to an existing table (expand step), skipping those already there so that a rerun is harmless. */
export async function addColumns(knex: Knex, spec: TableSpec): Promise<void> {
  const missing: ColumnSpec[] = [];
  for (const c of spec.columns) if (!(await knex.schema.hasColumn(spec.name, c.name))) missing.push(c);
  if (!missing.length) return;
  await knex.schema.alterTable(spec.name, (t) => {
    for (const c of missing) addColumn(knex, t as unknown as Knex.CreateTableBuilder, c);
  });
}

export async function dropColumns(knex: Knex, spec: TableSpec): Promise<void> {
  for (const c of spec.columns) {
    if (!(await knex.schema.hasColumn(spec.name, c.name))) continue;
    await knex.schema.alterTable(spec.name, (t) => t.dropColumn(c.name));
  }
}
