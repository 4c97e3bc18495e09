import { commandName, classroom, folderObjects, runBackupCommand, runServiceCli, takeover } from '@lms/db';
import { loadBackupKey, loadDatabaseConfig, loadFleetCliConfig } from './config';
import { openDatabase } from './db';
import { seedDemo } from './seed/demo';
import { copyDemoMedia } from './seed/media';
import { enrollCommand, fleetStatusCommand, fleetSyncCommand } from './fleet/commands';
import { releaseKeyCommand, releaseOfferCommand, releaseReportCommand } from './fleet/release';

runServiceCli({
  service: 'classroom',
  usage:
    'usage: cli <migrate | rollback --step | rollback --all --yes | status | seed-demo | ' +
    'backup --to DIR [--link-from DIR] | restore --from DIR [--yes] [--while-serving] | ' +
    'migrate-from-mysql --source mysql://… | enroll --central URL --code CODE | ' +
    'fleet-status [--contact] | fleet-sync | ' +
    'release-offer | release-key --out FILE | ' +
    'release-report --release ID --outcome installed|failed|rolledback [--from V] [--message M]>',
  migrations: classroom.migrations,
  database: () => {
    const config = loadDatabaseConfig();
    const db = openDatabase(config.databaseUrl, { applicationName: commandName('classroom') });
    return { nodeEnv: config.nodeEnv, db };
  },
  seedDemo: async (db) => [...(await seedDemo(db)), copyDemoMedia(loadDatabaseConfig().mediaDir)],
  extra: {
    withDb: async (cmd, args, db) => {
      const fleetCommands: Record<string, typeof enrollCommand> = {
        enroll: enrollCommand, 'fleet-status': fleetStatusCommand, 'fleet-sync': fleetSyncCommand,
        'release-offer': releaseOfferCommand, 'release-report': releaseReportCommand,
        'release-key': releaseKeyCommand,
      };
      const fleetCommand = fleetCommands[cmd];
      if (fleetCommand) {
        const f = loadFleetCliConfig();
        const ctx = {
          db, dataDir: f.dataDir, client: { timeoutMs: f.fleet.requestTimeoutMs },
          out: (l: string) => process.stdout.write(`${l}\n`), err: (l: string) => process.stderr.write(`${l}\n`),
        };
        return fleetCommand(args, ctx);
      }
      if (cmd === 'migrate-from-mysql') {
        const report = await takeover.takeOverDatabase(
          db, takeover.classroomProfile(), takeover.parseTakeoverArgs(args, false, process.env),
          (l) => process.stdout.write(`${l}\n`), (l) => process.stderr.write(`${l}\n`),
        );
        return report.tables.some((t) => t.refused > t.resolved) ? 1 : 0;
      }
      return runBackupCommand(cmd, args, () => ({
        service: 'classroom',
        db,
        databaseUrl: loadDatabaseConfig().databaseUrl,
        key: loadBackupKey(),
        // The media the tablets are served; a download cut short (.partial/) is not worth keeping.
        objects: folderObjects(loadDatabaseConfig().mediaDir, (key) => key.startsWith('.partial/')),
      }));
    },
  },
});
