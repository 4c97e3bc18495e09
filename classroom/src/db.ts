import { classroom, createKnex, parseDatabaseUrl, pendingMigrations, type KnexOptions, type Knex } from '@lms/db';

/**
 * The classroom's database. On SQLite (a box without a UPS): WAL journal, synchronous FULL. Every
 * commit is synced to the card before the request is answered, so an acknowledged result or a finished
 * import survives a power cut; a transaction cut short is rolled back when the database is next opened.
 */
export function openDatabase(databaseUrl: string, settings?: Omit<KnexOptions, 'kinds'>): Knex {
  return createKnex(parseDatabaseUrl(databaseUrl), { kinds: classroom.kinds, ...settings, synchronous: 'FULL' });
}

/** The service never migrates at boot: refuse to start on a database that is behind. */
export async function assertMigrated(db: Knex): Promise<void> {
  const pending = await pendingMigrations(db, classroom.migrations);
  if (pending.length) {
    throw new Error(
      `The classroom database is not migrated (${pending.length} pending: ${pending.join(', ')}). ` +
        'Run `make migrate` first.',
    );
  }
}
