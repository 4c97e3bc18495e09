import readline from 'node:readline';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { SyncError, syncLog, type SyncIo } from './sync';

const USAGE = `usage: npm run sync-log -- --classroom URL --central URL --user NAME [options]

Moves the classroom's activity log to the central API: signs in on both servers, downloads
GET /export/log to studentlog.zip, uploads it to PUT /log/import and prints what was imported.

  --classroom URL   the classroom server, e.g. http://192.168.4.1:3001
  --central URL     the central API, e.g. https://lms.example.org/api
  --user NAME       the teacher's school user name (the same account on both servers)
  --out FILE        where to save the download (default studentlog.zip)
  --zip FILE        upload this ZIP instead of downloading one (a retry after a failed upload)
  --offline         record the upload as made from an offline classroom (offline=true)
  --keep            keep the ZIP after a successful upload
  --retries N       when central answers "try again later" (its database or object store is down, or it
                    is busy: an answer with Retry-After, or 502/503/504 from a proxy), send the upload
                    again up to N more times, waiting as Retry-After asks (at most --max-wait seconds);
                    default 5. A refusal of the file itself is never sent again.
  --max-wait S      the longest wait between two tries (default 300)

The password is read from SYNC_LOG_PASSWORD, or asked for when run in a terminal.`;

function askPassword(prompt: string): Promise<string> {
  if (!process.stdin.isTTY)
    return Promise.reject(new SyncError('no password: set SYNC_LOG_PASSWORD or run in a terminal to be asked for it'));
  let muted = false;
  const output = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = readline.createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    rl.question(prompt, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    muted = true;
  });
}

function progressPrinter(): SyncIo['progress'] {
  const tty = process.stderr.isTTY;
  const lastStep = { download: -1, upload: -1 };
  return (what, done, total) => {
    const mb = (n: number) => (n / 2 ** 20).toFixed(1);
    const pct = total ? Math.floor((done / total) * 100) : -1;
    const text = `${what.padEnd(8)} ${mb(done)} MB${total ? ` of ${mb(total)} MB (${pct} %)` : ''}`;
    if (tty) {
      process.stderr.write(`\r${text}   `);
      if (total && done >= total) process.stderr.write('\n');
      return;
    }
    // Not a terminal (a log file, CI): one line per quarter.
    const step = total ? Math.floor(pct / 25) : -1;
    if (step !== lastStep[what]) {
      lastStep[what] = step;
      process.stderr.write(`${text}\n`);
    }
  };
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        classroom: { type: 'string' },
        central: { type: 'string' },
        user: { type: 'string' },
        out: { type: 'string', default: 'studentlog.zip' },
        zip: { type: 'string' },
        retries: { type: 'string', default: '5' },
        'max-wait': { type: 'string', default: '300' },
        offline: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.central || !values.user || (!values.classroom && !values.zip)) {
    process.stderr.write(`--central, --user and --classroom (or --zip) are required\n\n${USAGE}\n`);
    return 2;
  }
  const retries = Number(values.retries);
  const maxWait = Number(values['max-wait']);
  if (!Number.isInteger(retries) || retries < 0 || !Number.isInteger(maxWait) || maxWait < 0) {
    process.stderr.write(`--retries and --max-wait take a whole number\n\n${USAGE}\n`);
    return 2;
  }
  try {
    const password = process.env.SYNC_LOG_PASSWORD ?? (await askPassword(`password for ${values.user}: `));
    await syncLog(
      {
        classroom: values.classroom,
        central: values.central,
        user: values.user,
        password,
        out: values.out!,
        zip: values.zip,
        offline: !!values.offline,
        keep: !!values.keep,
        retries,
        maxWaitSeconds: maxWait,
      },
      { log: (line) => process.stdout.write(`${line}\n`), progress: progressPrinter() },
    );
    return 0;
  } catch (err) {
    process.stderr.write(
      `\nsync-log failed: ${err instanceof SyncError ? err.message : ((err as Error).stack ?? String(err))}\n`,
    );
    return 1;
  }
}

main().then((code) => {
  process.exitCode = code;
});
