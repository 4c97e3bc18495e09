/** How a target column stores its value; decides what a source value must become. */
export type TargetKind = 'boolean' | 'json' | 'timestamp' | 'number' | 'integer' | 'text';

/** The range of this service's whole-number columns (PostgreSQL `integer`). */
export const INTEGER_RANGE = [-2147483648, 2147483647] as const;

/** What had to change in a value beyond its type (counted as "transformed" in the report). */
export type Change = 'double-encoded JSON unwrapped' | 'decimal text read as a number' | 'zero date stored as NULL'
  | 'binary text read as UTF-8' | 'upper-case id lower-cased';

export class Refusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

const MYSQL_DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?$/;

/** A zone-less MySQL DATETIME / DATE / TIMESTAMP (read in a +00:00 session) as ISO-8601 UTC; null for a zero date. */
export function mysqlTimeToIso(text: string): string | null {
  const m = MYSQL_DATETIME.exec(text.trim());
  if (!m) throw new Refusal(`time ${JSON.stringify(text)} is not a MySQL date`);
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = ''] = m;
  if (Number(y) === 0 || Number(mo) === 0 || Number(d) === 0) return null;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}.${(frac + '000').slice(0, 3)}Z`;
  const t = new Date(iso);
  // 2026-02-30 would roll over into March; the original cannot have meant that.
  if (Number.isNaN(t.getTime()) || t.toISOString() !== iso)
    throw new Refusal(`time ${JSON.stringify(text)} is not a real date`);
  return iso;
}

/**
 * JSON text as stored by the original: parsed, and while the result is a string that itself parses as JSON
 * (a box stores content columns double-encoded), parsed again. Answers the JSON text to store.
 */
export function unwrapJson(text: string): { json: string; unwrapped: boolean } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Refusal('JSON that does not parse');
  }
  let unwrapped = false;
  for (let i = 0; i < 4 && typeof value === 'string'; i++) {
    const s = value.trim();
    if (!(s.startsWith('{') || s.startsWith('[') || s.startsWith('"') || s === 'null')) break;
    try {
      value = JSON.parse(s);
      unwrapped = true;
    } catch {
      break;
    }
  }
  return { json: JSON.stringify(value), unwrapped };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A uuid id in lower case. The original compares ids under a case-insensitive collation, so a row it wrote (or
 * had written by hand) with an upper-case id joins its lower-case parent there; here ids compare exactly.
 */
export function lowerCaseId(value: unknown, changes: Set<Change>): unknown {
  if (typeof value !== 'string' || !UUID.test(value) || value === value.toLowerCase()) return value;
  changes.add('upper-case id lower-cased');
  return value.toLowerCase();
}

/**
 * One source value as the target column takes it. Only what must change changes: 0/1 to booleans, DATETIME
 * text to ISO-8601 UTC, DECIMAL text to numbers, JSON text re-encoded once.
 */
export function convert(
  value: unknown,
  sourceType: string,
  kind: TargetKind,
  nullable: boolean,
  changes: Set<Change>,
): unknown {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) {
    changes.add('binary text read as UTF-8');
    value = value.toString('utf8');
  }
  switch (kind) {
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number' || typeof value === 'bigint') return Number(value) !== 0;
      if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value) !== 0;
      throw new Refusal(`${JSON.stringify(value)} is not a boolean`);
    case 'json': {
      const { json, unwrapped } = unwrapJson(typeof value === 'string' ? value : JSON.stringify(value));
      if (json.includes('\\u0000')) throw new Refusal('JSON with a NUL byte');
      if (unwrapped) changes.add('double-encoded JSON unwrapped');
      return json;
    }
    case 'timestamp': {
      const iso = mysqlTimeToIso(String(value));
      if (iso === null) {
        if (!nullable) throw new Refusal(`zero date ${JSON.stringify(value)} where a date is required`);
        changes.add('zero date stored as NULL');
      }
      return iso;
    }
    case 'integer': {
      // The original's INT UNSIGNED columns hold up to 4294967295; PostgreSQL refuses more than INTEGER_RANGE
      // and SQLite would take it: refused alike on both databases, with the limit named.
      const n = convert(value, sourceType, 'number', nullable, changes) as number;
      if (n < INTEGER_RANGE[0] || n > INTEGER_RANGE[1]) {
        throw new Refusal(`${n} is beyond the whole numbers this service stores (${INTEGER_RANGE.join(' to ')})`);
      }
      return n;
    }
    case 'number':
      if (typeof value === 'number') return value;
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
        if (sourceType === 'decimal' || sourceType === 'numeric') changes.add('decimal text read as a number');
        return Number(value);
      }
      if (typeof value === 'boolean') return value ? 1 : 0;
      throw new Refusal(`${JSON.stringify(value)} is not a number`);
    case 'text': {
      const text = typeof value === 'string' ? value : String(value);
      // PostgreSQL cannot store a NUL byte, and no name or text of the original means one: refused alike on
      // both databases (a NUL in a name shows one account name to people and another to the code).
      if (text.includes('\u0000')) throw new Refusal('text with a NUL byte');
      return text;
    }
  }
}
