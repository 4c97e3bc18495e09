import { commandName, central, runBackupCommand, runServiceCli } from '@lms/db';
import { loadDatabaseConfig, loadObjectStoreConfig, loadStorageConfig } from './config';
import { storeObjects } from './backup';
import { createObjectStore } from './objects';
import { openDatabase } from './db';
import { printRouteCounts, printRouteScopes } from './routes-report';
import { seedDemoWithMedia } from './seed/media';
import { setStaffPassword } from './auth/set-password';
import { migrateFromMysql } from './takeover/command';

runServiceCli({
  service: 'central',
  usage:
    'usage: cli <migrate | rollback --step | rollback --all --yes | status | seed-demo | routes | ' +
    'set-password <lmsusername> <password> | backup --to DIR [--link-from DIR] | ' +
    'restore --from DIR [--yes] [--while-serving] | ' +
    'migrate-from-mysql --source mysql://…>',
  migrations: central.migrations,
  database: () => {
    const config = loadDatabaseConfig();
    return {
      nodeEnv: config.nodeEnv,
      db: openDatabase(config.databaseUrl, { applicationName: commandName('central') }),
    };
  },
  seedDemo: (db) => seedDemoWithMedia(db, loadObjectStoreConfig()),
  extra: {
    withoutDb: (cmd) => {
      if (cmd !== 'routes') return undefined;
      const out = (l: string) => process.stdout.write(`${l}\n`);
      printRouteCounts(out);
      out('');
      printRouteScopes(out);
      return 0;
    },
    withDb: async (cmd, args, db) => {
      if (cmd === 'migrate-from-mysql') return (await migrateFromMysql(db, args)).code;
      const backup = await runBackupCommand(cmd, args, () => {
        const s = loadStorageConfig();
        return {
          service: 'central', db, databaseUrl: s.databaseUrl, key: s.backupKey,
          objects: storeObjects(createObjectStore(s.objectStore), s.objectStore),
        };
      });
      if (backup !== undefined) return backup;
      if (cmd !== 'set-password') return undefined;
      const [lmsusername, password] = args;
      if (!lmsusername || !password) {
        process.stderr.write('usage: npm run set-password -w central -- <lmsusername> <password>\n');
        return 2;
      }
      process.stdout.write(`${await setStaffPassword(db, lmsusername, password)}\n`);
      return 0;
    },
  },
});
