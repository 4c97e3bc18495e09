import { ConfigError, connectRedis, createLogger } from '@lms/shared';
import { loadConfig } from './config';
import { createApp } from './app';
import { assertMigrated, openDatabase } from './db';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ name: 'central', level: config.logLevel });
  const db = openDatabase(config.databaseUrl);
  await assertMigrated(db);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, logger) : undefined;
  const app = createApp(config, { db, logger, redis });
  const server = app.listen(config.port, () => logger.info({ port: config.port }, `central API listening on :${config.port}`));
  const stop = () => {
    logger.info('shutting down');
    server.close(() => {
      void Promise.all([db.destroy(), redis?.quit()]).finally(() => process.exit(0));
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`central API cannot start: ${message}\n`);
  process.exit(1);
});
