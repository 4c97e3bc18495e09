import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@lms/db';

// The documents an operator, an organisation, a box installer and a contributor follow link into each other;
// a page moved or a heading renamed must not leave a link that leads nowhere.
const documents = (): string[] => [
  'README.md',
  'deploy/README.md',
  ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
];

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown, false)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = m[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** Lines outside fenced code blocks; with blankCode, inline code spans blanked out (a link there is not a link). */
function proseLines(markdown: string, blankCode = true): string[] {
  const out: string[] = [];
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      continue;
    }
    if (!fence) out.push(blankCode ? line.replace(/`[^`]*`/g, '``') : line);
  }
  return out;
}

function brokenLinks(root: string, files: string[]): string[] {
  const broken: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let a = anchorsOf.get(file);
    if (!a) anchorsOf.set(file, (a = headingAnchors(fs.readFileSync(file, 'utf8'))));
    return a;
  };
  for (const rel of files) {
    const file = path.join(root, rel);
    proseLines(fs.readFileSync(file, 'utf8')).forEach((line) => {
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, file:
        const [p, anchor] = target.split('#', 2);
        const dest = p ? path.resolve(path.dirname(file), decodeURIComponent(p)) : file;
        if (!fs.existsSync(dest)) {
          broken.push(`${rel}: ${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && dest.endsWith('.md') && !anchors(dest).has(anchor)) {
          broken.push(`${rel}: ${target}: no heading with that anchor in ${path.relative(root, dest)}`);
        }
      }
    });
  }
  return broken;
}

describe('links between the documents', () => {
  it('computes the anchors GitHub gives headings', () => {
    const a = headingAnchors([
      '# Moving from an existing deployment',
      '## Activity-log sync: `PUT /log/import` and `npm run sync-log`',
      "### The teacher's pages",
      '```sh',
      '# not a heading',
      '```',
      '## Notes',
      '## Notes',
    ].join('\n'));
    expect([...a]).toEqual([
      'moving-from-an-existing-deployment',
      'activity-log-sync-put-logimport-and-npm-run-sync-log',
      'the-teachers-pages',
      'notes',
      'notes-1',
    ]);
  });

  it('finds a link to a missing file and to a missing heading', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-links-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.md'), '# A\n\n## Here\n\n[ok](#here) [ok](b.md#b) [bad](#gone) [bad](c.md)\n'
        + '`[code](nowhere.md)`\n');
      fs.writeFileSync(path.join(dir, 'b.md'), '# B\n\n[bad](a.md#there) ![bad](pic.png)\n');
      expect(brokenLinks(dir, ['a.md', 'b.md'])).toEqual([
        'a.md: #gone: no heading with that anchor in a.md',
        'a.md: c.md: no such file',
        'b.md: a.md#there: no heading with that anchor in a.md',
        'b.md: pic.png: no such file',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every relative link and anchor in README.md, deploy/README.md and docs/ resolves', () => {
    expect(brokenLinks(repoRoot, documents())).toEqual([]);
  });
});
