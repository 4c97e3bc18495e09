import { central, createKnex, parseDatabaseUrl, pendingMigrations, type KnexOptions, type Knex } from '@lms/db';

export function openDatabase(databaseUrl: string, settings?: Omit<KnexOptions, 'kinds'>): Knex {
  return createKnex(parseDatabaseUrl(databaseUrl), { kinds: central.kinds, ...settings });
}

/** The service never migrates at boot: refuse to start on a database that is behind. */
export async function assertMigrated(db: Knex): Promise<void> {
  const pending = await pendingMigrations(db, central.migrations);
  if (pending.length) {
    throw new Error(`The central database is not migrated (${pending.length} pending: ${pending.join(', ')}). Run \`make migrate\` first.`);
  }
}
