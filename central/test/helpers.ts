import { central, createTestDatabase, type TestDatabase } from '@lms/db';
import { createLogger } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig, type Config } from '../src/config';
import type { Deps } from '../src/http/types';

export const silentLogger = createLogger({ name: 'test', level: 'silent' });

export interface TestApp {
  app: ReturnType<typeof createApp>;
  config: Config;
  tdb: TestDatabase;
}

export async function testDatabase(): Promise<TestDatabase> {
  return createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
}

/** A central app on a fresh, migrated database; env overrides the test defaults. */
export async function makeApp(env: Record<string, string> = {}, tdb?: TestDatabase, deps: Partial<Deps> = {}): Promise<TestApp> {
  const db = tdb ?? (await testDatabase());
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url, ...env });
  const app = createApp(config, { db: db.db, logger: silentLogger, ...deps });
  return { app, config, tdb: db };
}
