import { classroom, runServiceCli, takeover } from '@lms/db';
import { loadDatabaseConfig } from './config';
import { openDatabase } from './db';
import { seedDemo } from './seed/demo';

runServiceCli({
  service: 'classroom',
  usage: 'usage: cli <migrate | rollback | status | seed-demo | migrate-from-mysql --source mysql://…>',
  migrations: classroom.migrations,
  database: () => {
    const config = loadDatabaseConfig();
    return { nodeEnv: config.nodeEnv, db: openDatabase(config.databaseUrl) };
  },
  seedDemo,
  extra: {
    withDb: async (cmd, args, db) => {
      if (cmd !== 'migrate-from-mysql') return undefined;
      const report = await takeover.takeOverDatabase(
        db, takeover.classroomProfile(), takeover.parseTakeoverArgs(args, false),
        (l) => process.stdout.write(`${l}\n`), (l) => process.stderr.write(`${l}\n`),
      );
      return report.tables.some((t) => t.refused > t.resolved) ? 1 : 0;
    },
  },
});
