import { z } from 'zod';
import {
  backupKeyOf,
  BACKUP_KEY_RULE,
  checkDistinctSecrets,
  ConfigError,
  MIN_ISSUED_SECRET_BYTES,
  PLACEHOLDER_SECRET,
  checkOptionalToken,
  checkSecrets,
  databaseSettings,
  databaseSettingsSchema,
  proxyHops,
  isDevOrTest,
  commaList,
  deepFreeze,
  flag,
  nodeEnvSchema,
  nonNegativeInt,
  optionalString,
  parseEnv,
  port,
  positiveInt,
  type Env,
} from '@lms/shared';

const schema = z.object({
  NODE_ENV: nodeEnvSchema,
  PORT: port(3000),
  SHUTDOWN_DRAIN_SECONDS: positiveInt(30),
  SHUTDOWN_DELAY_SECONDS: nonNegativeInt(0),
  READY_TIMEOUT_MS: positiveInt(2000),
  HOST: optionalString,
  DATABASE_URL: z.string().default('sqlite:data/central.sqlite'),
  DATABASE_REPLICA_URL: optionalString,
  REPLICA_MAX_LAG_SECONDS: positiveInt(30),
  JWT_SECRET: z.string().default(PLACEHOLDER_SECRET),
  APPLICATION_API_KEY: z.string().default(PLACEHOLDER_SECRET),
  SERVER_SYNC_KEY: z.string().default(PLACEHOLDER_SECRET),
  RPI_SECRET: z.string().default(PLACEHOLDER_SECRET),
  RPI_CLOUD: z.string().url().default('http://127.0.0.1:3001'),
  SUPERADMIN_USERNAME: optionalString,
  LOG_IMPORT_ENABLED: flag,
  TRUST_PROXY: proxyHops,
  REDIS_KEY_PREFIX: z.string().trim().max(100).default(''),
  ...databaseSettingsSchema,
  SCHOOLUSER_PASSWORD_FORMAT: z.enum(['argon2id', 'bcrypt-md5']).default('argon2id'),
  S3_ENDPOINT: optionalString,
  S3_PUBLIC_ENDPOINT: optionalString,
  S3_ACCESS_KEY: optionalString,
  S3_SECRET_KEY: optionalString,
  S3_BUCKET: z.string().default('lms'),
  S3_REGION: z.string().default('us-east-1'),
  OBJECT_DIR: z.string().default('data/objects'),
  REDIS_URL: optionalString,
  REDIS_START_TIMEOUT_SECONDS: positiveInt(10),
  METRICS_TOKEN: optionalString,
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('no-reply@lms.local'),
  UI_URL: z.string().default('http://localhost:4200'),
  CORS_ORIGINS: commaList,
  LOG_LEVEL: z.string().default('info'),
  ACCESS_EXPIRATION_MINUTES: positiveInt(60),
  REFRESH_EXPIRATION_MINUTES: positiveInt(1440),
  CHANGE_PASSWORD_EXPIRATION_MINUTES: positiveInt(30),
  VERIFY_EMAIL_EXPIRATION_MINUTES: positiveInt(60),
  RATE_LIMIT_MAX: positiveInt(600),
  LOGIN_RATE_LIMIT_MAX: positiveInt(20),
  // Failed sign-ins per address in the window before its wrong guesses are refused; unset: 50 times the
  // per-account limit.
  LOGIN_ADDRESS_RATE_LIMIT_MAX: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().positive().optional(),
  ),
  MAX_UPLOAD_MB: positiveInt(200),
  MAX_MEDIA_MB: positiveInt(200),
  PUBLIC_URL: optionalString,
  MAX_JSON_KB: positiveInt(1024),
  MAX_CONCURRENT_IMPORTS: positiveInt(2),
  MAX_UPLOADS_PER_CALLER: positiveInt(4),
  UPLOAD_IDLE_SECONDS: positiveInt(30),
  ORPHAN_GRACE_SECONDS: positiveInt(3600),
  LOG_ARCHIVE_RETENTION_DAYS: nonNegativeInt(0),
  SIGNIN_RETENTION_DAYS: nonNegativeInt(0),
  ACCESS_RECORD_RETENTION_YEARS: nonNegativeInt(6),
  ACCESS_RECORD_OFF: flag,
  LEARNER_RETENTION_YEARS: nonNegativeInt(0),
  MAIL_LINKS_PER_CLIENT_HOUR: positiveInt(10),
  MAIL_LINKS_PER_ACCOUNT_HOUR: positiveInt(3),
  FLEET_ENROLMENT_CODE_HOURS: z.coerce.number().int().min(1).max(24 * 30).default(24),
  FLEET_DIAGNOSTICS_DAYS: z.coerce.number().int().min(1).max(365).default(14),
});

export const CENTRAL_SECRETS = ['JWT_SECRET', 'APPLICATION_API_KEY', 'SERVER_SYNC_KEY', 'RPI_SECRET'] as const;
/** Every secret central reads, each its own value outside development and test (METRICS_TOKEN included). */
const CENTRAL_DISTINCT = [...CENTRAL_SECRETS, 'S3_SECRET_KEY', 'BACKUP_KEY', 'METRICS_TOKEN'];

