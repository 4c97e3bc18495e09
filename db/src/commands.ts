import type { Knex } from 'knex';
import {
  DEFAULT_LOCK_TIMEOUT_MS,
  appliedMigrations,
  migrate,
  pendingMigrations,
  rollback,
  type MigrationList,
} from './migrator';

export interface DbCommandContext {
  service: string;
  db: Knex;
  migrations: MigrationList;
  nodeEnv: string;
  seedDemo: (db: Knex) => Promise<string[]>;
  /** The command's own arguments (`--step`, `--all --yes`, `--lock-timeout SECONDS`). */
  args?: string[];
  out?: (line: string) => void;
}

/** A refused command line: exit code 2 with this message. */
export class UsageError extends Error {}

function lockTimeoutOf(args: string[]): number {
  const i = args.indexOf('--lock-timeout');
  if (i < 0) return DEFAULT_LOCK_TIMEOUT_MS;
  const seconds = Number(args[i + 1]);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError('--lock-timeout takes a number of seconds, e.g. --lock-timeout 30');
  return seconds * 1000;
}

/**
 * migrate | rollback | status | seed-demo, shared by both
 * services' command lines. Returns false for an unknown command.
 */
export async function runDbCommand(cmd: string, c: DbCommandContext): Promise<boolean> {
  const out = c.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const args = c.args ?? [];
  switch (cmd) {
    case 'migrate': {
      const r = await migrate(c.db, c.migrations, {
        lockTimeoutMs: lockTimeoutOf(args),
        onWait: (m) => out(`${c.service}: ${m}`),
      });
      if (r.applied.length) out(`${c.service}: applied ${r.applied.join(', ')}`);
      else if (r.appliedByOther.length)
        out(
          `${c.service}: applied nothing; another run applied ${r.appliedByOther.join(', ')} ` +
            'while this one waited for the lock; up to date',
        );
      else out(`${c.service}: applied nothing; already up to date`);
      return true;
    }
    case 'rollback': {
      // Undoing every migration drops every table: on a production database, all of its data.
      const step = args.includes('--step');
      const all = args.includes('--all');
      const applied = await appliedMigrations(c.db);
      if (step === all || (all && !args.includes('--yes'))) {
        throw new UsageError(
          `${c.service}: rollback needs --step (undo the last migration, ${applied[0] ?? 'none applied'}) ` +
          `or --all --yes (undo all ${applied.length}, dropping every table and all data in them); nothing was changed`,
        );
      }
      const undone = await rollback(c.db, c.migrations, all ? Infinity : 1, {
        lockTimeoutMs: lockTimeoutOf(args),
        onWait: (m) => out(`${c.service}: ${m}`),
      });
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
      if (pending.length)
        throw new Error(`${c.service}: run \`make migrate\` before seeding (pending: ${pending.join(', ')})`);
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
      if (
        await runDbCommand(cmd, {
          service: o.service,
          db,
          migrations: o.migrations,
          nodeEnv,
          seedDemo: o.seedDemo,
          args,
        })
      )
        return 0;
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
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}
