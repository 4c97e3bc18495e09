import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Knex } from '@lms/db';
import { deferCheckpoint } from '../src/areas/log/store';
import { testDatabase } from './helpers';

describe('WAL checkpoint after an import', () => {
  it('is off during the import transaction and restored (after a checkpoint off ' +
      'this thread) once it ends', async () => {
    const tdb = await testDatabase();
    try {
      const sqlite = tdb.db.client.dialect !== 'postgresql';
      const setting = async (db: Knex = tdb.db) => {
        if (!sqlite) return null;
        const rows = (await db.raw('PRAGMA wal_autocheckpoint')) as Array<{ wal_autocheckpoint: number }>;
        return rows[0].wal_autocheckpoint;
      };
      const before = await setting();
      let during: number | null = -1;
      let release: () => void = () => undefined;
      await tdb.db.transaction(async (trx) => {
        release = await deferCheckpoint(trx);
        await trx('syncs').insert({
          syncid: crypto.randomUUID(),
          filename: 'x.zip',
          type: 1,
          offlineonline: false,
          created_by: 'u',
          created_at: new Date(),
        });
        during = await setting(trx);
      });
      release();
      let after = await setting();
      for (let i = 0; i < 100 && after !== before; i += 1) {
        await new Promise((r) => setTimeout(r, 20));
        after = await setting();
      }
      if (sqlite) {
        expect(before).toBe(1000);
        expect(during).toBe(0);
      } else expect(during).toBeNull();
      expect(after).toBe(before);
      expect(await tdb.db('syncs').count({ n: '*' })).toEqual([{ n: 1 }]);
    } finally {
      await tdb.dispose();
    }
  });
});
