import type { Knex } from 'knex';

export interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Migrations are listed in code (not discovered on disk) so the same list runs from TypeScript and from dist. */
export type MigrationList = ReadonlyArray<readonly [name: string, migration: Migration]>;

class ListSource implements Knex.MigrationSource<Migration> {
  constructor(private readonly list: MigrationList) {}
  async getMigrations(): Promise<Migration[]> {
    return this.list.map(([, m]) => m);
  }
  getMigrationName(migration: Migration): string {
    const entry = this.list.find(([, m]) => m === migration);
    if (!entry) throw new Error('unknown migration');
    return entry[0];
  }
  async getMigration(migration: Migration): Promise<Migration> {
    return migration;
  }
}

export const MIGRATIONS_TABLE = 'knex_migrations';

function migratorConfig(list: MigrationList): Knex.MigratorConfig {
  return { migrationSource: new ListSource(list), tableName: MIGRATIONS_TABLE };
}

export async function migrateLatest(knex: Knex, list: MigrationList): Promise<string[]> {
  const [, applied] = await knex.migrate.latest(migratorConfig(list));
  return applied as string[];
}

export async function rollbackAll(knex: Knex, list: MigrationList): Promise<string[]> {
  const [, undone] = await knex.migrate.rollback(migratorConfig(list), true);
  return undone as string[];
}

/** Names of migrations not yet applied; read-only (does not create the bookkeeping tables). */
export async function pendingMigrations(knex: Knex, list: MigrationList): Promise<string[]> {
  const names = list.map(([n]) => n);
  if (!(await knex.schema.hasTable(MIGRATIONS_TABLE))) return names;
  const done = new Set((await knex(MIGRATIONS_TABLE).select('name')).map((r: { name: string }) => r.name));
  return names.filter((n) => !done.has(n));
}
