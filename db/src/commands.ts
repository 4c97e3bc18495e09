import type { Knex } from 'knex';
import { migrateLatest, pendingMigrations, rollbackAll, type MigrationList } from './migrator';

export interface DbCommandContext {
  service: string;
  db: Knex;
  migrations: MigrationList;
  nodeEnv: string;
  seedDemo: (db: Knex) => Promise<string[]>;
  out?: (line: string) => void;
}

/** migrate | rollback | status | seed-demo, shared by both services' command lines. Returns false for an unknown command. */
export async function runDbCommand(cmd: string, c: DbCommandContext): Promise<boolean> {
  const out = c.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  switch (cmd) {
    case 'migrate': {
      const applied = await migrateLatest(c.db, c.migrations);
      out(applied.length ? `${c.service}: applied ${applied.join(', ')}` : `${c.service}: already up to date`);
      return true;
    }
    case 'rollback': {
      const undone = await rollbackAll(c.db, c.migrations);
      out(`${c.service}: rolled back ${undone.length ? undone.join(', ') : 'nothing'}`);
      return true;
    }
    case 'status': {
      const pending = await pendingMigrations(c.db, c.migrations);
      out(pending.length ? `${c.service}: pending ${pending.join(', ')}` : `${c.service}: up to date`);
      return true;
    }
    case 'seed-demo': {
      if (!['development', 'test', 'local'].includes(c.nodeEnv)) {
        throw new Error(`seed-demo loads demo accounts with known passwords and is refused when NODE_ENV=${c.nodeEnv}`);
      }
      const pending = await pendingMigrations(c.db, c.migrations);
      if (pending.length) throw new Error(`${c.service}: run \`make migrate\` before seeding (pending: ${pending.join(', ')})`);
      for (const line of await c.seedDemo(c.db)) out(line);
      return true;
    }
    default:
      return false;
  }
}
