import { z } from 'zod';

/**
 * Request fields refused in the words of the original's validators, which name a field by its label:
 * `"Lesson Name" is required`, `"Lesson Name" length must be at least 3 characters long`,
 * `"Lesson ID" must be a valid GUID`, `Lesson Name not allowed` (blank). Numbers may come as numeric
 * strings (path parameters always do; the original converted body values the same way).
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
}

function lengthIssues(label: string, v: string, o: TextRule, ctx: z.RefinementCtx): void {
  if (o.min !== undefined && v.length < o.min) ctx.addIssue({ code: 'custom', message: `${quoted(label)} length must be at least ${o.min} characters long`, params: labelled });
  if (o.max !== undefined && v.length > o.max) ctx.addIssue({ code: 'custom', message: `${quoted(label)} length must be less than or equal to ${o.max} characters long`, params: labelled });
  if (o.nonblank && v.length > 0 && v.trim().length === 0) ctx.addIssue({ code: 'custom', message: `${label} not allowed`, params: labelled });
}

/** A required string. */
export function text(label: string, o: TextRule = {}) {
  return z
    .string({ error: (iss) => (iss.input === undefined ? `${quoted(label)} is required` : `${quoted(label)} must be a string`) })
    .min(1, { error: `${quoted(label)} is not allowed to be empty`, abort: true })
    .superRefine((v, ctx) => lengthIssues(label, v, o, ctx));
}

/** A string that may be absent, null or empty; any other value is held to the rule. */
export function optionalText(label: string, o: TextRule = {}) {
  return z
    .string({ error: `${quoted(label)} must be a string` })
    .nullable()
    .optional()
    .superRefine((v, ctx) => {
      if (v) lengthIssues(label, v, o, ctx);
    });
}

/** A required UUID, lower-cased (ids are stored lower-case; PostgreSQL compares text exactly). */
export function guid(label: string) {
  return z
    .string({ error: (iss) => (iss.input === undefined ? `${quoted(label)} is required` : `${quoted(label)} must be a string`) })
    .regex(UUID, { error: `${quoted(label)} must be a valid GUID` })
    .transform((v) => v.toLowerCase());
}

export interface NumberRule {
  int?: boolean;
  min?: number;
  max?: number;
}

/** A required number (a numeric string is read as its number). */
export function number(label: string, o: NumberRule = {}) {
  let n = z.number({ error: (iss) => (iss.input === undefined ? `${quoted(label)} is required` : `${quoted(label)} must be a number`) });
  if (o.int) n = n.int({ error: `${quoted(label)} must be an integer` });
  if (o.min !== undefined) n = n.min(o.min, { error: `${quoted(label)} must be greater than or equal to ${o.min}` });
  if (o.max !== undefined) n = n.max(o.max, { error: `${quoted(label)} must be less than or equal to ${o.max}` });
  return z.preprocess((v) => (typeof v === 'string' && NUMERIC.test(v.trim()) ? Number(v) : v), n);
}

/** An order column: an integer the database's INTEGER holds. */
export const order = (label: string) => number(label, { int: true, min: -2147483648, max: 2147483647 });
