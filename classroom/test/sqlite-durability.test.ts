import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db';

// A power cut loses what the box's operating system had not written. Only synchronous=FULL (2) syncs the
// WAL at every commit, so that an acknowledged result is on the card; the kill tests cannot tell it from
// OFF or NORMAL (a killed process leaves the page cache to be written), so the setting is read here from
// the connection the server itself opens (server.ts: openDatabase), and scripts/box/vm-power-cut.sh cuts a
// virtual machine's power.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-durability-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the classroom database connection', () => {
  it('runs with journal_mode=WAL and synchronous=FULL on a file', async () => {
    const db = openDatabase(`sqlite:${path.join(tmp, 'classroom.sqlite')}`);
    try {
      const read = async (pragma: string) =>
        Object.values((await db.raw(`PRAGMA ${pragma}`) as Array<Record<string, unknown>>)[0])[0];
      expect(await read('journal_mode')).toBe('wal');
      expect(await read('synchronous')).toBe(2);
    } finally {
      await db.destroy();
    }
  });
});
