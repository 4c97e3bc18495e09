import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Knex } from '@lms/db';

/** Token-type marker of a classroom ACCESS token, carried in the `claims` claim and in tokens.tokentype. */
export const ACCESS_TYPE = 'wUKhn97t';

export interface SignOptions {
  secret: string;
  minutes: number;
}

// The HMAC key object of a secret, made once: jsonwebtoken makes one from a string on every call.
const keys = new Map<string, crypto.KeyObject>();
function keyOf(secret: string): crypto.KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 4) keys.clear();
    key = crypto.createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

/**
 * Signs an access token for a school user and records its jti and expiry, so that logout or disabling
 * the user revokes it; the rows of tokens that have expired are dropped first.
 */
export async function issueAccessToken(
  db: Knex,
  opts: SignOptions,
  schooluserid: string,
  payload: Record<string, unknown>,
): Promise<{ token: string; jti: string }> {
  const jti = crypto.randomUUID();
  const token = jwt.sign({ ...payload, claims: ACCESS_TYPE, schooluserid }, keyOf(opts.secret), {
    algorithm: 'HS256',
    expiresIn: opts.minutes * 60,
    subject: schooluserid,
    jwtid: jti,
  });
  await pruneExpired(db);
  const expires = new Date(Date.now() + opts.minutes * 60_000).toISOString();
  await db('tokens').insert({ token: jti, lmsuserid: schooluserid, tokentype: ACCESS_TYPE, expires_at: expires });
  return { token, jti };
}

/** Drops the rows of tokens past their expiry (a row without one is kept). */
export async function pruneExpired(db: Knex): Promise<number> {
  return db('tokens').where('expires_at', '<', new Date().toISOString()).delete();
}

export interface VerifiedToken {
  jti: string;
  schooluserid: string;
  claims: Record<string, unknown>;
}

/** Signature, expiry and type only; whether the jti is still stored is the caller's second check. */
export function verifyAccessToken(token: string, secret: string): VerifiedToken | undefined {
  try {
    // The algorithm is pinned so that a token signed with "none" or an asymmetric key is never accepted.
    const payload = jwt.verify(token, keyOf(secret), { algorithms: ['HS256'] });
    if (typeof payload !== 'object' || payload === null) return undefined;
    const p = payload as Record<string, unknown>;
    if (p.claims !== ACCESS_TYPE || typeof p.jti !== 'string' || typeof p.sub !== 'string') return undefined;
    return { jti: p.jti, schooluserid: p.sub, claims: p };
  } catch {
    return undefined;
  }
}

/** Revokes every stored access token of a user (logout, disabling, deletion). */
export async function revokeTokensOf(db: Knex, schooluserid: string): Promise<number> {
  return db('tokens').where({ lmsuserid: schooluserid, tokentype: ACCESS_TYPE }).delete();
}

export async function revokeToken(db: Knex, jti: string): Promise<number> {
  return db('tokens').where({ token: jti, tokentype: ACCESS_TYPE }).delete();
}
