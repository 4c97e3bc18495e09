import { central, runDbCommand } from '@lms/db';
import { loadDatabaseConfig } from './config';
import { openDatabase } from './db';
import { printRouteCounts } from './routes-report';
import { seedDemo } from './seed/demo';

const USAGE = 'usage: cli <migrate | rollback | status | seed-demo | routes>';

async function main(argv: string[]): Promise<number> {
  const [cmd] = argv;
  if (cmd === 'routes') {
    printRouteCounts((l) => process.stdout.write(`${l}\n`));
    return 0;
  }
  if (!cmd) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadDatabaseConfig();
  const db = openDatabase(config.databaseUrl);
  try {
    const known = await runDbCommand(cmd, { service: 'central', db, migrations: central.migrations, nodeEnv: config.nodeEnv, seedDemo });
    if (!known) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    return 0;
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
