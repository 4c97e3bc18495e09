import crypto from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';

/** The value every secret has until an operator sets it; accepted only in development and test. */
export const PLACEHOLDER_SECRET = 'change-me-placeholder';

const PLACEHOLDER_WORDS = /^(change-?me.*|changeit|placeholder|secret|password|todo|xxx+|your[-_].*)$/i;

export function isPlaceholder(value: string | undefined): boolean {
  return (
    value === undefined || value.trim() === '' || value === PLACEHOLDER_SECRET || PLACEHOLDER_WORDS.test(value.trim())
  );
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Unset means production: a service started without NODE_ENV must not run on placeholder secrets or
 * serve its API documentation. `make run` and the tests say development and test explicitly.
 */
export const nodeEnvSchema = z.enum(['development', 'test', 'production']).default('production');

/** Only these two admit placeholder secrets, the API documentation and the development shortcuts. */
export const isDevOrTest = (nodeEnv: string): boolean => nodeEnv === 'development' || nodeEnv === 'test';
export type NodeEnv = z.infer<typeof nodeEnvSchema>;

export const flag = z
  .string()
  .optional()
  .transform((v) => v !== undefined && ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase()));

/**
 * TRUST_PROXY: how many proxies in front of the service append to X-Forwarded-For. The client's address is
 * the one that many hops from the right; unset, empty, `0` or `false`: none (the socket's address). `true`
 * means one, as it always has (never "trust every hop", which would let a client choose its own address).
 */
export const proxyHops = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const t = (v ?? '').trim().toLowerCase();
    if (t === '' || ['false', 'no', 'off'].includes(t)) return 0;
    if (['true', 'yes', 'on'].includes(t)) return 1;
    if (/^\d{1,2}$/.test(t)) return Number(t);
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'TRUST_PROXY must be a number of proxy hops (0-99), true or false',
    });
    return z.NEVER;
  });

/** A flag that is on unless it is set to a false value. */
export const flagDefaultOn = z
  .string()
  .optional()
  .transform(
    (v) => v === undefined || v.trim() === '' || !['0', 'false', 'no', 'off'].includes(v.trim().toLowerCase()),
  );


export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
export const nonNegativeInt = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
export const optionalString = z.string().trim().optional().transform((v) => (v ? v : undefined));
export const commaList = z
  .string()
  .optional()
  .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []));

export type Env = Record<string, string | undefined>;

/** The entropy a production secret must carry: an HS256 key or a shared key shorter than this is guessed offline. */
export const MIN_SECRET_BYTES = 32;

/** The least entropy estimate (`entropyEstimate`) a secret may show; random 32-byte values show 180 and more. */
export const MIN_SECRET_ESTIMATE_BITS = 160;

/**
 * The shortest period with which `value` mostly repeats itself (half or more of its characters equal the one
 * that many places back, which random characters almost never do), or undefined when it does not.
 */
function periodOf(value: string): number | undefined {
  for (let p = 1; p <= value.length / 2; p += 1) {
    let same = 0;
    for (let i = p; i < value.length; i += 1) if (value[i] === value[i - p]) same += 1;
    if (same * 2 >= value.length - p) return p;
  }
  return undefined;
}

/**
 * How many characters follow from the ones before: with some lag L (1 to 4), the step from the character L
 * places back is the same as the previous character's (`abcd`, `1357`, `aAbBcC`). Random characters
 * rarely do (at most a tenth of them); counting sequences stops them passing for random bytes.
 */
function followers(value: string): number {
  let most = 0;
  for (let lag = 1; lag <= 4; lag += 1) {
    let n = 0;
    for (let i = 2 * lag; i < value.length; i += 1) {
      const step = value.charCodeAt(i) - value.charCodeAt(i - lag);
      if (step === value.charCodeAt(i - 1) - value.charCodeAt(i - 1 - lag)) n += 1;
    }
    most = Math.max(most, n);
  }
  return most;
}

/** An estimate of a value's entropy in bits: its length times the Shannon entropy of its character counts. */
export function entropyEstimate(value: string): number {
  const counts = new Map<string, number>();
  for (const c of value) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bitsPerChar = 0;
  for (const k of counts.values()) bitsPerChar -= (k / value.length) * Math.log2(k / value.length);
  return bitsPerChar * value.length;
}

/**
 * Why `value` cannot hold 32 random bytes, or undefined when it can. The rule: a value of hex digits only
 * needs 64 of them (4 bits each); any other value needs at least 43 characters (base64 of 32 bytes, 6 bits
 * each). A value built of few different characters (fewer than 10 hex digits, or 16 characters otherwise —
 * random values of those lengths hold about 16 and 30), a pattern repeated, a sequence (`0123…`, `abcd…`)
 * or a value whose entropy estimate is below `MIN_SECRET_ESTIMATE_BITS` is not random bytes and is refused too.
 */
