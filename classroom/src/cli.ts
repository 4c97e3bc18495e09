import { classroom, folderObjects, runBackupCommand, runServiceCli } from '@lms/db';
import { loadDatabaseConfig, loadMediaDir } from './config';
import { openDatabase } from './db';
import { seedDemo } from './seed/demo';

runServiceCli({
  service: 'classroom',
  usage: 'usage: cli <migrate | rollback --step | rollback --all --yes | status | seed-demo | backup --to DIR | restore --from DIR [--yes]>',
  migrations: classroom.migrations,
  database: () => {
    const config = loadDatabaseConfig();
    return { nodeEnv: config.nodeEnv, db: openDatabase(config.databaseUrl) };
  },
  seedDemo,
  extra: {
    withDb: (cmd, args, db) => runBackupCommand(cmd, args, () => ({
      service: 'classroom',
      db,
      databaseUrl: loadDatabaseConfig().databaseUrl,
      // The media the tablets are served; a download cut short (.partial/) is not worth keeping.
      objects: folderObjects(loadMediaDir(), (key) => key.startsWith('.partial/')),
    })),
  },
});
