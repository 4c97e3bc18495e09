import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { createKnex, type DatabaseTarget } from './knex';
import { migrateLatest, type MigrationList } from './migrator';
import type { ColumnKinds } from './tables';

export interface TestDatabase {
  db: Knex;
  target: DatabaseTarget;
  /** A DATABASE_URL that reaches the same database (for child processes). */
  url: string;
  dispose(): Promise<void>;
}

/**
 * A fresh database for one test file: a temporary SQLite file, or a new schema in the PostgreSQL
 * database named by TEST_DATABASE_URL. Migrated unless `migrate: false`.
 */
export async function createTestDatabase(o: {
  kinds: ColumnKinds;
  migrations?: MigrationList;
  migrate?: boolean;
}): Promise<TestDatabase> {
  const pgUrl = process.env.TEST_DATABASE_URL;
  let target: DatabaseTarget;
  let url: string;
  let cleanup: () => Promise<void>;
  if (pgUrl) {
    const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: pgUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`CREATE SCHEMA "${schema}"`);
    target = { dialect: 'pg', connection: pgUrl, schema };
    const u = new URL(pgUrl);
    u.searchParams.set('options', `-c search_path=${schema}`);
    url = u.toString();
    cleanup = async () => {
      await admin.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.destroy();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-test-'));
    const file = path.join(dir, 'test.sqlite');
    target = { dialect: 'sqlite', connection: file };
    url = `sqlite:${file}`;
    // Retried: a connection the test left open (an app's own pool) may still write the WAL or its lock file
    // while the folder goes. A temporary folder left behind after that is not a failure of the test.
    cleanup = async () => {
      try {
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
      } catch {
        /* left for the system's temporary-file cleaning */
      }
    };
  }
  const db = createKnex(target, { kinds: o.kinds });
  if (o.migrate !== false && o.migrations) await migrateLatest(db, o.migrations);
  return {
    db,
    target,
    url,
    async dispose() {
      await db.destroy();
      await cleanup();
    },
  };
}
