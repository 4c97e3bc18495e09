import path from 'node:path';
import { z } from 'zod';
import { repoRoot } from '@lms/db';
import {
  backupKeyOf,
  BACKUP_KEY_RULE,
  checkDistinctSecrets,
  ConfigError,
  PLACEHOLDER_SECRET,
  databaseSettings,
  databaseSettingsSchema,
  proxyHops,
  checkOptionalToken,
  checkSecrets,
  commaList,
  deepFreeze,
  flag,
  flagDefaultOn,
  nodeEnvSchema,
  nonNegativeInt,
  optionalString,
  parseEnv,
  port,
  positiveInt,
  readJsonFile,
  type Env,
} from '@lms/shared';

const schema = z.object({
  NODE_ENV: nodeEnvSchema,
  RPI_PORT: port(3000),
  SHUTDOWN_DRAIN_SECONDS: positiveInt(30),
  SHUTDOWN_DELAY_SECONDS: nonNegativeInt(0),
  READY_TIMEOUT_MS: positiveInt(2000),
  HOST: optionalString,
  DATA_DIR: z.string().default('data'),
  DATABASE_URL: optionalString,
  JWT_SECRET: z.string().default(PLACEHOLDER_SECRET),
  SERVER_SYNC_KEY: z.string().default(PLACEHOLDER_SECRET),
  RPI_OFFLINE: flag,
  RPI_CONFIG: optionalString,
  TRUST_PROXY: proxyHops,
  REDIS_KEY_PREFIX: z.string().trim().max(100).default(''),
  ...databaseSettingsSchema,
  REDIS_URL: optionalString,
  REDIS_START_TIMEOUT_SECONDS: positiveInt(10),
  METRICS_TOKEN: optionalString,
  CORS_ORIGINS: commaList,
  LOG_LEVEL: z.string().default('info'),
  LOG_DIR: optionalString,
  MEDIA_DIR: optionalString,
  LOG_REQUESTS: flag,
  LOG_FILE_MAX_MB: positiveInt(20),
  LOG_EXPORT_MAX_MB: positiveInt(50),
  ACCESS_EXPIRATION_MINUTES: positiveInt(1440),
  RATE_LIMIT_MAX: positiveInt(1200),
  LOGIN_RATE_LIMIT_MAX: positiveInt(30),
  // Failed sign-ins per address in the window before its wrong guesses are refused; unset: 50 times the
  // per-account limit.
  LOGIN_ADDRESS_RATE_LIMIT_MAX: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().positive().optional(),
  ),
  MAX_UPLOAD_MB: positiveInt(200),
  MAX_JSON_KB: positiveInt(1024),
  FLEET_REQUEST_TIMEOUT_SECONDS: positiveInt(60),
  FLEET_SYNC: flagDefaultOn,
  FLEET_SYNC_INTERVAL_SECONDS: positiveInt(300),
  FLEET_PIECE_ROWS: z.coerce.number().int().min(1).max(5000).default(500),
  FLEET_MAX_BACKOFF_SECONDS: positiveInt(3600),
  FLEET_REMOTE_SETTINGS: flagDefaultOn,
  FLEET_MIN_BACKOFF_SECONDS: positiveInt(30),
});

export const CLASSROOM_SECRETS = ['JWT_SECRET', 'SERVER_SYNC_KEY'] as const;
/** Every secret the classroom server reads, each its own value outside development and test. */
const CLASSROOM_DISTINCT = [...CLASSROOM_SECRETS, 'BACKUP_KEY', 'METRICS_TOKEN'];

const rpiConfigSchema = z.object({ offline: z.boolean().optional() }).passthrough();

function readRpiConfig(path: string | undefined): z.infer<typeof rpiConfigSchema> {
  if (!path) return {};
  const parsed = rpiConfigSchema.safeParse(readJsonFile(path, 'RPI_CONFIG'));
  if (!parsed.success) throw new ConfigError(`RPI_CONFIG (${path}): "offline" must be true or false`);
  return parsed.data;
}

/**
 * Where the box keeps what it writes: DATA_DIR (relative: against the repository root, whose `data/` is
 * the development default), and under it the database, the logs and the media unless DATABASE_URL,
 * LOG_DIR or MEDIA_DIR name their own place (relative ones again against the repository root).
 */
export function dataPaths(e: { DATA_DIR: string; DATABASE_URL?: string; LOG_DIR?: string; MEDIA_DIR?: string }) {
  const dataDir = path.resolve(repoRoot, e.DATA_DIR);
  return {
    dataDir,
    databaseUrl: e.DATABASE_URL ?? `sqlite:${path.join(dataDir, 'classroom.sqlite')}`,
    logDir: e.LOG_DIR ? path.resolve(repoRoot, e.LOG_DIR) : path.join(dataDir, 'logs'),
    mediaDir: e.MEDIA_DIR ? path.resolve(repoRoot, e.MEDIA_DIR) : path.join(dataDir, 'media'),
  };
}

