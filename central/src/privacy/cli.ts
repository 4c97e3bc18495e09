import fs from 'node:fs';
import os from 'node:os';
import { pipeline } from 'node:stream/promises';
import { commandName } from '@lms/db';
import { appendEntries, type AccessEntry } from '../access/record';
import { loadDatabaseConfig, loadObjectStoreConfig } from '../config';
import { createObjectStore } from '../objects';
import { openDatabase } from '../db';
import { eraseLearner, exportLearner, findLearner, learnerZip } from './learner';

const USAGE = 'usage: npm run learner-data -w central -- export <studentid> --to FILE.zip\n' +
  '       npm run learner-data -w central -- erase <studentid>\n';

/**
 * `npm run learner-data -w central -- export|erase <studentid>`: one learner's data as a ZIP, or the erasure
 * of their identity, on the server, as the superadmin's routes do. Both are written to the access record
 * (account kind `cli`, the operating-system user as the account). Exit 0 done, 1 failed or unknown learner,
 * 2 on a usage error.
 */
async function main(args: string[]): Promise<number> {
  const [cmd, studentid, flag, to] = args;
  const ok = studentid && ((cmd === 'export' && flag === '--to' && to && args.length === 4)
    || (cmd === 'erase' && args.length === 2));
  if (!ok) {
    process.stderr.write(USAGE);
    return 2;
  }
  const config = loadDatabaseConfig();
  const db = openDatabase(config.databaseUrl, { applicationName: commandName('central') });
  const objects = createObjectStore(loadObjectStoreConfig());
  try {
    const l = await findLearner(db, studentid);
    if (!l) {
      process.stderr.write(`learner-data: no learner ${studentid}\n`);
      return 1;
    }
    const entry = (route: string, stage: AccessEntry['stage']): AccessEntry => ({
      at: new Date().toISOString(), requestid: null, accountid: os.userInfo().username.slice(0, 255),
      accountkind: 'cli', method: 'CLI', route, path: `${route} ${studentid}`, client: null, stage,
      outcome: 0, learnercount: 1, filter: null, studentids: [studentid],
    });
    if (cmd === 'export') {
      await appendEntries(db, [entry('learner-data export', 'download started')]);
      const e = await exportLearner(db, objects, l);
      await pipeline(learnerZip(e), fs.createWriteStream(to, { mode: 0o600 }));
      await appendEntries(db, [entry('learner-data export', 'download finished')]);
      process.stdout.write(`learner ${studentid}: ${e.files.length} files written to ${to}\n`);
      return 0;
    }
    const r = await eraseLearner(db, objects, l, { by: null, reason: 'request' });
    if (r.erased) await appendEntries(db, [entry('learner-data erase', 'answered')]);
    process.stdout.write(r.erased ? `learner ${studentid}: identity erased\n`
      : `learner ${studentid}: already erased, nothing changed\n`);
    return 0;
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`learner-data: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
