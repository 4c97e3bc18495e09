import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Builds every workspace (`tsc -b`, incremental: about a second when nothing changed) before any test
 * runs. Some tests start the compiled servers and CLIs as child processes, and the log reader's worker
 * thread runs the compiled `shared/dist/zip/log-worker.js`; without this they would run whatever an
 * earlier build left in `dist/`, not the sources under test. A type error stops the run here.
 */
export default function buildFirst(): void {
  const root = __dirname;
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b'], {
    cwd: root,
    stdio: 'inherit',
  });
}
