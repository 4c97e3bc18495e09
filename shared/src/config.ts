import crypto from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';

/** The value every secret has until an operator sets it; accepted only in development and test. */
export const PLACEHOLDER_SECRET = 'change-me-placeholder';

const PLACEHOLDER_WORDS = /^(change-?me.*|changeit|placeholder|secret|password|todo|xxx+|your[-_].*)$/i;

export function isPlaceholder(value: string | undefined): boolean {
  return value === undefined || value.trim() === '' || value === PLACEHOLDER_SECRET || PLACEHOLDER_WORDS.test(value.trim());
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

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
export const nonNegativeInt = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
export const optionalString = z.string().trim().optional().transform((v) => (v ? v : undefined));
export const commaList = z
  .string()
  .optional()
  .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []));

export type Env = Record<string, string | undefined>;

/** Outside development and test a secret must be set to a real value: name the first that is not. */
export function checkSecrets(nodeEnv: NodeEnv, env: Env, names: readonly string[]): void {
  if (isDevOrTest(nodeEnv)) return;
  for (const name of names) {
    if (isPlaceholder(env[name])) {
      throw new ConfigError(`${name} must be set to a real secret when NODE_ENV=${nodeEnv} (it is missing or still a placeholder)`);
    }
  }
}

/** Shortest METRICS_TOKEN accepted outside development and test (`openssl rand -hex 32` gives 64). */
export const MIN_TOKEN_LENGTH = 32;

/**
 * An optional bearer token (METRICS_TOKEN): unset is allowed (the feature is off); set outside
 * development and test, it must be a real secret of at least MIN_TOKEN_LENGTH characters.
 */
export function checkOptionalToken(nodeEnv: NodeEnv, name: string, value: string | undefined): void {
  if (value === undefined || isDevOrTest(nodeEnv)) return;
  if (isPlaceholder(value) || value.trim().length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(`${name} must be a real secret of at least ${MIN_TOKEN_LENGTH} characters when NODE_ENV=${nodeEnv} (for example the output of \`openssl rand -hex 32\`), or unset`);
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
