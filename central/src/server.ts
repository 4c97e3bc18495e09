import { connectRedis, createLogger, serve, startOrExit } from '@lms/shared';
import { loadConfig } from './config';
import { createApp } from './app';
import { assertMigrated, openDatabase } from './db';

startOrExit('central API', async () => {
  const config = loadConfig();
  const logger = createLogger({ name: 'central', level: config.logLevel });
  const db = openDatabase(config.databaseUrl);
  await assertMigrated(db);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, logger) : undefined;
  const app = createApp(config, { db, logger, redis });
  serve({ name: 'central API', port: config.port, logger, app, close: [() => db.destroy(), () => redis?.quit()] });
});
