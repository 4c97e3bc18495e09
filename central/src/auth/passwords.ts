import argon2 from 'argon2';
import { z } from 'zod';

// OWASP Password Storage Cheat Sheet: argon2id, 19 MiB, 2 iterations, 1 lane.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(plain: string): Promise<string> {
  return argon2.hash(plain, OPTIONS);
}

// Verified against when the account does not exist or its hash is unusable, so that an unknown
// account costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;
function dummy(): Promise<string> {
  dummyHash ??= argon2.hash('not-a-password-anyone-has', OPTIONS);
  return dummyHash;
}

/**
 * True when `plain` matches `hash`. Always runs one argon2 verification (argon2 compares in
 * constant time), whether or not the account exists or its stored hash is usable.
 */
export async function verifyPassword(hash: string | null | undefined, plain: string): Promise<boolean> {
  const usable = typeof hash === 'string' && hash.startsWith('$argon2');
  try {
    const ok = await argon2.verify(usable ? hash : await dummy(), plain);
    return usable && ok;
  } catch {
    return false;
  }
}

export const PASSWORD_POLICY_MESSAGE =
  'Invalid password, Required : Minimum length 8, Maximum length 50, at least 1 upper case letter, 1 lower case letter, 1 number and no spaces';

const FORBIDDEN = new Set(['Passw0rd', 'Password123']);

/** The staff password policy; the original enforces it at sign-in too. */
export function passwordMeetsPolicy(p: string): boolean {
  return p.length >= 8 && p.length <= 50 && /[A-Z]/.test(p) && /[a-z]/.test(p) && /\d/.test(p) && !/\s/.test(p) && !FORBIDDEN.has(p);
}

export const staffPassword = z
  .string({ error: 'is required' })
  .refine(passwordMeetsPolicy, { error: PASSWORD_POLICY_MESSAGE, abort: true });
