import { runLogImportBench } from './log-import';
import { runGuardedReadBench } from './guarded-read';
import { runMediaUploadBench } from './media-upload';
/** Runs every benchmark in turn and prints its table; each one measures its own baseline in the same run. */
const benches: Array<{ name: string; run: () => Promise<void> }> = [];
benches.push({ name: 'PUT /log/import: six-month school log over HTTP', run: () => runLogImportBench() });
benches.push({ name: 'Guarded read: GET /curriculum/all with a staff token vs a bare Express route', run: () => runGuardedReadBench() });
benches.push({ name: 'POST /document/upload: a 100 MB video streamed into the object store vs a plain disk copy', run: () => runMediaUploadBench() });

async function main(): Promise<void> {
  if (!benches.length) {
    process.stdout.write('no benchmarks registered\n');
    return;
  }
  // BENCH_ONLY=<words>: only the benchmarks whose name contains them (one at a time while working on it).
  const only = process.env.BENCH_ONLY?.toLowerCase();
  for (const b of benches.filter((x) => !only || x.name.toLowerCase().includes(only))) {
    process.stdout.write(`\n== ${b.name}\n`);
    await b.run();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