export function secretWeakness(value: string, minBytes: number = MIN_SECRET_BYTES): string | undefined {
  const distinct = new Set(value).size;
  if (/^[0-9a-f]+$/i.test(value)) {
    if (value.length < 2 * minBytes) return `${value.length} hex digits, fewer than ${2 * minBytes}`;
    if (distinct < 10) return `only ${distinct} different hex digits`;
  } else {
    const chars = Math.ceil((minBytes * 8) / 6);
    if (value.length < chars) return `${value.length} characters, fewer than ${chars}`;
    if (distinct < 16) return `only ${distinct} different characters`;
  }
  const period = periodOf(value);
  if (period !== undefined) return `a pattern of ${period} characters repeated`;
  const follow = followers(value);
  if (follow * 3 > value.length)
    return `a sequence (${follow} of ${value.length} characters follow from the ones before)`;
  const bits = Math.floor(entropyEstimate(value));
  const least = Math.floor((MIN_SECRET_ESTIMATE_BITS * minBytes) / MIN_SECRET_BYTES);
  if (bits < least) return `about ${bits} bits of entropy by estimate, fewer than ${least}`;
  return undefined;
}

/** How the random bytes a secret must hold are written out, for messages. */
const randomBytesText = (bytes: number): string =>
  `${bytes} random bytes (${2 * bytes} hex digits or ${Math.ceil((bytes * 8) / 6)} base64 characters`;

/**
 * The least a secret issued by another system (S3_SECRET_KEY, issued by the object store) must hold: 20 bytes.
 * Stores issue keys of their own length (AWS and MinIO 40 characters, about 30 bytes), which the operator
 * does not choose; shorter than 20 random bytes is an operator's password, not an issued key.
 */
export const MIN_ISSUED_SECRET_BYTES = 20;

/**
 * A secret beyond the service's required ones: `optional` ones are checked only when set (BACKUP_KEY,
 * S3_SECRET_KEY); `minBytes` (default MIN_SECRET_BYTES) is the entropy it must hold.
 */
export interface SecretRule {
  name: string;
  optional?: boolean;
  minBytes?: number;
}

const ruleOf = (r: string | SecretRule): SecretRule => (typeof r === 'string' ? { name: r } : r);
const setValue = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v ? v : undefined;
};

/** The start-up warning for secrets accepted below the entropy rule: an operator reads it in every start's log. */
export function warnWeakSecrets(logger: { warn(obj: object, msg: string): void }, names: readonly string[]): void {
  if (!names.length) return;
  logger.warn(
    { secrets: names },
    `accepting ${names.join(', ')} below ${MIN_SECRET_BYTES} bytes of entropy ` +
      `(${names.map((n) => `${allowWeakSwitch(n)}=1`).join(', ')}); replace ${names.length > 1 ? 'them' : 'it'} with ` +
      `a random value as soon as every machine sharing ${names.length > 1 ? 'them' : 'it'} can take the new one`,
  );
}

/** The switch that accepts a weak value of `name` on purpose. */
export const allowWeakSwitch = (name: string): string => `ALLOW_WEAK_${name}`;

/**
 * Outside development and test a secret must be set to a real value holding `MIN_SECRET_BYTES` of entropy
 * (`secretWeakness`): name the first that is not. An existing shorter value (a key shared with machines the
 * operator cannot change at once) is accepted only with `ALLOW_WEAK_<NAME>=1`; the names so accepted are
 * returned, for the service to log at start. A placeholder is refused whatever the switch.
 */
export function checkSecrets(nodeEnv: NodeEnv, env: Env, secrets: readonly (string | SecretRule)[]): string[] {
  if (isDevOrTest(nodeEnv)) return [];
  const acceptedWeak: string[] = [];
  const names = secrets.map((r) => ruleOf(r).name);
  for (const { name, optional, minBytes = MIN_SECRET_BYTES } of secrets.map(ruleOf)) {
    const value = env[name];
    if (optional && setValue(env, name) === undefined) continue;
    if (value === undefined || isPlaceholder(value)) {
      throw new ConfigError(
        `${name} must be set to a real secret when NODE_ENV=${nodeEnv} (it is missing or still a placeholder)`,
      );
    }
    const weakness = secretWeakness(value, minBytes);
    if (!weakness) continue;
    if (flag.parse(env[allowWeakSwitch(name)])) {
      acceptedWeak.push(name);
      continue;
    }
    throw new ConfigError(
      `${name} is too weak for NODE_ENV=${nodeEnv}: ${weakness}; it must hold ${randomBytesText(minBytes)}, ` +
        'e.g. `openssl rand -base64 32`). ' +
        `To keep an existing shorter value on purpose, set ${allowWeakSwitch(name)}=1`,
    );
  }
  checkDistinctSecrets(nodeEnv, env, names);
  return acceptedWeak;
}

