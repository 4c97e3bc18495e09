import crypto, { type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { deepFreeze, redisKeyPrefix, type Logger, type RedisClient } from '@lms/shared';
import type { Knex } from '@lms/db';
import type { Config } from '../config';

/** Token type codes: carried in the `claims` claim and in `tokens.tokentype`. */
export const TOKEN_TYPES = {
  ACCESS: 'wUKhn97t',
  REFRESH: 'U3cLtVxj',
  CHANGEPASSWORD: 'vW7Ea9Kf',
  VERIFYEMAIL: '2rwjr2UY',
  RPIACCESS: 'ckWtsMgO',
} as const;

export type TokenType = keyof typeof TOKEN_TYPES;

export interface TokenPayload {
  sub: string;
  jti: string;
  claims: string;
  iat: number;
  exp: number;
  [claim: string]: unknown;
}

// Only HS256 is ever accepted: no `none`, no public-key algorithm that a forged header could pick.
const ALGORITHMS: jwt.Algorithm[] = ['HS256'];

interface Keys {
  app: KeyObject;
  rpi: KeyObject;
}

// jsonwebtoken given a string secret tries to parse it as a public key on every verify (~0.5 ms);
// a KeyObject built once per configuration makes a verify about ten times cheaper.
const keyCache = new WeakMap<object, Keys>();
function keysOf(config: Config): Keys {
  let k = keyCache.get(config);
  if (!k) {
    k = {
      app: crypto.createSecretKey(Buffer.from(config.jwtSecret, 'utf8')),
      rpi: crypto.createSecretKey(Buffer.from(config.rpiSecret, 'utf8')),
    };
    keyCache.set(config, k);
  }
  return k;
}

function minutesOf(config: Config, type: TokenType): number {
  switch (type) {
    case 'ACCESS':
    case 'RPIACCESS':
      return config.tokenMinutes.access;
    case 'REFRESH':
      return config.tokenMinutes.refresh;
    case 'CHANGEPASSWORD':
      return config.tokenMinutes.changePassword;
    case 'VERIFYEMAIL':
      return config.tokenMinutes.verifyEmail;
  }
}

export interface Issued {
  token: string;
  jti: string;
}

/** Signs a token of `type` for subject `sub` and records its jti (the token is valid only while the row exists). */
export async function issueToken(
  db: Knex,
  config: Config,
  type: TokenType,
  sub: string,
  claims: Record<string, unknown>,
  sessionid: string | null = null,
): Promise<Issued> {
  const jti = crypto.randomUUID();
  const minutes = minutesOf(config, type);
  const key = type === 'RPIACCESS' ? keysOf(config).rpi : keysOf(config).app;
  const token = jwt.sign({ ...claims, claims: TOKEN_TYPES[type] }, key, {
    algorithm: 'HS256',
    expiresIn: minutes * 60,
    subject: sub,
    jwtid: jti,
  });
  const expires = new Date(Date.now() + minutes * 60_000).toISOString();
  await db('tokens').insert({
    token: jti,
    lmsuserid: sub,
    tokentype: TOKEN_TYPES[type],
    sessionid,
    expires_at: expires,
  });
  return { token, jti };
}

// Checking an HS256 signature and decoding the claims is the largest part of a guard's cost. A token that
// verified is remembered by its exact text (the signed bytes themselves, so the answer cannot differ) until
// it expires; revocation is not part of this answer and is checked on every request (checkRecorded).
const MAX_VERIFIED = 10_000;
interface Known { token: string; payload: TokenPayload }
// Keyed by the signature (the last part: short, so cheap to look up); an entry answers only for the
// exact same token text.
const verified = new WeakMap<Config, Map<TokenType, Map<string, Known>>>();

function verifiedOf(config: Config, type: TokenType): Map<string, Known> {
  let byType = verified.get(config);
  if (!byType) verified.set(config, (byType = new Map()));
  let m = byType.get(type);
  if (!m) byType.set(type, (m = new Map()));
  return m;
}

/** The signature of a compact token (three dot-separated parts), or undefined for anything else. */
function signatureOf(token: string): string | undefined {
  const first = token.indexOf('.');
  const second = first === -1 ? -1 : token.indexOf('.', first + 1);
  if (second === -1 || token.indexOf('.', second + 1) !== -1) return undefined;
  return token.slice(second + 1);
}

/** Signature, algorithm, expiry and type only (no database): the payload, or undefined. */
export function decodeVerified(config: Config, token: string, type: TokenType): TokenPayload | undefined {
  const signature = token ? signatureOf(token) : undefined;
  if (signature === undefined) return undefined;
  const memo = verifiedOf(config, type);
  const known = memo.get(signature);
  if (known && known.token === token) {
    if (known.payload.exp * 1000 > Date.now()) return known.payload;
    memo.delete(signature);
  }
  try {
    const signingKey = type === 'RPIACCESS' ? keysOf(config).rpi : keysOf(config).app;
    const p = jwt.verify(token, signingKey, { algorithms: ALGORITHMS }) as TokenPayload;
    if (
      typeof p !== 'object' ||
      p.claims !== TOKEN_TYPES[type] ||
      typeof p.sub !== 'string' ||
      typeof p.jti !== 'string'
    )
      return undefined;
    if (memo.size >= MAX_VERIFIED) memo.delete(memo.keys().next().value as string);
    memo.set(signature, { token, payload: deepFreeze(p) as TokenPayload });
    return p;
  } catch {
    return undefined;
  }
}

export interface StoredToken {
  payload: TokenPayload;
  sessionid: string | null;
}

// Every guarded request checks that its access token is still recorded. Remembering a positive
// answer for a few seconds saves that query on busy routes; every revocation below forgets the
// affected entries at once, so a logout, a password change or a disabled account takes effect
// immediately in this process. Other processes sharing the database hear of it through Redis when it
// is configured (shareRevocations), and otherwise see it within STILL_VALID_MS.
const STILL_VALID_MS = 5_000;
const MAX_REMEMBERED = 10_000;
interface Remembered { sub: string; type: string; sessionid: string | null; until: number }
const remembered = new Map<string, Remembered>();

/** What a revocation revokes: one sign-in, or a person's tokens (of some types, or all). */
export type Revocation =
  | { kind: 'session'; sub: string; sessionid: string | null; jti: string }
  | { kind: 'person'; sub: string; types?: TokenType[] };

function forget(r: Revocation): void {
  const match =
    r.kind === 'session'
      ? (m: Remembered, jti: string) =>
          jti === r.jti || (!!r.sessionid && m.sub === r.sub && m.sessionid === r.sessionid)
      : (m: Remembered) => m.sub === r.sub && (!r.types || r.types.includes(m.type as TokenType));
  for (const [jti, m] of remembered) if (match(m, jti)) remembered.delete(jti);
}

/** The Redis channel on which central processes tell each other of revocations (after REDIS_KEY_PREFIX). */
export const REVOCATION_CHANNEL = 'lms:central:revoked';
let announce: ((r: Revocation) => Promise<unknown>) | undefined;

function isRevocation(v: unknown): v is Revocation {
  const r = v as Partial<Record<string, unknown>> | null;
  if (!r || typeof r.sub !== 'string') return false;
  if (r.kind === 'session')
    return typeof r.jti === 'string' && (r.sessionid === null || typeof r.sessionid === 'string');
  return (
    r.kind === 'person' &&
    (r.types === undefined ||
      (Array.isArray(r.types) && r.types.every((t) => typeof t === 'string' && t in TOKEN_TYPES)))
  );
}

/**
 * With Redis, every revocation of this process is announced to the others, and theirs are applied
 * here as they arrive, so a logout reaches every instance at once instead of within STILL_VALID_MS.
 * An announcement that fails is logged; the others then see the revocation within STILL_VALID_MS.
 * Returns the function that stops listening.
 */
export async function shareRevocations(redis: RedisClient, logger: Logger): Promise<() => Promise<void>> {
  const channel = `${redisKeyPrefix(redis)}${REVOCATION_CHANNEL}`;
  const listener = redis.duplicate();
  listener.on('error', (err: unknown) => logger.error({ err }, 'revocation channel error'));
  await listener.connect();
  await listener.subscribe(channel, (message: string) => {
    let r: unknown;
    try {
      r = JSON.parse(message);
    } catch {
      r = undefined;
    }
    if (isRevocation(r)) forget(r);
    else logger.warn({ channel }, 'ignored a malformed revocation message');
  });
  const send = (r: Revocation) =>
    redis
      .publish(channel, JSON.stringify(r))
      .catch((err: unknown) => logger.error({ err }, 'could not announce a revocation'));
  announce = send;
  return async () => {
    if (announce === send) announce = undefined;
    await listener.quit();
  };
}

/**
 * Forgets here once the rows are gone, and tells the other processes. Inside a transaction the rows
 * are gone only when it commits (until then another request may still read them and remember the
 * token), so that waits for the commit; a rollback revokes nothing.
 */
async function revoked(db: Knex, r: Revocation): Promise<void> {
  const done = () => {
    forget(r);
    return announce?.(r);
  };
  const trx = db as unknown as Partial<Knex.Transaction>;
  if (trx.isTransaction && trx.executionPromise) {
    void trx.executionPromise.then(done, () => undefined);
    return;
  }
  await done();
}

/** A token of `type` that is correctly signed, unexpired, and still recorded (not revoked). */
export async function verifyStored(
  db: Knex,
  config: Config,
  token: string,
  type: TokenType,
): Promise<StoredToken | undefined> {
  const payload = decodeVerified(config, token, type);
  return payload ? checkRecorded(db, payload, type) : undefined;
}

/** The revocation check of an already verified payload (its jti row still exists). */
export async function checkRecorded(
  db: Knex,
  payload: TokenPayload,
  type: TokenType,
): Promise<StoredToken | undefined> {
  const now = Date.now();
  const known = remembered.get(payload.jti);
  if (known && known.until > now && known.sub === payload.sub && known.type === type)
    return { payload, sessionid: known.sessionid };
  const row = await db('tokens')
    .where({ token: payload.jti, tokentype: TOKEN_TYPES[type], lmsuserid: payload.sub })
    .first('sessionid');
  if (!row) return undefined;
  if (typeof payload.schooluserid === 'string') {
    // A school account disabled or deleted since the sign-in ends its tokens, within the same few seconds
    // as any other revocation. An account whose row is gone altogether is left to the route: the log
    // import answers it with the contract's own 400 (`Teacher does not exist!`).
    const account = await db('schoolusers').where({ schooluserid: payload.sub }).first('isdisabled', 'isdeleted');
    if (account && (account.isdisabled || account.isdeleted)) return undefined;
  }
  const sessionid = (row.sessionid as string | null) ?? null;
  if (type === 'ACCESS') {
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
    remembered.set(payload.jti, {
      sub: payload.sub,
      type,
      sessionid,
      until: now + Math.min(STILL_VALID_MS, payload.exp * 1000 - now),
    });
  }
  return { payload, sessionid };
}

/** Revokes one sign-in (its access and refresh tokens). */
export async function revokeSession(db: Knex, sub: string, sessionid: string | null, jti: string): Promise<void> {
  const r: Revocation = { kind: 'session', sub, sessionid, jti };
  forget(r);
  if (sessionid) await db('tokens').where({ lmsuserid: sub, sessionid }).del();
  else await db('tokens').where({ token: jti }).del();
  await revoked(db, r);
}

/** Revokes every token of a person of the given types (all types when none are given). */
export async function revokeAll(db: Knex, sub: string, types?: TokenType[]): Promise<void> {
  const r: Revocation = { kind: 'person', sub, types };
  forget(r);
  const q = db('tokens').where({ lmsuserid: sub });
  if (types) q.whereIn('tokentype', types.map((t) => TOKEN_TYPES[t]));
  await q.del();
  await revoked(db, r);
}

/** Expired rows can never validate again; dropping them keeps the lookups small. */
export async function pruneExpired(db: Knex): Promise<void> {
  await db('tokens').where('expires_at', '<', new Date().toISOString()).del();
}
