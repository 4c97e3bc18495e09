import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
export async function makeApp(
  env: Record<string, string> = {},
  tdb?: TestDatabase,
  deps: Partial<Deps> = {},
): Promise<TestApp> {
  const db = tdb ?? (await testDatabase());
  // Port 9 refuses at once: no test reaches a classroom server a developer may be running on :3001.
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url, RPI_CLOUD: 'http://127.0.0.1:9', ...env });
  const app = createApp(config, { db: db.db, logger: silentLogger, ...deps });
  return { app, config, tdb: db };
}

/** A loopback port that nothing listens on (a classroom server that is down). */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
