import crypto from 'node:crypto';
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import { z } from 'zod';
import { ARGON2ID_COST, argon2Concurrency, concurrencyLimit } from '@lms/shared';

const OPTIONS = { type: argon2.argon2id, ...ARGON2ID_COST } as const;

// At most two argon2 computations at once in this process (one on a single CPU), hashing and verifying alike:
// each holds its memory block while it runs.
const argon2Slot = concurrencyLimit(argon2Concurrency());

export function hashPassword(plain: string): Promise<string> {
  return argon2Slot(() => argon2.hash(plain, OPTIONS));
}

// Verified against when the account does not exist or its hash is unusable, so that an unknown
// account costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;
function dummy(): Promise<string> {
  dummyHash ??= hashPassword('not-a-password-anyone-has');
  return dummyHash;
}

const md5hex = (plain: string) => crypto.createHash('md5').update(plain, 'utf8').digest('hex');
const BCRYPT = /^\$2[aby]\$\d\d\$/;
const BARE_MD5 = /^[0-9a-f]{32}$/i;

/**
 * True when `plain` matches `hash`. Always runs one argon2 verification (argon2 compares in
 * constant time) when the account does not exist or its stored hash is unusable. Hashes carried
 * over from an existing deployment (bcrypt of the MD5 hex, or bare MD5) still verify once; the
 * caller then replaces them (`needsRehash`).
 */
export async function verifyPassword(hash: string | null | undefined, plain: string): Promise<boolean> {
  try {
    if (typeof hash === 'string' && hash.startsWith('$argon2'))
      return await argon2Slot(() => argon2.verify(hash, plain));
    if (typeof hash === 'string' && BCRYPT.test(hash)) return await bcrypt.compare(md5hex(plain), hash);
    if (typeof hash === 'string' && BARE_MD5.test(hash))
      return crypto.timingSafeEqual(Buffer.from(md5hex(plain)), Buffer.from(hash.toLowerCase()));
    const d = await dummy();
    await argon2Slot(() => argon2.verify(d, plain));
    return false;
  } catch {
    return false;
  }
}

/** A verified hash that is not argon2id with today's parameters is replaced at that sign-in. */
export function needsRehash(hash: string): boolean {
  return !hash.startsWith('$argon2id$') || argon2.needsRehash(hash, OPTIONS);
}

/**
 * How school users' (teachers' and learners') passwords are stored: `argon2id`, or `bcrypt-md5`, the
 * existing system's own form (bcrypt, cost 10, over the MD5 hex of the password). Central pushes these
 * hashes verbatim to classroom boxes in the roster, and a box still running the existing system can check
 * only the second form; so while any such box is in service, school users must be stored in it.
 */
export const SCHOOLUSER_PASSWORD_FORMATS = ['argon2id', 'bcrypt-md5'] as const;
export type SchoolUserPasswordFormat = (typeof SCHOOLUSER_PASSWORD_FORMATS)[number];

const BCRYPT_COST = 10;

/** A school user's password hash in the configured format. */
export function hashSchoolUserPassword(plain: string, format: SchoolUserPasswordFormat): Promise<string> {
  return format === 'bcrypt-md5' ? bcrypt.hash(md5hex(plain), BCRYPT_COST) : hashPassword(plain);
}

/**
 * A school user's verified hash that is not in the configured format is replaced at that sign-in; in the
 * `bcrypt-md5` format a bare MD5 row is wrapped too (as the existing system's own migration does), and an
 * argon2id row made before the setting changed goes back to a form the boxes can check.
 */
export function schoolUserNeedsRehash(hash: string, format: SchoolUserPasswordFormat): boolean {
  return format === 'bcrypt-md5' ? !BCRYPT.test(hash) : needsRehash(hash);
}

export const PASSWORD_POLICY_MESSAGE =
  'Invalid password, Required : Minimum length 8, Maximum length 50, ' +
  'at least 1 upper case letter, 1 lower case letter, 1 number and no spaces';

const FORBIDDEN = new Set(['Passw0rd', 'Password123']);

/** The staff password policy; the original enforces it at sign-in too. */
export function passwordMeetsPolicy(p: string): boolean {
  return (
    p.length >= 8 &&
    p.length <= 50 &&
    /[A-Z]/.test(p) &&
    /[a-z]/.test(p) &&
    /\d/.test(p) &&
    !/\s/.test(p) &&
    !FORBIDDEN.has(p)
  );
}

export const staffPassword = z
  .string({ error: 'is required' })
  .refine(passwordMeetsPolicy, { error: PASSWORD_POLICY_MESSAGE, abort: true });