export function loadConfig(env: Env = process.env) {
  const e = parseEnv(schema, env);
  // The object store's key is checked where it is used (S3_ENDPOINT set), by the rule for issued keys.
  const s3Key = e.S3_ENDPOINT ? [{ name: 'S3_SECRET_KEY', optional: true, minBytes: MIN_ISSUED_SECRET_BYTES }] : [];
  const weakSecrets = checkSecrets(e.NODE_ENV, env, [...CENTRAL_SECRETS, ...s3Key, BACKUP_KEY_RULE]);
  checkOptionalToken(e.NODE_ENV, 'METRICS_TOKEN', e.METRICS_TOKEN);
  checkDistinctSecrets(e.NODE_ENV, env, CENTRAL_DISTINCT);
  return deepFreeze({
    nodeEnv: e.NODE_ENV,
    // Secrets below the entropy rule, kept on purpose with ALLOW_WEAK_<NAME>=1; logged at every start.
    weakSecrets,
    port: e.PORT,
    host: e.HOST,
    drainMs: e.SHUTDOWN_DRAIN_SECONDS * 1000,
    stopDelayMs: e.SHUTDOWN_DELAY_SECONDS * 1000,
    readyTimeoutMs: e.READY_TIMEOUT_MS,
    databaseUrl: e.DATABASE_URL,
    database: databaseSettings(e),
    // The reports' reads go to this streaming replica while it lags the primary by at most maxLagSeconds.
    replica: replicaOf(e),
    jwtSecret: e.JWT_SECRET,
    apiKey: e.APPLICATION_API_KEY,
    serverSyncKey: e.SERVER_SYNC_KEY,
    rpiSecret: e.RPI_SECRET,
    rpiCloud: e.RPI_CLOUD.replace(/\/+$/, ''),
    // The username shortcut exists for local work only; production never honours it.
    superadminUsername: isDevOrTest(e.NODE_ENV) ? e.SUPERADMIN_USERNAME : undefined,
    logImportEnabled: e.LOG_IMPORT_ENABLED,
    schoolUserPasswordFormat: e.SCHOOLUSER_PASSWORD_FORMAT,
    trustProxy: e.TRUST_PROXY,
    objectStore: e.S3_ENDPOINT
      ? {
          kind: 's3' as const,
          endpoint: e.S3_ENDPOINT,
          accessKey: e.S3_ACCESS_KEY ?? '',
          secretKey: e.S3_SECRET_KEY ?? '',
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          publicEndpoint: e.S3_PUBLIC_ENDPOINT,
        }
      : { kind: 'folder' as const, dir: e.OBJECT_DIR },
    redisUrl: e.REDIS_URL,
    redisStartTimeoutMs: e.REDIS_START_TIMEOUT_SECONDS * 1000,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    // GET /metrics answers a scraper with this bearer token; unset: metrics are off (nothing is counted).
    metricsToken: e.METRICS_TOKEN,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    uiUrl: e.UI_URL.replace(/\/+$/, ''),
    corsOrigins: [...e.CORS_ORIGINS, e.UI_URL.replace(/\/+$/, '')],
    logLevel: e.LOG_LEVEL,
    tokenMinutes: {
      access: e.ACCESS_EXPIRATION_MINUTES,
      refresh: e.REFRESH_EXPIRATION_MINUTES,
      changePassword: e.CHANGE_PASSWORD_EXPIRATION_MINUTES,
      verifyEmail: e.VERIFY_EMAIL_EXPIRATION_MINUTES,
    },
    rateLimit: {
      perMinute: e.RATE_LIMIT_MAX,
      loginPer15Minutes: e.LOGIN_RATE_LIMIT_MAX,
      loginAddressPer15Minutes: e.LOGIN_ADDRESS_RATE_LIMIT_MAX ?? 50 * e.LOGIN_RATE_LIMIT_MAX,
    },
    maxUploadBytes: e.MAX_UPLOAD_MB * 1024 * 1024,
    maxMediaBytes: e.MAX_MEDIA_MB * 1024 * 1024,
    // The address clients reach this API at, for the presigned upload URLs of the folder store; unset:
    // the address the presign request itself was sent to.
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    maxJsonBytes: e.MAX_JSON_KB * 1024,
    maxConcurrentImports: e.MAX_CONCURRENT_IMPORTS,
    maxUploadsPerCaller: e.MAX_UPLOADS_PER_CALLER,
    uploadIdleMs: e.UPLOAD_IDLE_SECONDS * 1000,
    // An unsettled log archive claim older than this names the archive of an import that never committed.
    orphanGraceMs: e.ORPHAN_GRACE_SECONDS * 1000,
    // How many days stored log archives and sign-in rows are kept; 0 keeps them for ever.
    retention: { logArchiveDays: e.LOG_ARCHIVE_RETENTION_DAYS, signInDays: e.SIGNIN_RETENTION_DAYS },
    // The access record of learner data, kept retentionYears (0: for ever); ACCESS_RECORD_OFF (for the
    // overhead benchmark) counts in development and test only: production always records.
    accessRecord: {
      enabled: !(isDevOrTest(e.NODE_ENV) && e.ACCESS_RECORD_OFF),
      retentionYears: e.ACCESS_RECORD_RETENTION_YEARS,
    },
    // Learners without activity for this many years are anonymised by the retention sweep; 0: never.
    learnerRetentionYears: e.LEARNER_RETENTION_YEARS,
    mailLinks: { perClientPerHour: e.MAIL_LINKS_PER_CLIENT_HOUR, perAccountPerHour: e.MAIL_LINKS_PER_ACCOUNT_HOUR },
    // How long a box's one-time enrolment code stays valid (docs/fleet-protocol.md).
    // And how long a box's diagnostics report is kept (the retention sweep deletes older ones).
    fleet: { enrolmentCodeMs: e.FLEET_ENROLMENT_CODE_HOURS * 3_600_000, diagnosticsDays: e.FLEET_DIAGNOSTICS_DAYS },
  });
}

