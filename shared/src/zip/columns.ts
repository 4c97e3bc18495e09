import { ZipError } from './errors';

/**
 * Column kinds of the rows that cross between the servers. A reader normalises what real servers write
 * (booleans as 0/1 or "true", DECIMAL as strings, datetimes as ISO or epoch ms, JSON columns as
 * JSON-encoded strings) into one shape; a writer emits that shape.
 */
export type ColumnKind =
  | 'id' // required string key
  | 'string'
  | 'int'
  | 'number'
  /** A MySQL DECIMAL: read as a number, emitted as a string the way the original wire carries it. */
  | 'decimal'
  | 'bool'
  | 'datetime'
  | 'json';

export type ColumnSpec = Readonly<Record<string, ColumnKind>>;

type ValueOf<K extends ColumnKind> = K extends 'id'
  ? string
  : K extends 'string'
    ? string | null
    : K extends 'int' | 'number'
      ? number | null
      : K extends 'decimal'
        ? number | string | null
      : K extends 'bool'
        ? boolean | null
        : K extends 'datetime'
          ? string | null
          : unknown;

/** The row type a column spec describes. */
export type RowOf<S extends ColumnSpec> = { -readonly [C in keyof S]: ValueOf<S[C]> };

const bad = (table: string, column: string, value: unknown): ZipError =>
  new ZipError('bad_document', `${table}.${column}: unexpected value ${JSON.stringify(value)?.slice(0, 60)}`);

function toNumber(table: string, column: string, v: unknown, integer: boolean): number | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v.trim()) : Number.NaN;
  if (!Number.isFinite(n)) throw bad(table, column, v);
  return integer ? Math.round(n) : n;
}

function toBool(table: string, column: string, v: unknown): boolean | null {
  if (v === null || v === undefined || v === '') return null;
  if (v === true || v === 1 || v === '1' || v === 'true') return true;
  if (v === false || v === 0 || v === '0' || v === 'false') return false;
  throw bad(table, column, v);
}

function toDatetime(table: string, column: string, v: unknown): string | null {
  if (v === null || v === undefined || v === '') return null;
  let d: Date;
  if (v instanceof Date) d = v;
  else if (typeof v === 'number') d = new Date(v);
  else if (typeof v === 'string' && /^\d{10,}$/.test(v.trim())) d = new Date(Number(v.trim()));
  else if (typeof v === 'string')
    d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(v) || !/\d:\d/.test(v) ? v : `${v.replace(' ', 'T')}Z`);
  else throw bad(table, column, v);
  if (Number.isNaN(d.getTime())) throw bad(table, column, v);
  return d.toISOString();
}

function toJson(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? null;
  const t = v.trim();
  // The MariaDB reference stack emits JSON columns as JSON-encoded strings; a plain string stays a string.
  if (t.startsWith('[') || t.startsWith('{') || t === 'null') {
    try {
      return JSON.parse(t);
    } catch {
      return v;
    }
  }
  return v;
}

/**
 * Keeps the spec's columns only (unknown keys are ignored, as every importer of the original did) and
 * normalises their values. A column absent from the input stays absent, so that an upsert does not
 * overwrite it with null; a missing or empty `id` column refuses the row.
 */
export function normaliseRow<S extends ColumnSpec>(table: string, spec: S, input: unknown): Partial<RowOf<S>> {
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw new ZipError('bad_document', `${table}: a row must be an object`);
  const src = input as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const column of Object.keys(spec)) {
    const kind = spec[column];
    const has = Object.prototype.hasOwnProperty.call(src, column);
    const v = src[column];
    if (kind === 'id') {
      if (typeof v === 'number') out[column] = String(v);
      else if (typeof v === 'string' && v.trim() !== '') out[column] = v.trim();
      else throw new ZipError('bad_document', `${table}: "${column}" is required`);
      continue;
    }
    if (!has) continue;
    switch (kind) {
      case 'string':
        out[column] =
          v === null || v === undefined
            ? null
            : typeof v === 'string'
              ? v
              : typeof v === 'object'
                ? JSON.stringify(v)
                : String(v);
        break;
      case 'int':
        out[column] = toNumber(table, column, v, true);
        break;
      case 'number':
      case 'decimal':
        out[column] = toNumber(table, column, v, false);
        break;
      case 'bool':
        out[column] = toBool(table, column, v);
        break;
      case 'datetime':
        out[column] = toDatetime(table, column, v);
        break;
      case 'json':
        out[column] = toJson(v);
        break;
    }
  }
  return out as Partial<RowOf<S>>;
}

/** A row as a writer emits it: the spec's columns, in the spec's order, with normalised values. */
export function emitRow<S extends ColumnSpec>(
  table: string,
  spec: S,
  input: Record<string, unknown>,
): Partial<RowOf<S>> {
  const row = normaliseRow(table, spec, input) as Record<string, unknown>;
  for (const column of Object.keys(spec)) {
    if (spec[column] === 'decimal' && typeof row[column] === 'number') row[column] = String(row[column]);
  }
  return row as Partial<RowOf<S>>;
}
