import { z } from 'zod';

/**
 * Field rules with the original's (Joi's) words, shared by the authoring areas: one message per field,
 * the first rule it breaks, e.g. `"gradename" length must be at least 3 characters long`.
 */

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any 8-4-4-4-12 hex id: rows carried over from the original keep ids that are not RFC 4122 v4. */
export const guid = () => z.string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') }).regex(GUID, { error: 'must be a valid GUID' });

/** A params schema whose every named segment is a GUID. */
export function guidParams<K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((n) => [n, guid()])) as Record<K, ReturnType<typeof guid>>);
}

/**
 * A string of `min`..`max` characters that is not only whitespace (the original's `nonblank`, checked
 * after the lengths). `empty: true` lets '' through as it is (descriptions: the admin UI sends '' for an
 * untouched field); `pattern` is checked before the lengths, as Joi checks `alphanum()`.
 */
export function text(min: number, max: number, o: { empty?: boolean; pattern?: { re: RegExp; message: string } } = {}) {
  return z.string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') }).superRefine((v, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (v === '') {
      if (!o.empty) fail('is not allowed to be empty');
    } else if (o.pattern && !o.pattern.re.test(v)) fail(o.pattern.message);
    else if (v.length < min) fail(`length must be at least ${min} characters long`);
    else if (v.length > max) fail(`length must be less than or equal to ${max} characters long`);
    else if (v.trim() === '') fail('not allowed');
  });
}

/** A description: absent, null, '' or a `text(min, max)`. */
export const description = (min: number, max: number) => text(min, max, { empty: true }).nullable().optional();

const INT32_MAX = 2_147_483_647;

/** A JSON number, or a string holding one (Joi converts those too). */
const numeric = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v);

/**
 * An integer within `min`..`max` (the columns are 32-bit integers: a larger value would otherwise reach
 * the database and fail there).
 */
export function integer(o: { min?: number; max?: number } = {}) {
  const min = o.min ?? -INT32_MAX;
  const max = o.max ?? INT32_MAX;
  return z.preprocess(
    numeric,
    z.number({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a number') }).superRefine((v, ctx) => {
      const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
      if (!Number.isInteger(v)) fail('must be an integer');
      else if (v < min) fail(`must be greater than or equal to ${min}`);
      else if (v > max) fail(`must be less than or equal to ${max}`);
    }),
  );
}
