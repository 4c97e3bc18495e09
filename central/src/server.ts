import { appMetrics, connectRedis, createLogger, serve, startOrExit, warnWeakSecrets } from '@lms/shared';
import { holdServingLock, servingName } from '@lms/db';
import { loadConfig } from './config';
import { createApp } from './app';
import { assertMigrated, openDatabase, openReplica } from './db';
import { createObjectStore } from './objects';
import { checkpointsSettled } from './areas/log/store';
import { shareRevocations } from './auth/tokens';
import { warnMailNotSent } from './auth/mail';
import { startOrphanSweep } from './areas/log/archives';
import { startRetentionSweep } from './retention';
import { startStatistics } from './periodic';

startOrExit('central API', async () => {
  const config = loadConfig();
  const logger = createLogger({ name: 'central', level: config.logLevel });
  warnWeakSecrets(logger, config.weakSecrets);
  warnMailNotSent(config, logger);
  // Its sessions named and one kept open (PostgreSQL), or a lock held (SQLite): what `restore` checks.
  const db = openDatabase(config.databaseUrl, {
    ...config.database, applicationName: servingName('central', config.databaseUrl), poolMin: 1,
  });
  const serving = holdServingLock(db, 'central');
  await assertMigrated(db);
  const redis = config.redisUrl
    ? await connectRedis(config.redisUrl, logger, {
        startTimeoutMs: config.redisStartTimeoutMs,
        keyPrefix: config.redisKeyPrefix,
      })
    : undefined;
  // Several instances sharing Redis hear of each other's logouts at once.
  const stopSharingRevocations = redis ? await shareRevocations(redis, logger) : undefined;
  const objects = createObjectStore(config.objectStore);
  // Archives and temporary files of imports that a crash cut short (of this or another instance).
  const sweep = startOrphanSweep({ db, objects, logger }, config.orphanGraceMs);
  // The reports' reads go to the streaming replica, when one is configured, while it keeps up.
  const replica = openReplica(config, db, logger);
  await replica?.start();
  const app = createApp(config, { db, logger, redis, objects, replica });
  // Log archives and sign-in rows older than their settings keep (LOG_ARCHIVE_RETENTION_DAYS, SIGNIN_RETENTION_DAYS).
  const metrics = appMetrics(app);
  // And access record entries older than ACCESS_RECORD_RETENTION_YEARS.
  const retention = startRetentionSweep({ db, objects, logger },
    { ...config.retention, accessRecordYears: config.accessRecord.retentionYears,
      learnerYears: config.learnerRetentionYears, fleetDiagnosticsDays: config.fleet.diagnosticsDays },
    metrics && ((what, n) => metrics.retentionDeleted.inc({ what }, n)),
    metrics && ((n) => metrics.learnersAnonymised.inc(n)));
  // The small tables' planner statistics, which autovacuum's thresholds never reach (PostgreSQL).
  const statistics = startStatistics({ db, logger });
  const close = [
    () => sweep.stop(),
    () => statistics.stop(),
    async () => retention?.stop(),
    () => checkpointsSettled().then(() => db.destroy()).finally(() => serving.release()),
    () => replica?.stop(),
    () => stopSharingRevocations?.(),
    () => redis?.quit(),
  ];
  serve({
    name: 'central API', port: config.port, host: config.host, drainMs: config.drainMs, stopDelayMs: config.stopDelayMs,
    logger, app, close,
  });
});
