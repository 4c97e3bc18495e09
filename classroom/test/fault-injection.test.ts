import crypto from 'node:crypto';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import knexFactory from 'knex';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONTENT_KEYS, streamToBuffer, writeContentZip, type ContentKey } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db';
import { makeApp, silentLogger, type TestApp } from './helpers';

const isPg = !!process.env.TEST_DATABASE_URL;
const SECRETS = { SERVER_SYNC_KEY: 'sk_faults_0123456789', JWT_SECRET: 'jwt_faults_0123456789' };

/** A package of subjects and countries only (every other key empty). */
function pkg(n: number): Record<ContentKey, unknown[]> {
  const p = Object.fromEntries(Object.keys(CONTENT_KEYS).map((k) => [k, []])) as
    unknown as Record<ContentKey, unknown[]>;
  p.subjects = Array.from({ length: n }, (_, i) => ({
    subjectid: crypto.randomUUID(),
    subjectname: `Subject ${i}`,
    subjectstatus: true,
    isdeleted: false,
  }));
  p.countries = [{ countryid: crypto.randomUUID(), countryname: 'Faultland', expectedusage: 1, isdeleted: false }];
  return p;
}

describe('PUT /import/master under faults: a clear error, the previous content kept, and the next import works', () => {
  let t: TestApp;
  let first: Buffer;
  let second: Buffer;
  beforeAll(async () => {
    t = await makeApp(SECRETS);
    first = await streamToBuffer(writeContentZip(pkg(3)));
    second = await streamToBuffer(writeContentZip(pkg(5)));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await t.tdb.dispose();
  });

  const put = (app: TestApp['app'], zip: Buffer) =>
    request(app)
      .put('/import/master')
      .set('Authorization', t.config.serverSyncKey)
      .attach('importfile', zip, 'content.zip');
  const subjects = async () => (await t.tdb.db('subjects').orderBy('subjectname').pluck('subjectname')) as string[];

  it('the temporary disk fills up while the package is received: 507', async () => {
    expect((await put(t.app, first)).status).toBe(200);
    const before = await subjects();
    const real = fs.createWriteStream.bind(fs);
    vi.spyOn(fs, 'createWriteStream').mockImplementation(((file: fs.PathLike, options?: unknown) => {
      if (!String(file).includes('lms-upload-')) return real(file, options as never);
      return new Writable({
        write(_c, _e, cb) {
          cb(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
        },
      });
    }) as typeof fs.createWriteStream);
    const res = await put(t.app, second);
    expect(res.status).toBe(507);
    expect(res.body).toMatchObject({ error: true, data: false });
    vi.restoreAllMocks();
    expect(await subjects()).toEqual(before);
    expect((await put(t.app, second)).status).toBe(200);
    expect(await subjects()).toHaveLength(5);
  });

  it.skipIf(!isPg)('the database connection is killed in the middle of the import (PostgreSQL)', async () => {
    expect((await put(t.app, first)).status).toBe(200);
    const before = await subjects();
    const name = `lms_fault_${crypto.randomBytes(4).toString('hex')}`;
    const url = new URL(t.tdb.url);
    url.searchParams.set('application_name', name);
    const appDb = openDatabase(url.toString());
    const admin = knexFactory({
      client: 'pg',
      connection: url.toString().replace(name, `${name}_admin`),
      pool: { min: 1, max: 2 },
    });
    const app = createApp(loadConfig({ NODE_ENV: 'test', DATABASE_URL: t.tdb.url, ...SECRETS }), {
      db: appDb,
      logger: silentLogger,
    });
    try {
      // The import blocks on a lock the test holds, after it has already emptied and refilled earlier tables;
      // its connection is killed while it waits, then the lock is let go.
      const holding = await admin.transaction();
      await holding.raw('lock table subjects in access exclusive mode');
      const answer = put(app, second).then((r) => r);
      let waiting = false;
      for (let i = 0; i < 200 && !waiting; i += 1) {
        const r = await admin.raw(
          "select 1 from pg_stat_activity where application_name = ? and wait_event_type = 'Lock'",
          [name],
        );
        waiting = r.rows.length > 0;
        if (!waiting) await new Promise((res) => setTimeout(res, 25));
      }
      expect(waiting).toBe(true);
      const killed = await admin.raw(
        'select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = ?',
        [name],
      );
      expect(killed.rows.some((r: { done: boolean }) => r.done)).toBe(true);
      await holding.rollback();
      const res = await answer;
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.body).toMatchObject({ error: true, data: false });
      expect(JSON.stringify(res.body)).not.toMatch(/terminat|administrator/i);
      expect(await subjects()).toEqual(before);
      // The same pool serves the next import.
      expect((await put(app, second)).status).toBe(200);
      expect(await subjects()).toHaveLength(5);
    } finally {
      await appDb.destroy();
      await admin.destroy();
    }
  });
});
