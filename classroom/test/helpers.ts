import { classroom, createTestDatabase, type TestDatabase } from '@lms/db';
import { createLogger } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig, type Config } from '../src/config';

export const silentLogger = createLogger({ name: 'test', level: 'silent' });

export interface TestApp {
  app: ReturnType<typeof createApp>;
  config: Config;
  tdb: TestDatabase;
}

export async function testDatabase(): Promise<TestDatabase> {
  return createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
}

/** A classroom app on a fresh, migrated database; env overrides the test defaults. */
export async function makeApp(env: Record<string, string> = {}, tdb?: TestDatabase): Promise<TestApp> {
  const db = tdb ?? (await testDatabase());
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url, ...env });
  const app = createApp(config, { db: db.db, logger: silentLogger });
  return { app, config, tdb: db };
}
