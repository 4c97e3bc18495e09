import { commandName } from '@lms/db';
import { loadDatabaseConfig } from '../config';
import { openDatabase } from '../db';
import { verifyChain } from './record';

/**
 * `npm run access-record -w central -- verify`: checks the access record's hash chain from its oldest kept
 * entry; exit 0 when every entry fits, 1 naming the first that does not, 2 on a usage error.
 */
async function main(args: string[]): Promise<number> {
  if (args[0] !== 'verify' || args.length > 1) {
    process.stderr.write('usage: npm run access-record -w central -- verify\n');
    return 2;
  }
  const config = loadDatabaseConfig();
  const db = openDatabase(config.databaseUrl, { applicationName: commandName('central') });
  try {
    const r = await verifyChain(db);
    if (r.ok) {
      const span = r.checked ? `entries ${r.firstid} to ${r.lastid}` : 'no entries';
      process.stdout.write(`access record verified: ${r.checked} entries fit the chain (${span})\n`);
      return 0;
    }
    process.stdout.write(`access record broken at entry ${r.broken!.id}: ${r.broken!.reason} ` +
      `(${r.checked} entries before it fit)\n`);
    return 1;
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`access-record: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
