import { connectRedis, createLogger, serve, startOrExit, warnWeakSecrets } from '@lms/shared';
import { holdServingLock, servingName } from '@lms/db';
import { loadConfig } from './config';
import { createApp } from './app';
import { assertMigrated, openDatabase } from './db';
import { dailyLogStream } from './logging';
import { startSyncAgent } from './fleet/agent';
import { serverSettings } from './fleet/settings';

startOrExit('classroom server', async () => {
  const config = loadConfig();
  // The daily files are what GET /export/log carries to the central API.
  const daily = dailyLogStream(config.logDir, { maxFileBytes: config.logFileMaxBytes, requests: config.logRequests });
  const logger = createLogger({ name: 'classroom', level: config.logLevel, streams: [daily] });
  // Its sessions named and one kept open (PostgreSQL), or a lock held (SQLite): what `restore` checks.
  const db = openDatabase(config.databaseUrl, {
    ...config.database, applicationName: servingName('classroom', config.databaseUrl), poolMin: 1,
  });
  const serving = holdServingLock(db, 'classroom');
  warnWeakSecrets(logger, config.weakSecrets);
  await assertMigrated(db);
  const redis = config.redisUrl
    ? await connectRedis(config.redisUrl, logger, {
        startTimeoutMs: config.redisStartTimeoutMs,
        keyPrefix: config.redisKeyPrefix,
      })
    : undefined;
  // The fleet's sync agent: a timer in this process that does nothing until the box is enrolled.
  const agent = config.fleet.agent.enabled
    ? startSyncAgent(db, { ...config.fleet.agent, requestTimeoutMs: config.fleet.requestTimeoutMs,
      dataDir: config.dataDir, mediaDir: config.mediaDir, logDir: config.logDir,
      onSettings: serverSettings(logger, daily.stream, config.logLevel) }, logger)
    : undefined;
  const app = createApp(config, {
    db, logger, redis, agent, countRequest: (status) => daily.stream.countRequest(status),
  });
  serve({
    name: 'classroom server',
    port: config.port,
    host: config.host,
    drainMs: config.drainMs,
    stopDelayMs: config.stopDelayMs,
    logger,
    app,
    close: [() => agent?.stop(), () => db.destroy().finally(() => serving.release()), () => redis?.quit()],
  });
});
