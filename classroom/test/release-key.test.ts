import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyFingerprints } from '../src/fleet/release';

// The box checks a release repository's key against the fingerprint central named before apt may trust it:
// the fingerprint it computes must be the one GnuPG gives the same key, armoured or not.

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-gpg-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));
const gpg = (...args: string[]) => execFileSync('gpg', ['--homedir', home, '--batch', '--quiet', ...args]);

function newKey(name: string): string {
  gpg('--pinentry-mode', 'loopback', '--passphrase', '', '--quick-gen-key', name, 'ed25519', 'sign', 'never');
  const colons = gpg('--with-colons', '--list-keys', name).toString();
  return colons.split('\n').find((l) => l.startsWith('fpr:'))!.split(':')[9];
}

describe('release key fingerprints', () => {
  it('match GnuPG\'s for a binary and an armoured export, and differ between keys', () => {
    const a = newKey('LMS box releases <releases@lms.test>');
    const b = newKey('Someone else <other@lms.test>');
    expect(a).toMatch(/^[0-9A-F]{40}$/);
    expect(keyFingerprints(gpg('--export', a))).toEqual([a]);
    expect(keyFingerprints(gpg('--armor', '--export', a))).toEqual([a]);
    expect(keyFingerprints(gpg('--export', b))).toEqual([b]);
    expect(a).not.toBe(b);
    expect(() => keyFingerprints(Buffer.from('not a key'))).toThrow();
  });
});
