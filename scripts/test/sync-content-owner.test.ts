import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main, refuseRootOverOwner } from '../src/sync-content';

// Run as root into the classroom server's media folder, sync-content would leave root's files there, which
// the server (running as its own user) then cannot replace: a later restore or sync fails with EACCES.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-sync-owner-'));
const owned = path.join(tmp, 'data');
fs.mkdirSync(owned);
const asRoot = process.getuid?.() === 0;
// Another user's folder: as root, hand it to nobody; otherwise it is this (non-root) user's already.
if (asRoot) fs.chownSync(owned, 65534, 65534);
const ownerUid = fs.statSync(owned).uid;

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('sync-content run as root into a folder of another user', () => {
  it('is refused, naming the owner and the box command, for the folder and a media folder not made yet', () => {
    for (const dir of [owned, path.join(owned, 'media')]) {
      expect(() => refuseRootOverOwner(dir, 0)).toThrow(
        new RegExp(`^${owned} belongs to uid ${ownerUid}, not root: .*lms-classroom sync-content$`),
      );
    }
  });

  it('goes on as root into root\'s own folder, and as the folder\'s owner', () => {
    expect(() => refuseRootOverOwner(path.join(owned, 'media'), ownerUid)).not.toThrow();
    if (asRoot) expect(() => refuseRootOverOwner(path.join(tmp, 'media'), 0)).not.toThrow();
  });

  it.runIf(asRoot)('the command line exits 1 before reading anything', async () => {
    let err = '';
    const args = ['--file', path.join(tmp, 'missing.zip'), '--media-dir', path.join(owned, 'media')];
    const code = await main(args, {}, (t) => {
      err += t;
    });
    expect(code).toBe(1);
    expect(err).toMatch(/belongs to uid 65534, not root/);
    expect(fs.existsSync(path.join(owned, 'media'))).toBe(false);
  });
});
