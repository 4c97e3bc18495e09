import { central, createKnex, parseDatabaseUrl, pendingMigrations, type KnexOptions, type Knex } from '@lms/db';
import type { Logger } from '@lms/shared';
import type { Config } from './config';
import { ReplicaReads } from './replica';

export function openDatabase(databaseUrl: string, settings?: Omit<KnexOptions, 'kinds'>): Knex {
  return createKnex(parseDatabaseUrl(databaseUrl), { kinds: central.kinds, ...settings });
}

/** The service never migrates at boot: refuse to start on a database that is behind. */
export async function assertMigrated(db: Knex): Promise<void> {
  const pending = await pendingMigrations(db, central.migrations);
  if (pending.length) {
    throw new Error(
      `The central database is not migrated (${pending.length} pending: ${pending.join(', ')}). ` +
        'Run `make migrate` first.',
    );
  }
}

/**
 * The read replica of DATABASE_REPLICA_URL (its own pool, with the primary's pool settings) and the measure of
 * its lag; undefined when none is configured. `start()` it before serving, `stop()` it at shutdown.
 */
export function openReplica(config: Config, primary: Knex, logger: Logger): ReplicaReads | undefined {
  if (!config.replica) return undefined;
  return new ReplicaReads({
    replica: openDatabase(config.replica.url, config.database),
    primary,
    maxLagSeconds: config.replica.maxLagSeconds,
    checkEveryMs: config.replica.checkEveryMs,
    timeoutMs: config.readyTimeoutMs,
    logger,
  });
}
