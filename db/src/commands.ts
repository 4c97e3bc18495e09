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
      if (!['development', 'test'].includes(c.nodeEnv)) {
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

export interface ServiceCliOptions {
  service: string;
  usage: string;
  migrations: MigrationList;
  /** Read lazily: commands that need no database (`routes`) must not need its configuration. */
  database: () => { nodeEnv: string; db: Knex };
  seedDemo: (db: Knex) => Promise<string[]>;
  /** Commands of the service itself; return an exit code, or undefined for a command it does not know. */
  extra?: {
    withoutDb?: (cmd: string, args: string[]) => Promise<number | undefined> | number | undefined;
    withDb?: (cmd: string, args: string[], db: Knex) => Promise<number | undefined>;
  };
}

/** A service's command line: the database commands plus its own; exits with the command's code. */
export function runServiceCli(o: ServiceCliOptions, argv: string[] = process.argv.slice(2)): void {
  const main = async (): Promise<number> => {
    const [cmd, ...args] = argv;
    if (!cmd) {
      process.stderr.write(`${o.usage}\n`);
      return 2;
    }
    const early = await o.extra?.withoutDb?.(cmd, args);
    if (early !== undefined) return early;
    const { nodeEnv, db } = o.database();
    try {
      const own = await o.extra?.withDb?.(cmd, args, db);
      if (own !== undefined) return own;
      if (await runDbCommand(cmd, { service: o.service, db, migrations: o.migrations, nodeEnv, seedDemo: o.seedDemo })) return 0;
      process.stderr.write(`${o.usage}\n`);
      return 2;
    } finally {
      await db.destroy();
    }
  };
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
