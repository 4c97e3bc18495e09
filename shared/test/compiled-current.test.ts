import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

const root = path.resolve(__dirname, '..', '..');

// Child-process tests and the log reader's worker thread run `dist/`: it must be the build of these sources.
it('the compiled output the tests run is the build of the current sources', () => {
  const dry = execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', '--dry'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(dry.split('\n').filter((l) => /would build project/.test(l))).toEqual([]);
});