/**
 * One value in two roles makes the weaker role's holders masters of the other (a box's sync key signing staff
 * tokens, a metrics scraper's token signing them): outside development and test each secret a service reads
 * is its own. Unset ones are left out; the message names the two variables, never the value.
 */
export function checkDistinctSecrets(nodeEnv: NodeEnv, env: Env, names: readonly string[]): void {
  if (isDevOrTest(nodeEnv)) return;
  for (let i = 0; i < names.length; i += 1) {
    const value = setValue(env, names[i]);
    if (value === undefined) continue;
    const same = names.slice(i + 1).find((other) => setValue(env, other) === value);
    if (same) {
      throw new ConfigError(
        `${names[i]} and ${same} are the same value: each secret must be a random value of its own when ` +
          `NODE_ENV=${nodeEnv}`,
      );
    }
  }
}

/**
 * An optional bearer token (METRICS_TOKEN): unset is allowed (the feature is off); set outside development
 * and test, it must hold `MIN_SECRET_BYTES` of entropy like every other secret (`secretWeakness`). A new
 * token has no older machines to stay compatible with, so there is no switch to accept a weaker one.
 */
export function checkOptionalToken(nodeEnv: NodeEnv, name: string, value: string | undefined): void {
  if (value === undefined || isDevOrTest(nodeEnv)) return;
  const weakness = isPlaceholder(value) ? 'a placeholder' : secretWeakness(value);
  if (weakness) {
    throw new ConfigError(
      `${name} is too weak for NODE_ENV=${nodeEnv}: ${weakness}; it must hold ${randomBytesText(MIN_SECRET_BYTES)}, ` +
        'e.g. `openssl rand -base64 32`), or be unset',
    );
  }
}

export function parseEnv<T extends z.ZodType>(schema: T, env: Env): z.infer<T> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(`Invalid configuration: ${issue.path.join('.')}: ${issue.message}`);
  }
  return result.data;
}

export function readJsonFile(path: string, what: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${what} (${path}) cannot be read as JSON: ${(err as Error).message}`);
  }
}

export function deepFreeze<T>(o: T): Readonly<T> {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** Compares two secrets in constant time (for their length); false when either is missing. */
export function secretEquals(given: string | undefined, expected: string | undefined): boolean {
  if (!given || !expected) return false;
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

/** The PostgreSQL settings both services take (ignored on SQLite). */
export const databaseSettingsSchema = {
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  DATABASE_STATEMENT_TIMEOUT_SECONDS: z.coerce.number().int().min(0).default(0),
  DATABASE_SESSION_SETTINGS: flagDefaultOn,
};

export function databaseSettings(e: {
  DATABASE_POOL_MAX: number;
  DATABASE_STATEMENT_TIMEOUT_SECONDS: number;
  DATABASE_SESSION_SETTINGS: boolean;
}) {
  return {
    poolMax: e.DATABASE_POOL_MAX,
    statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_SECONDS * 1000,
    sessionSettings: e.DATABASE_SESSION_SETTINGS,
  };
}

/** BACKUP_KEY as a secret a service's configuration checks when it is set (unset: JWT_SECRET signs). */
export const BACKUP_KEY_RULE: SecretRule = { name: 'BACKUP_KEY', optional: true };

/** The key a development or test backup is signed with when neither setting is given. */
export const DEVELOPMENT_BACKUP_KEY = 'development-and-test-backup-key';

/**
 * The key backups are signed with and checked against: BACKUP_KEY, else the service's JWT_SECRET (a secret the
 * operator already holds, kept outside the backup). Outside development/test a missing or placeholder key stops
 * the command, naming both settings.
 */
export function backupKeyOf(env: Env, others: readonly string[] = []): string {
  const nodeEnv = nodeEnvSchema.parse(env.NODE_ENV);
  if (!isPlaceholder(env.BACKUP_KEY)) {
    // A key of its own follows the secrets' rules (ALLOW_WEAK_BACKUP_KEY=1: a restore of a backup signed with
    // an older, shorter key) and is none of the service's other secrets.
    checkSecrets(nodeEnv, env, [BACKUP_KEY_RULE]);
    checkDistinctSecrets(nodeEnv, env, ['BACKUP_KEY', ...others]);
    return env.BACKUP_KEY as string;
  }
  if (!isPlaceholder(env.JWT_SECRET)) return env.JWT_SECRET as string;
  if (isDevOrTest(nodeEnv)) return DEVELOPMENT_BACKUP_KEY;
  throw new ConfigError(
    'BACKUP_KEY (or JWT_SECRET) must be set: backups are signed with it and a restore checks the signature',
  );
}
