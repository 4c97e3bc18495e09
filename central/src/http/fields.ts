import { z } from 'zod';

/**
 * Request fields refused in the words of the original's validators, which name a field by its label:
 * `"Lesson Name" is required`, `"Lesson Name" length must be at least 3 characters long`,
 * `"Lesson ID" must be a valid GUID`, `Lesson Name not allowed` (blank). Where the original sets no
 * label, the field's key is its label (`"templatetypeid" must be a number`). Numbers may come as
 * numeric strings (path parameters always do; the original converted body values the same way).
 */
const quoted = (label: string) => `"${label}"`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const labelled = { labelled: true };

export interface TextRule {
  min?: number;
  max?: number;
  /** Refuse a value of whitespace only (`<Label> not allowed`). */
  nonblank?: boolean;
  /**
   * A shape the value must have, checked first and alone (as the original checks `alphanum()` before the
   * lengths): `message` follows the label, e.g. `must only contain alpha-numeric characters`.
   */
  pattern?: { re: RegExp; message: string };
}

function textIssues(label: string, v: string, o: TextRule, ctx: z.RefinementCtx): void {
  if (o.pattern && !o.pattern.re.test(v)) {
    ctx.addIssue({ code: 'custom', message: `${quoted(label)} ${o.pattern.message}`, params: labelled });
    return;
  }
  if (o.min !== undefined && v.length < o.min)
    ctx.addIssue({
      code: 'custom',
      message: `${quoted(label)} length must be at least ${o.min} characters long`,
      params: labelled,
    });
  if (o.max !== undefined && v.length > o.max)
    ctx.addIssue({
      code: 'custom',
      message: `${quoted(label)} length must be less than or equal to ${o.max} characters long`,
      params: labelled,
    });
  if (o.nonblank && v.length > 0 && v.trim().length === 0)
    ctx.addIssue({ code: 'custom', message: `${label} not allowed`, params: labelled });
}

/** A required string. */
export function text(label: string, o: TextRule = {}) {
  return z
    .string({
      error: (iss) => (iss.input === undefined ? `${quoted(label)} is required` : `${quoted(label)} must be a string`),
    })
    .min(1, { error: `${quoted(label)} is not allowed to be empty`, abort: true })
    .superRefine((v, ctx) => textIssues(label, v, o, ctx));
}

/** A string that may be absent, null or empty; any other value is held to the rule. */
export function optionalText(label: string, o: TextRule = {}) {
  return z
    .string({ error: `${quoted(label)} must be a string` })
    .nullable()
    .optional()
    .superRefine((v, ctx) => {
      if (v) textIssues(label, v, o, ctx);
    });
}

/**
 * A description: absent, null or '' (the admin UI sends '' for a field left untouched), else held to
 * the rule and refused when blank.
 */
export const description = (label: string, min: number, max: number) =>
  optionalText(label, { min, max, nonblank: true });

/**
 * A required id, lower-cased (ids are stored lower-case; PostgreSQL compares text exactly). Any
 * 8-4-4-4-12 hex id is taken: rows carried over from the original keep ids that are not RFC 4122 v4.
 */
export function guid(label: string) {
  return z
    .string({
      error: (iss) => (iss.input === undefined ? `${quoted(label)} is required` : `${quoted(label)} must be a string`),
    })
    .regex(UUID, { error: `${quoted(label)} must be a valid GUID` })
    .transform((v) => v.toLowerCase());
}

/** A params schema whose every segment is an id: `guidParams({ subjectid: 'Subject ID' })`. */
export function guidParams<K extends string>(labels: Record<K, string>) {
  const shape = Object.fromEntries(Object.entries<string>(labels).map(([k, label]) => [k, guid(label)])) as Record<
    K,
    ReturnType<typeof guid>
  >;
  return z.object(shape);
}

export interface NumberRule {
  int?: boolean;
  min?: number;
  max?: number;
}

/** A required number (a numeric string is read as its number). */
export function number(label: string, o: NumberRule = {}) {
  let n = z.number({
    error: (iss) => (iss.input === undefined ? `${quoted(label)} is required` : `${quoted(label)} must be a number`),
  });
  if (o.int) n = n.int({ error: `${quoted(label)} must be an integer` });
  if (o.min !== undefined) n = n.min(o.min, { error: `${quoted(label)} must be greater than or equal to ${o.min}` });
  if (o.max !== undefined) n = n.max(o.max, { error: `${quoted(label)} must be less than or equal to ${o.max}` });
  return z.preprocess((v) => (typeof v === 'string' && NUMERIC.test(v.trim()) ? Number(v) : v), n);
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * An integer the database's INTEGER column holds; `min`/`max` narrow it further. Without the bounds a
 * larger value would reach the database and fail there.
 */
export const integer = (label: string, o: { min?: number; max?: number } = {}) =>
  number(label, { int: true, min: o.min ?? INT32_MIN, max: o.max ?? INT32_MAX });

/** An order column. */
export const order = (label: string) => integer(label);
