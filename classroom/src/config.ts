import path from 'node:path';
import { z } from 'zod';
import { repoRoot } from '@lms/db';
import {
  ConfigError, PLACEHOLDER_SECRET, checkOptionalToken, checkSecrets, commaList, deepFreeze, flag, nodeEnvSchema, nonNegativeInt, optionalString, parseEnv, port,
  positiveInt, readJsonFile, type Env,
} from '@lms/shared';

const schema = z.object({
  NODE_ENV: nodeEnvSchema,
  RPI_PORT: port(3000),
  SHUTDOWN_DRAIN_SECONDS: positiveInt(30),
  SHUTDOWN_DELAY_SECONDS: nonNegativeInt(0),
  READY_TIMEOUT_MS: positiveInt(2000),
  HOST: optionalString,
  DATABASE_URL: z.string().default('sqlite:data/classroom.sqlite'),
  JWT_SECRET: z.string().default(PLACEHOLDER_SECRET),
  SERVER_SYNC_KEY: z.string().default(PLACEHOLDER_SECRET),
  RPI_OFFLINE: flag,
  RPI_CONFIG: optionalString,
  TRUST_PROXY: flag,
  REDIS_URL: optionalString,
  REDIS_START_TIMEOUT_SECONDS: positiveInt(10),
  METRICS_TOKEN: optionalString,
  CORS_ORIGINS: commaList,
  LOG_LEVEL: z.string().default('info'),
  LOG_DIR: z.string().default('data/logs'),
  MEDIA_DIR: z.string().default('data/media'),
  ACCESS_EXPIRATION_MINUTES: positiveInt(1440),
  RATE_LIMIT_MAX: positiveInt(1200),
  LOGIN_RATE_LIMIT_MAX: positiveInt(30),
  MAX_UPLOAD_MB: positiveInt(200),
  MAX_JSON_KB: positiveInt(1024),
});

export const CLASSROOM_SECRETS = ['JWT_SECRET', 'SERVER_SYNC_KEY'] as const;

const rpiConfigSchema = z.object({ offline: z.boolean().optional() }).passthrough();

function readRpiConfig(path: string | undefined): z.infer<typeof rpiConfigSchema> {
  if (!path) return {};
  const parsed = rpiConfigSchema.safeParse(readJsonFile(path, 'RPI_CONFIG'));
  if (!parsed.success) throw new ConfigError(`RPI_CONFIG (${path}): "offline" must be true or false`);
  return parsed.data;
}

export function loadConfig(env: Env = process.env) {
  const e = parseEnv(schema, env);
  checkSecrets(e.NODE_ENV, env, CLASSROOM_SECRETS);
  checkOptionalToken(e.NODE_ENV, 'METRICS_TOKEN', e.METRICS_TOKEN);
  const file = readRpiConfig(e.RPI_CONFIG);
  return deepFreeze({
    nodeEnv: e.NODE_ENV,
    port: e.RPI_PORT,
    host: e.HOST,
    drainMs: e.SHUTDOWN_DRAIN_SECONDS * 1000,
    stopDelayMs: e.SHUTDOWN_DELAY_SECONDS * 1000,
    readyTimeoutMs: e.READY_TIMEOUT_MS,
    databaseUrl: e.DATABASE_URL,
    jwtSecret: e.JWT_SECRET,
    serverSyncKey: e.SERVER_SYNC_KEY,
    // Offline mode lets a staff token upload curriculum; the JSON configuration's offline:true is the same switch.
    offline: e.RPI_OFFLINE || file.offline === true,
    trustProxy: e.TRUST_PROXY,
    redisUrl: e.REDIS_URL,
    redisStartTimeoutMs: e.REDIS_START_TIMEOUT_SECONDS * 1000,
    // GET /metrics answers a scraper with this bearer token; unset: metrics are off (nothing is counted).
    metricsToken: e.METRICS_TOKEN,
    corsOrigins: e.CORS_ORIGINS,
    logLevel: e.LOG_LEVEL,
    logDir: e.LOG_DIR,
    // Lesson pictures, audio and video for the tablets, served at /media/<file>; `npm run sync-content` fills it.
    mediaDir: path.resolve(repoRoot, e.MEDIA_DIR),
    accessTokenMinutes: e.ACCESS_EXPIRATION_MINUTES,
    rateLimit: { perMinute: e.RATE_LIMIT_MAX, loginPer15Minutes: e.LOGIN_RATE_LIMIT_MAX },
    maxUploadBytes: e.MAX_UPLOAD_MB * 1024 * 1024,
    maxJsonBytes: e.MAX_JSON_KB * 1024,
  });
}

export type Config = ReturnType<typeof loadConfig>;

export function loadDatabaseConfig(env: Env = process.env) {
  const e = parseEnv(z.object({ NODE_ENV: nodeEnvSchema, DATABASE_URL: schema.shape.DATABASE_URL }), env);
  return { nodeEnv: e.NODE_ENV, databaseUrl: e.DATABASE_URL };
}

/** The lesson media folder alone (backup and restore run without the service's secrets). */
export function loadMediaDir(env: Env = process.env): string {
  return path.resolve(repoRoot, parseEnv(z.object({ MEDIA_DIR: schema.shape.MEDIA_DIR }), env).MEDIA_DIR);
}
