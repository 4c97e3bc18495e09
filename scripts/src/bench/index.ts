import { runLogImportBench } from './log-import';
import { runGuardedReadBench } from './guarded-read';
import { runMediaUploadBench } from './media-upload';
import { runSoakBench } from './soak';
import { runCurriculumTreeBench } from './curriculum-tree';
import { runReportsBench } from './reports';
import { runStudentsBench } from './students';
import { runLivedInBench } from './lived-in';
import { runTakeoverBench } from './takeover';
import { runClassroomBoxBench } from './classroom-box';
import { runScaleBench } from './scale';
import { runAccessRecordBench } from './access';
import { runFleetBench } from './fleet';
/** Runs every benchmark in turn and prints its table; each one measures its own baseline in the same run. */
const benches: Array<{ name: string; run: () => Promise<void> }> = [];
benches.push({ name: 'PUT /log/import: six-month school log over HTTP', run: () => runLogImportBench() });
benches.push({
  name: 'Lived-in server: enrolment, guarded reads, then PUT /log/import; and a ten-times log',
  run: () => runLivedInBench(),
});
benches.push({
  name: 'Guarded read: GET /curriculum/all with a staff token vs a bare Express route',
  run: () => runGuardedReadBench(),
});
benches.push({
  name: 'Soak: both services under mixed load (reads, sign-ins, log imports, oversize bodies)',
  run: () => runSoakBench(),
});
benches.push({
  name: 'GET /curriculum/tree of a 12 x 10 x 20 curriculum vs plain SELECTs of its rows',
  run: () => runCurriculumTreeBench(),
});
benches.push({
  name: "Reports: every report route on 51 schools of six months (the log benchmark's school and 50 more)",
  run: () => runReportsBench(),
});
benches.push({
  name: 'Learners: POST /student pages and the learner CSV vs plain SELECTs',
  run: () => runStudentsBench(),
});
benches.push({
  name: 'migrate-from-mysql: a million learner results from MariaDB vs a plain bulk write of the same rows',
  run: () => runTakeoverBench(),
});
benches.push({
  name: "Classroom box: 40 tablets running the learner app's calls, then result submissions at saturation",
  run: () => runClassroomBoxBench(),
});
// Only with BENCH=scale: it grows a database to ten million results.
if (process.env.BENCH?.toLowerCase() === 'scale') {
  benches.push({
    name: 'Scale: imports and every report at 0.1 M, 1 M and 10 M results on PostgreSQL',
    run: () => runScaleBench(),
  });
}
// Only with BENCH=fleet: it enrols 2,000 boxes and runs them for ten minutes.
if (process.env.BENCH?.toLowerCase() === 'fleet') {
  benches.push({
    name: 'Fleet: 2,000 simulated boxes syncing with central in compressed time, and the ZIP path beside it',
    run: () => runFleetBench(),
  });
}
benches.push({
  name: 'Access record: the learner reads with the record on and off, side by side',
  run: () => runAccessRecordBench(),
});
benches.push({
  name: 'POST /document/upload: a 100 MB video streamed into the object store vs a plain disk copy',
  run: () => runMediaUploadBench(),
});

async function main(): Promise<void> {
  // `BENCH=soak` (or any part of a benchmark's name) runs only the matching ones.
  const only = process.env.BENCH?.toLowerCase();
  if (only) benches.splice(0, benches.length, ...benches.filter((b) => b.name.toLowerCase().includes(only)));
  if (!benches.length) {
    process.stdout.write('no benchmarks registered\n');
    return;
  }
  for (const b of benches) {
    process.stdout.write(`\n== ${b.name}\n`);
    await b.run();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
