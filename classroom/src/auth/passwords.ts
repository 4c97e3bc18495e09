import crypto from 'node:crypto';
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import { ARGON2ID_COST, argon2Concurrency, concurrencyLimit } from '@lms/shared';

const OPTIONS = { type: argon2.argon2id, ...ARGON2ID_COST } as const;

// At most two argon2 computations at once in this process (one on a single CPU), hashing and verifying alike:
// each holds its memory block while it runs.
const argon2Slot = concurrencyLimit(argon2Concurrency());

/** Every hash we write is argon2id. */
export function hashPassword(plain: string): Promise<string> {
  return argon2Slot(() => argon2.hash(plain, OPTIONS));
}

let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= hashPassword(crypto.randomBytes(16).toString('hex')));

const md5hex = (s: string) => crypto.createHash('md5').update(s).digest('hex');

function equalConstantTime(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export interface PasswordCheck {
  ok: boolean;
  /** A legacy hash carried over from an existing deployment verified; the caller replaces it by argon2id. */
  legacy: boolean;
}

/**
 * Verifies a password against what is stored: argon2 for our own hashes; bcrypt over the MD5 hex, or the bare
 * MD5 hex, for accounts from the original deployment (decision #17).
 */
export async function verifyPassword(stored: string | null | undefined, plain: string): Promise<PasswordCheck> {
  if (!stored) {
    // Same work as a real check, so that response time does not tell which usernames exist.
    const d = await dummyHash();
    await argon2Slot(() => argon2.verify(d, plain)).catch(() => false);
    return { ok: false, legacy: false };
  }
  if (stored.startsWith('$argon2')) {
    try {
      return { ok: await argon2Slot(() => argon2.verify(stored, plain)), legacy: false };
    } catch {
      return { ok: false, legacy: false };
    }
  }
  if (stored.startsWith('$2')) {
    try {
      return { ok: await bcrypt.compare(md5hex(plain), stored), legacy: true };
    } catch {
      return { ok: false, legacy: false };
    }
  }
  if (/^[0-9a-f]{32}$/i.test(stored))
    return { ok: equalConstantTime(md5hex(plain), stored.toLowerCase()), legacy: true };
  return { ok: false, legacy: false };
}