export function loadConfig(env: Env = process.env) {
  const e = parseEnv(schema, env);
  const paths = dataPaths(e);
  const weakSecrets = checkSecrets(e.NODE_ENV, env, [...CLASSROOM_SECRETS, BACKUP_KEY_RULE]);
  checkOptionalToken(e.NODE_ENV, 'METRICS_TOKEN', e.METRICS_TOKEN);
  checkDistinctSecrets(e.NODE_ENV, env, CLASSROOM_DISTINCT);
  const file = readRpiConfig(e.RPI_CONFIG);
  return deepFreeze({
    nodeEnv: e.NODE_ENV,
    // Secrets below the entropy rule, kept on purpose with ALLOW_WEAK_<NAME>=1; logged at every start.
    weakSecrets,
    port: e.RPI_PORT,
    host: e.HOST,
    drainMs: e.SHUTDOWN_DRAIN_SECONDS * 1000,
    stopDelayMs: e.SHUTDOWN_DELAY_SECONDS * 1000,
    readyTimeoutMs: e.READY_TIMEOUT_MS,
    dataDir: paths.dataDir,
    databaseUrl: paths.databaseUrl,
    database: databaseSettings(e),
    jwtSecret: e.JWT_SECRET,
    serverSyncKey: e.SERVER_SYNC_KEY,
    // Offline mode lets a staff token upload curriculum; the JSON configuration's offline:true is the same switch.
    offline: e.RPI_OFFLINE || file.offline === true,
    trustProxy: e.TRUST_PROXY,
    redisUrl: e.REDIS_URL,
    redisStartTimeoutMs: e.REDIS_START_TIMEOUT_SECONDS * 1000,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    // GET /metrics answers a scraper with this bearer token; unset: metrics are off (nothing is counted).
    metricsToken: e.METRICS_TOKEN,
    corsOrigins: e.CORS_ORIGINS,
    logLevel: e.LOG_LEVEL,
    logDir: paths.logDir,
    // Per-request lines ('request completed') in the daily files too; off, they go to standard output only.
    logRequests: e.LOG_REQUESTS,
    logFileMaxBytes: e.LOG_FILE_MAX_MB * 1024 * 1024,
    logExportMaxBytes: e.LOG_EXPORT_MAX_MB * 1024 * 1024,
    // Lesson pictures, audio and video for the tablets, served at /media/<file>; `npm run sync-content` fills it.
    mediaDir: paths.mediaDir,
    accessTokenMinutes: e.ACCESS_EXPIRATION_MINUTES,
    rateLimit: {
      perMinute: e.RATE_LIMIT_MAX,
      loginPer15Minutes: e.LOGIN_RATE_LIMIT_MAX,
      loginAddressPer15Minutes: e.LOGIN_ADDRESS_RATE_LIMIT_MAX ?? 50 * e.LOGIN_RATE_LIMIT_MAX,
    },
    maxUploadBytes: e.MAX_UPLOAD_MB * 1024 * 1024,
    maxJsonBytes: e.MAX_JSON_KB * 1024,
    fleet: { ...fleetSettings(e), agent: agentSettings(e) },
  });
}

/** How the box speaks with central once enrolled (docs/fleet-protocol.md). */
function fleetSettings(e: { FLEET_REQUEST_TIMEOUT_SECONDS: number }) {
  return { requestTimeoutMs: e.FLEET_REQUEST_TIMEOUT_SECONDS * 1000 };
}

/** The sync agent's settings (the server runs it while the box is enrolled and FLEET_SYNC is on). */
function agentSettings(e: {
  FLEET_SYNC: boolean; FLEET_SYNC_INTERVAL_SECONDS: number; FLEET_PIECE_ROWS: number;
  FLEET_MIN_BACKOFF_SECONDS: number; FLEET_MAX_BACKOFF_SECONDS: number; FLEET_REMOTE_SETTINGS: boolean;
}) {
  return {
    enabled: e.FLEET_SYNC,
    remoteSettings: e.FLEET_REMOTE_SETTINGS,
    intervalMs: e.FLEET_SYNC_INTERVAL_SECONDS * 1000,
    pieceRows: e.FLEET_PIECE_ROWS,
    // The first retry never waits past the ceiling, whatever the two settings say.
    minBackoffMs: Math.min(e.FLEET_MIN_BACKOFF_SECONDS, e.FLEET_MAX_BACKOFF_SECONDS) * 1000,
    maxBackoffMs: e.FLEET_MAX_BACKOFF_SECONDS * 1000,
  };
}

/** What the fleet commands (`enroll`, `fleet-status`) need: the database, the data folder, the fleet settings. */
export function loadFleetCliConfig(env: Env = process.env) {
  const e = parseEnv(
    z.object({
      NODE_ENV: nodeEnvSchema,
      DATA_DIR: schema.shape.DATA_DIR,
      DATABASE_URL: optionalString,
      FLEET_REQUEST_TIMEOUT_SECONDS: schema.shape.FLEET_REQUEST_TIMEOUT_SECONDS,
    }),
    env,
  );
  const paths = dataPaths(e);
  return { nodeEnv: e.NODE_ENV, databaseUrl: paths.databaseUrl, dataDir: paths.dataDir, fleet: fleetSettings(e) };
}

export type Config = ReturnType<typeof loadConfig>;

/** The key backups are signed with (BACKUP_KEY, else JWT_SECRET). */
export const loadBackupKey = (env: Env = process.env): string =>
  backupKeyOf(env, CLASSROOM_DISTINCT.filter((n) => n !== 'BACKUP_KEY'));

export function loadDatabaseConfig(env: Env = process.env) {
  const e = parseEnv(
    z.object({
      NODE_ENV: nodeEnvSchema,
      DATA_DIR: schema.shape.DATA_DIR,
      DATABASE_URL: optionalString,
      MEDIA_DIR: optionalString,
    }),
    env,
  );
  const paths = dataPaths(e);
  return { nodeEnv: e.NODE_ENV, databaseUrl: paths.databaseUrl, mediaDir: paths.mediaDir };
}
