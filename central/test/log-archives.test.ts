import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex, TestDatabase } from '@lms/db';
import { claimArchiveName, holdArchiveClaim, settleArchiveClaim, sweepArchives } from '../src/areas/log/archives';
import { spoolPrefix, sweepSpool } from '../src/http/spool';
import { createFolderStore, isObjectNotFound, type ObjectStore } from '../src/objects';
import { silentLogger, testDatabase } from './helpers';

const isPg = !!process.env.TEST_DATABASE_URL;

describe('log archive names and the orphan sweep', () => {
  let tdb: TestDatabase;
  let db: Knex;
  let objects: ObjectStore;
  let dir: string;

  beforeAll(async () => {
    tdb = await testDatabase();
    db = tdb.db;
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-archives-'));
    objects = createFolderStore({ dir: path.join(dir, 'objects') });
  });
  afterAll(async () => {
    await tdb.dispose();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const exists = (key: string) =>
    objects.stat(key).then(
      () => true,
      (err: unknown) => (isObjectNotFound(err) ? false : Promise.reject(err)),
    );
  const age = (archive: string, ms: number) =>
    db('logarchives')
      .where({ archive })
      .update({ claimed_at: new Date(Date.now() - ms) });

  it('a name another instance claimed in the same millisecond moves to the next one, ' +
      'keeping the contract shape', async () => {
    const at = Date.now() + 3_600_000;
    // What another instance would have claimed: its process counter is not ours, only the table is shared.
    await db('logarchives').insert({ archive: `logupload-${at}.zip`, claimed_at: new Date() });
    await db('logarchives').insert({ archive: `logupload-${at + 1}.zip`, claimed_at: new Date() });
    const names = await Promise.all([claimArchiveName(db, at), claimArchiveName(db, at), claimArchiveName(db, at)]);
    expect(names.every((n) => /^logupload-\d{13}\.zip$/.test(n))).toBe(true);
    expect(new Set(names).size).toBe(3);
    expect(names).not.toContain(`logupload-${at}.zip`);
    expect(names).not.toContain(`logupload-${at + 1}.zip`);
    expect(names.sort()[0]).toBe(`logupload-${at + 2}.zip`);
  });

  it('the sweep removes the archive of an import that never committed, after the grace period only', async () => {
    const orphan = await claimArchiveName(db);
    await objects.put(orphan, 'zip bytes');
    const settled = await claimArchiveName(db);
    await objects.put(settled, 'zip bytes');
    await db.transaction(async (trx) => settleArchiveClaim(trx, settled));
    const fresh = await claimArchiveName(db);
    await objects.put(fresh, 'zip bytes');
    await age(orphan, 120_000);
    await age(settled, 120_000);

    const removed = await sweepArchives({ db, objects, logger: silentLogger }, 60_000);
    expect(removed).toContain(orphan);
    expect(removed).not.toContain(settled);
    expect(removed).not.toContain(fresh);
    expect(await exists(orphan)).toBe(false);
    expect(await exists(settled)).toBe(true);
    expect(await exists(fresh)).toBe(true);
    expect(await db('logarchives').where({ archive: orphan }).first()).toBeUndefined();
    expect(await db('logarchives').where({ archive: settled }).first()).toBeTruthy();
  });

  it.skipIf(!isPg)(
    'the sweep skips an old claim whose import is still running on another connection (PostgreSQL)',
    async () => {
      const running = await claimArchiveName(db);
      await objects.put(running, 'zip bytes');
      await age(running, 120_000);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const importing = db.transaction(async (trx) => {
        await holdArchiveClaim(trx, running);
        locked();
        await held;
        await settleArchiveClaim(trx, running);
      });
      await isLocked;
      const removed = await sweepArchives({ db, objects, logger: silentLogger }, 60_000);
      expect(removed).not.toContain(running);
      expect(await exists(running)).toBe(true);
      release();
      await importing;
      expect((await db('logarchives').where({ archive: running }).first())?.settled_at).toBeTruthy();
    },
  );

  it('an import whose claim was swept meanwhile refuses to go on', async () => {
    const lapsed = await claimArchiveName(db);
    await age(lapsed, 120_000);
    await sweepArchives({ db, objects, logger: silentLogger }, 60_000);
    await expect(db.transaction((trx) => holdArchiveClaim(trx, lapsed))).rejects.toThrow(/lapsed/);
  });

  it('the spool sweep removes the temporary files of a process that is gone, never those of a live one', async () => {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-spool-'));
    // pid 2^22+1 is above Linux's pid_max: no such process.
    const dead = path.join(tmp, 'lms-logimport-4194305.12345-abc');
    const deadObject = path.join(tmp, 'lms-object-4194305.12345-0b1c');
    const mine = path.join(tmp, path.basename(spoolPrefix('logimport')) + 'xyz');
    const reused = path.join(tmp, `lms-logimport-${process.pid}.1-old`); // our pid, another start time
    const other = path.join(tmp, 'lms-logimport-abc'); // not one of ours
    for (const d of [dead, mine, reused, other]) fs.mkdirSync(d);
    fs.writeFileSync(deadObject, 'x');
    const removed = await sweepSpool(tmp);
    expect(removed.sort()).toEqual([path.basename(dead), path.basename(deadObject), path.basename(reused)].sort());
    expect(fs.existsSync(mine)).toBe(true);
    expect(fs.existsSync(other)).toBe(true);
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it("the folder store's partial writes of a process that is gone are swept, a live put's are not", async () => {
    const tmpDir = path.join(dir, 'objects', '.tmp');
    await fsp.mkdir(tmpDir, { recursive: true });
    fs.writeFileSync(path.join(tmpDir, '4194305.12345-0f0e.json'), '{}');
    fs.writeFileSync(path.join(tmpDir, '4194305.12345-0f0f'), 'half an archive');
    // A put in progress in this process: its temporary file stays while the sweep runs.
    const body = new (await import('node:stream')).PassThrough();
    body.write('first bytes');
    const putting = objects.put('logupload-1.zip', body);
    await new Promise((r) => setTimeout(r, 50));
    const removed = await objects.sweepTemporary!();
    expect(removed.sort()).toEqual(['4194305.12345-0f0e.json', '4194305.12345-0f0f']);
    const live = fs.readdirSync(tmpDir);
    expect(live.length).toBe(1);
    body.end('last bytes');
    await putting;
    expect(fs.readdirSync(tmpDir)).toEqual([]);
    expect((await objects.stat('logupload-1.zip')).size).toBe('first byteslast bytes'.length);
  });
});
