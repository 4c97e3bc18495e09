import { z } from 'zod';
import { strictBody } from '../../auth/validation';

/**
 * The learner payloads of the contract (§21): the create item, the CSV edit row, and the rules they
 * share. Messages are the original validator's words, one per field (the first rule a value breaks).
 * Names and parents' names take any script: a learner is enrolled under their own name.
 */

export const WG = [
  'wg_seeing',
  'wg_hearing',
  'wg_walking',
  'wg_remembering',
  'wg_selfcare',
  'wg_communicating',
] as const;
export type WgColumn = (typeof WG)[number];

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A string of `min`..`max` characters; `''` is refused as empty first. */
export const text = (min: number, max: number) =>
  z.string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
    .min(1, { error: 'is not allowed to be empty', abort: true })
    .min(min, { error: `length must be at least ${min} characters long`, abort: true })
    .max(max, { error: `length must be less than or equal to ${max} characters long`, abort: true });

/** `''`, null, or what `schema` accepts; a refusal says what `schema` said. */
function orBlank<T extends z.ZodType>(schema: T) {
  return z.union([z.literal(''), z.null(), schema], {
    error: (iss) => {
      const branches = (iss as { errors?: Array<Array<{ message: string }>> }).errors;
      return branches?.[branches.length - 1]?.[0]?.message;
    },
  });
}

/** Optional text where `''` and null mean "none". */
const blankable = (min: number, max: number) => orBlank(text(min, max)).optional();

const alnum = (min: number, max: number) =>
  text(min, max).regex(/^[A-Za-z0-9]+$/, { error: 'must only contain alpha-numeric characters' });

/** A spreadsheet may hand a digit over as a number: 1 and '1' are the same answer. */
const digit = (values: readonly string[], message: string) =>
  z.preprocess(
    (v) => (typeof v === 'number' && Number.isInteger(v) ? String(v) : v),
    z.enum(values as [string, ...string[]], { error: message }),
  );

const wgAnswer = orBlank(digit(['1', '2', '3', '4'], 'must be one of [1, 2, 3, 4]')).optional();

/** `dd-MM-yyyy` (and `d-M-yyyy` where `loose`), a real calendar day. */
export function parseDmy(v: string | null | undefined, loose = false): Date | null {
  const m = (loose ? /^(\d{1,2})-(\d{1,2})-(\d{4})$/ : /^(\d{2})-(\d{2})-(\d{4})$/).exec(v ?? '');
  if (!m) return null;
  const d = new Date(Date.UTC(Number(m[3]), Number(m[2]) - 1, Number(m[1])));
  return d.getUTCDate() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCFullYear() === Number(m[3])
    ? d
    : null;
}

/** A stored timestamp as the CSV writes it (UTC day). */
export function toDmy(iso: unknown): string {
  if (!iso) return '';
  const d = new Date(String(iso));
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}-${p(d.getUTCMonth() + 1)}-${d.getUTCFullYear()}`;
}

const date = (o: { optional: boolean; min: number; loose: boolean }) => {
  const valid = z.string({ error: 'must be a string' })
    .min(o.min, { error: 'not valid', abort: true })
    .max(10, { error: 'not valid', abort: true })
    .refine((v) => parseDmy(v, o.loose) !== null, { error: 'not valid' });
  return o.optional ? orBlank(valid).optional() : valid;
};

const gender = digit(['1', '2'], 'must be one of [1, 2]');
const wgFields = Object.fromEntries(WG.map((k) => [k, wgAnswer])) as Record<WgColumn, typeof wgAnswer>;

/** A learner's names and contact, the same on create and on update. */
const nameFields = {
  studentfirstname: text(2, 100),
  studentlastname: blankable(1, 100),
  familyname: blankable(1, 100),
  mothername: blankable(1, 100),
  fathername: blankable(1, 100),
  contact: blankable(1, 100),
};

/** One learner of POST /student/create (`students[]`). */
export const createRow = strictBody({
  ...nameFields,
  dateofbirth: date({ optional: true, min: 10, loose: false }),
  dateofjoin: date({ optional: false, min: 10, loose: false }),
  genderid: gender,
  ...wgFields,
  city: text(2, 100),
  country: text(2, 100),
  state: text(1, 100),
  // Verified live on the original: '' and null are refused here (the CSV template has no such column).
  schooltype: text(1, 100).optional(),
  schoolusername: alnum(2, 16),
  schooluserpasswordhash: alnum(1, 16),
  type: z.enum(['offline', 'online'], { error: 'must be one of [offline, online]' }).optional(),
  is_teacher_acc: z.enum(['1', '0', ''], { error: 'must be one of [1, 0, ]' }).optional(),
});
export type CreateRow = z.infer<typeof createRow>;

export const createBody = strictBody({
  curriculumid: z
    .array(
      z
        .string({ error: 'must be a string' })
        .max(36, { error: 'length must be less than or equal to 36 characters long' }),
      { error: 'is required' },
    )
    .min(1, { error: 'must contain at least 1 items' })
    .max(50, { error: 'must contain less than or equal to 50 items' }),
  schoolid: z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
    .max(36, { error: 'length must be less than or equal to 36 characters long' }),
  standard: z
    .union([z.string().max(36, { error: 'length must be less than or equal to 36 characters long' }), z.null()], {
      error: 'must be a string',
    })
    .optional(),
  students: z
    .array(createRow, { error: 'is required' })
    .min(1, { error: 'must contain at least 1 items' })
    .max(500, { error: 'must contain less than or equal to 500 items' }),
});
export type CreateBody = z.infer<typeof createBody>;

/** One row of PUT /student/update: a line of the learner CSV (GET /student/download-students). */
export const editRow = strictBody({
  studentid: z.string({ error: 'is required' }).regex(GUID, { error: 'must be a valid GUID' }),
  schooluserid: z.string({ error: 'is required' }).regex(GUID, { error: 'must be a valid GUID' }),
  schoolusername: alnum(2, 16),
  schoolname: text(2, 255).optional(),
  curriculums: text(1, 2000),
  standard: blankable(2, 255),
  ...nameFields,
  genderid: gender,
  ...wgFields,
  dateofbirth: date({ optional: true, min: 8, loose: true }),
  dateofjoin: date({ optional: false, min: 8, loose: true }),
  // What the column holds (the original's validator allowed 255 and the database refused the rest).
  schooltype: blankable(2, 250),
  city: text(2, 100),
  country: text(2, 100),
  state: text(1, 100),
  type: orBlank(z.enum(['offline', 'online'], { error: 'must be one of [offline, online]' })).optional(),
  isactive: z.preprocess(
    (v) => (v === '1' || v === '0' ? Number(v) : v),
    z.union([z.literal(1), z.literal(0)], { error: 'must be one of [1, 0]' }),
  ),
  schooluserpasswordhash: orBlank(alnum(1, 16)).optional(),
  is_teacher_acc: z
    .preprocess(
      (v) => (typeof v === 'number' ? String(v) : v),
      z.enum(['1', '0', ''], { error: 'must be one of [1, 0, ]' }),
    )
    .optional(),
});
export type EditRow = z.infer<typeof editRow>;

export const editBody = strictBody({
  students: z.array(editRow, { error: 'is required' })
    .min(1, { error: 'must contain at least 1 items' })
    .max(500, { error: 'must contain less than or equal to 500 items' }),
});
export type EditBody = z.infer<typeof editBody>;
