import { central, runDbCommand } from '@lms/db';
import { loadDatabaseConfig } from './config';
import { openDatabase } from './db';
import { printRouteCounts } from './routes-report';
import { seedDemo } from './seed/demo';
import { setStaffPassword } from './auth/set-password';

const USAGE = 'usage: cli <migrate | rollback | status | seed-demo | routes | set-password <lmsusername> <password>>';

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
    if (cmd === 'set-password') {
      const [, lmsusername, password] = argv;
      if (!lmsusername || !password) {
        process.stderr.write('usage: npm run set-password -w central -- <lmsusername> <password>\n');
        return 2;
      }
      process.stdout.write(`${await setStaffPassword(db, lmsusername, password)}\n`);
      return 0;
    }
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
