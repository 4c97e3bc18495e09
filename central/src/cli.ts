import { central, runServiceCli } from '@lms/db';
import { loadDatabaseConfig } from './config';
import { openDatabase } from './db';
import { printRouteCounts, printRouteScopes } from './routes-report';
import { seedDemo } from './seed/demo';
import { setStaffPassword } from './auth/set-password';

runServiceCli({
  service: 'central',
  usage: 'usage: cli <migrate | rollback | status | seed-demo | routes | set-password <lmsusername> <password>>',
  migrations: central.migrations,
  database: () => {
    const config = loadDatabaseConfig();
    return { nodeEnv: config.nodeEnv, db: openDatabase(config.databaseUrl) };
  },
  seedDemo,
  extra: {
    withoutDb: (cmd) => {
      if (cmd !== 'routes') return undefined;
      const out = (l: string) => process.stdout.write(`${l}\n`);
      printRouteCounts(out);
      out('');
      printRouteScopes(out);
      return 0;
    },
    withDb: async (cmd, [lmsusername, password], db) => {
      if (cmd !== 'set-password') return undefined;
      if (!lmsusername || !password) {
        process.stderr.write('usage: npm run set-password -w central -- <lmsusername> <password>\n');
        return 2;
      }
      process.stdout.write(`${await setStaffPassword(db, lmsusername, password)}\n`);
      return 0;
    },
  },
});
