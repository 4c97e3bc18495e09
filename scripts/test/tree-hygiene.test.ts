import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@lms/db';

// What a merge or a patch leaves behind must not be committed: its backup and reject files, an editor's
// backup, and the conflict markers of a merge resolved in haste.

/** Files a merge tool, `patch` or an editor leaves next to the real one. */
const LEFTOVER = /(\.orig|\.rej|~)$/;
// Written so that this file holds no marker line itself.
const MARKERS = ['<'.repeat(7), '>'.repeat(7)];
const SEPARATOR = '='.repeat(7);

/** The first conflict marker of a text, as `line N: …`, or undefined. Binary files (a NUL byte) are skipped. */
export function conflictMarker(text: string): string | undefined {
  if (text.includes('\0')) return undefined;
  const lines = text.split(/\r?\n/);
  const opens = lines.some((l) => l.startsWith(`${MARKERS[0]} `) || l === MARKERS[0]);
  for (let i = 0; i < lines.length; i += 1) {
    const l = lines[i];
    const marker = MARKERS.some((m) => l === m || l.startsWith(`${m} `));
    // A line of seven '=' alone is a conflict's middle only where a conflict opens (Markdown may underline so).
    if (marker || (opens && l === SEPARATOR)) return `line ${i + 1}: ${l.slice(0, 60)}`;
  }
  return undefined;
}

/** Each problem of a tree: a leftover file by name, or a tracked text file holding a conflict marker. */
export function hygieneProblems(files: string[], read: (file: string) => string): string[] {
  const problems: string[] = [];
  for (const file of files) {
    if (LEFTOVER.test(file)) {
      problems.push(`${file}: a merge, patch or editor leftover`);
      continue;
    }
    const marker = conflictMarker(read(file));
    if (marker) problems.push(`${file}: conflict marker at ${marker}`);
  }
  return problems;
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
  return out.toString('utf8').split('\0').filter(Boolean);
}

const readTracked = (file: string): string => {
  const full = path.join(repoRoot, file);
  // A tracked file deleted in the working tree, or a link to a folder, holds no text to look at.
  const stat = fs.lstatSync(full, { throwIfNoEntry: false });
  if (!stat?.isFile() || stat.size > 5 * 1024 * 1024) return '';
  return fs.readFileSync(full, 'utf8');
};

describe('tree hygiene', () => {
  it('no tracked *.orig, *.rej or *~ file, and no conflict marker in a tracked text file', () => {
    const files = trackedFiles();
    expect(files.length).toBeGreaterThan(100);
    expect(hygieneProblems(files, readTracked)).toEqual([]);
  });

  it('names each kind of leftover and a conflict, and leaves Markdown underlines alone', () => {
    const texts: Record<string, string> = {
      'docs/a.md.orig': '',
      'central/src/x.ts.rej': '',
      'README.md~': '',
      'docs/ok.md': `Title\n${SEPARATOR}\n\ntext\n`,
      'docs/merged.md': `one\n${MARKERS[0]} HEAD\nmine\n${SEPARATOR}\ntheirs\n${MARKERS[1]} branch\n`,
      'shared/src/half.ts': `const a = 1;\n${MARKERS[1]} wip\n`,
      'shared/web/static/logo.png': `\0${MARKERS[0]} \n`,
    };
    expect(hygieneProblems(Object.keys(texts), (f) => texts[f])).toEqual([
      'docs/a.md.orig: a merge, patch or editor leftover',
      'central/src/x.ts.rej: a merge, patch or editor leftover',
      'README.md~: a merge, patch or editor leftover',
      `docs/merged.md: conflict marker at line 2: ${MARKERS[0]} HEAD`,
      `shared/src/half.ts: conflict marker at line 2: ${MARKERS[1]} wip`,
    ]);
  });
});