export type Config = ReturnType<typeof loadConfig>;

/** How often the replica's lag is measured: the reports' reads follow the last measure. */
export const REPLICA_CHECK_MS = 5000;

/**
 * DATABASE_REPLICA_URL: a PostgreSQL streaming replica of DATABASE_URL's server. Refused with SQLite (which
 * has no replica) and when it names DATABASE_URL's own server and database (the reports would only share
 * the primary's load under another pool).
 */
function replicaOf(e: { DATABASE_URL: string; DATABASE_REPLICA_URL?: string; REPLICA_MAX_LAG_SECONDS: number }) {
  const url = e.DATABASE_REPLICA_URL;
  if (!url) return undefined;
  if (!isPostgresUrl(e.DATABASE_URL)) {
    throw new ConfigError('DATABASE_REPLICA_URL needs a PostgreSQL DATABASE_URL: a read replica is a PostgreSQL ' +
      'streaming replica of that server (unset DATABASE_REPLICA_URL with SQLite)');
  }
  if (!isPostgresUrl(url)) throw new ConfigError('DATABASE_REPLICA_URL must start with postgres:// or postgresql://');
  if (serverAndDatabase(url) === serverAndDatabase(e.DATABASE_URL)) {
    throw new ConfigError('DATABASE_REPLICA_URL names the same server and database as DATABASE_URL: set it to ' +
      'the streaming replica\'s address, or unset it');
  }
  return { url, maxLagSeconds: e.REPLICA_MAX_LAG_SECONDS, checkEveryMs: REPLICA_CHECK_MS };
}

const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** Host, port and database of a PostgreSQL URL, as PostgreSQL reads them (names case-folded, 5432 by default). */
function serverAndDatabase(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError('DATABASE_URL and DATABASE_REPLICA_URL must be valid URLs');
  }
  const host = decodeURIComponent(u.hostname).toLowerCase().replace(/^localhost$/, '127.0.0.1');
  return `${host}:${u.port || '5432'}/${decodeURIComponent(u.pathname.slice(1)) || decodeURIComponent(u.username)}`;
}

/** Only what migrations and seeds need: they must run without the service's secrets. */
export function loadDatabaseConfig(env: Env = process.env) {
  const e = parseEnv(z.object({ NODE_ENV: nodeEnvSchema, DATABASE_URL: schema.shape.DATABASE_URL }), env);
  return { nodeEnv: e.NODE_ENV, databaseUrl: e.DATABASE_URL };
}

/** What backup and restore need: the database, the object store and the key backups are signed with. */
export function loadStorageConfig(env: Env = process.env) {
  return {
    ...loadDatabaseConfig(env),
    objectStore: loadObjectStoreConfig(env),
    backupKey: backupKeyOf(env, CENTRAL_DISTINCT.filter((n) => n !== 'BACKUP_KEY')),
  };
}

/** The object store settings alone (S3_* or OBJECT_DIR), for commands that run without the service's secrets. */
export function loadObjectStoreConfig(env: Env = process.env) {
  const e = parseEnv(z.object({
    S3_ENDPOINT: optionalString, S3_ACCESS_KEY: optionalString, S3_SECRET_KEY: optionalString,
    S3_BUCKET: schema.shape.S3_BUCKET, S3_REGION: schema.shape.S3_REGION, OBJECT_DIR: schema.shape.OBJECT_DIR,
  }), env);
  return e.S3_ENDPOINT
    ? {
        kind: 's3' as const,
        endpoint: e.S3_ENDPOINT,
        accessKey: e.S3_ACCESS_KEY ?? '',
        secretKey: e.S3_SECRET_KEY ?? '',
        bucket: e.S3_BUCKET,
        region: e.S3_REGION,
      }
    : { kind: 'folder' as const, dir: e.OBJECT_DIR };
}
