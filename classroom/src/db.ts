import { classroom, createKnex, parseDatabaseUrl, pendingMigrations, type DatabaseSettings, type Knex } from '@lms/db';

export function openDatabase(databaseUrl: string, settings?: DatabaseSettings): Knex {
  return createKnex(parseDatabaseUrl(databaseUrl), { kinds: classroom.kinds, ...settings });
}

/** The service never migrates at boot: refuse to start on a database that is behind. */
export async function assertMigrated(db: Knex): Promise<void> {
  const pending = await pendingMigrations(db, classroom.migrations);
  if (pending.length) {
    throw new Error(`The classroom database is not migrated (${pending.length} pending: ${pending.join(', ')}). Run \`make migrate\` first.`);
  }
}
