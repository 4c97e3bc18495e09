import { classroom, runServiceCli } from '@lms/db';
import { loadDatabaseConfig } from './config';
import { openDatabase } from './db';
import { seedDemo } from './seed/demo';
import { copyDemoMedia } from './seed/media';

runServiceCli({
  service: 'classroom',
  usage: 'usage: cli <migrate | rollback | status | seed-demo>',
  migrations: classroom.migrations,
  database: () => {
    const config = loadDatabaseConfig();
    return { nodeEnv: config.nodeEnv, db: openDatabase(config.databaseUrl) };
  },
  seedDemo: async (db) => [...(await seedDemo(db)), copyDemoMedia(loadDatabaseConfig().mediaDir)],
});
