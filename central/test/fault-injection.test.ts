import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import knexFactory from 'knex';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO, seedDemoContent, type Knex, type TestDatabase } from '@lms/db';
import { streamToBuffer, writeLogZipFromDocument, type LogDocument } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db';
import { createObjectStore, type ObjectStore } from '../src/objects';
import { createSchoolUser, schoolLogin } from './accounts';
import { silentLogger, testDatabase } from './helpers';

const TABLES = ['syncs', 'logfiles', 'studentactives', 'studentprogress', 'rpiuseraccess', 'logimportpending'];
const isPg = !!process.env.TEST_DATABASE_URL;

/** A log of `n` activity rows of one learner: large enough that the import is still writing when a fault comes. */
function bigLog(studentid: string, schooluserid: string, n: number): LogDocument {
  const at = new Date('2026-08-20T05:00:00Z').getTime();
  return {
    log: {
      result: [
        {
          studentprogressid: crypto.randomUUID(),
          studentid,
          ispass: true,
          studentprogressreferenceid: DEMO.lessonid,
          starttime: new Date(at).toISOString(),
          endtime: new Date(at + 60_000).toISOString(),
          progresstype: 2,
          resultpercentage: 80,
          marks: 4,
          points: 40,
          scores: 2,
          fullpoints: 50,
        },
      ],
      progress: {
        studentlearningprogress: [],
        studentgradesprogress: [],
        studentlevelsprogress: [],
        studentlessonsprogress: [],
        studentpoints: [],
        studentappusages: [],
        studentactives: Array.from({ length: n }, (_, i) => ({
          studentactiveid: crypto.randomUUID(),
          studentid,
          referenceid: DEMO.lessonid,
          referencetype: 3,
          created_at: new Date(at + i * 1000).toISOString(),
        })),
      },
      access: [
        {
          rpiuseraccessid: crypto.randomUUID(),
          userid: schooluserid,
          logintime: new Date(at).toISOString(),
          logouttime: null,
          timespent: '0',
          status: 1,
          ipaddress: '10.0.0.5',
        },
      ],
    },
  } as unknown as LogDocument;
}

async function counts(db: Knex): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of TABLES) out[t] = Number((await db(t).count({ n: '*' }).first())?.n ?? 0);
  return out;
}

describe('log import under faults: a clear error, nothing left behind, and the next import works', () => {
  let tdb: TestDatabase;
  let db: Knex;
  let objects: ObjectStore;
  let objectDir: string;
  let zip: Buffer;
  let auth: string;
  let app: ReturnType<typeof createApp>;
  const empty = Object.fromEntries(TABLES.map((t) => [t, 0]));

  beforeAll(async () => {
    tdb = await testDatabase();
    db = tdb.db;
    await seedDemoContent(db);
    objectDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-faults-'));
    objects = createObjectStore({ kind: 'folder', dir: objectDir });
    const teacherid = await createSchoolUser(db, {
      schoolusername: 'fault.teacher',
      role: 3,
      schoolname: DEMO.schoolname,
    });
    const schooluserid = crypto.randomUUID();
    await db('schoolusers').insert({
      schooluserid,
      schoolusername: 'fault.learner',
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
      schoolname: DEMO.schoolname,
    });
    const studentid = crypto.randomUUID();
    await db('students').insert({
      studentid,
      studentfirstname: 'F',
      genderid: 1,
      city: 'C',
      country: 'X',
      state: 'S',
      curriculumid: DEMO.curriculumid,
      schooluserid,
      schoolname: DEMO.schoolname,
    });
    zip = await streamToBuffer(writeLogZipFromDocument(bigLog(studentid, schooluserid, 5000), []));
    app = createApp(
      loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url, LOG_IMPORT_ENABLED: 'true', RATE_LIMIT_MAX: '100000' }),
      { db, logger: silentLogger, objects },
    );
    auth = `Bearer ${(await schoolLogin(app, 'fault.teacher')).accessToken}`;
    expect(teacherid).toBeTruthy();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await tdb.dispose();
    fs.rmSync(objectDir, { recursive: true, force: true });
  });

  const upload = (a: ReturnType<typeof createApp> = app) =>
    request(a).put('/log/import').set('Authorization', auth).attach('importfile', zip, 'studentlog');

  async function expectUntouchedThenRecovers(): Promise<void> {
    expect(await counts(db)).toEqual(empty);
    expect(await objects.list()).toEqual([]);
    const ok = await upload();
    expect(ok.status).toBe(200);
    expect((await counts(db)).studentactives).toBe(5000);
    // Leave the next case a clean slate.
    for (const t of TABLES) await db(t).del();
    for (const o of await objects.list()) await objects.delete(o.key);
  }

  it('the temporary disk fills up while the upload is received: 507', async () => {
    const real = fs.createWriteStream.bind(fs);
    vi.spyOn(fs, 'createWriteStream').mockImplementation(((file: fs.PathLike, options?: unknown) => {
      if (!String(file).includes('lms-logimport-')) return real(file, options as never);
      let written = 0;
      return new Writable({
        write(chunk: Buffer, _enc, cb) {
          written += chunk.length;
          if (written > 16 * 1024)
            cb(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
          else cb();
        },
      });
    }) as typeof fs.createWriteStream);
    const res = await upload();
    expect(res.status).toBe(507);
    expect(res.body).toMatchObject({ error: true, data: false });
    vi.restoreAllMocks();
    await expectUntouchedThenRecovers();
  });

  it('the object store fails while the rows are written: 400, and the rows are rolled back', async () => {
    vi.spyOn(objects, 'put').mockRejectedValueOnce(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' }),
    );
    const res = await upload();
    // An outage, not the file's fault: the contract's 400 envelope, saying so, with Retry-After.
    expect([res.status, res.body.errormessage]).toEqual([
      400,
      'Invalid File (the object store is unavailable, please try again later)',
    ]);
    expect(res.headers['retry-after']).toBe('30');
    await expectUntouchedThenRecovers();
  });

  it.skipIf(!isPg)('the database connection is killed in the middle of the import (PostgreSQL)', async () => {
    // The app's own pool, with a name the test can find among the server's sessions.
    const name = `lms_fault_${crypto.randomBytes(4).toString('hex')}`;
    const url = new URL(tdb.url);
    url.searchParams.set('application_name', name);
    const appDb = openDatabase(url.toString());
    const admin = knexFactory({ client: 'pg', connection: process.env.TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
    try {
      const faulty = createApp(
        loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url, LOG_IMPORT_ENABLED: 'true', RATE_LIMIT_MAX: '100000' }),
        { db: appDb, logger: silentLogger, objects },
      );
      await admin.raw('select 1');
      let killed: Promise<unknown> | undefined;
      let signal!: (p: Promise<unknown>) => void;
      const killedOnce = new Promise<unknown>((resolve) => { signal = (p) => resolve(p); });
      appDb.on('query', (q: { sql: string }) => {
        // The sync row is the import's first write: its transaction is open and the rows follow.
        if (!killed && /insert into "syncs"/i.test(q.sql)) {
          // A Knex query runs each time it is awaited: run it once, here.
          killed = Promise.resolve(
            admin.raw('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?', [name]),
          );
          signal(killed);
        }
      });
      // The import commits only once its archive is stored: holding the store until the kill has landed
      // makes sure the connection dies while the transaction is still open.
      const realPut = objects.put.bind(objects);
      vi.spyOn(objects, 'put').mockImplementation(async (...args: Parameters<ObjectStore['put']>) => {
        await killedOnce;
        return realPut(...args);
      });
      const res = await upload(faulty);
      vi.restoreAllMocks();
      expect(killed).toBeDefined();
      const terminated = (await killed) as { rows: Array<{ pg_terminate_backend: boolean }> };
      expect(terminated.rows.some((r) => r.pg_terminate_backend)).toBe(true);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: true,
        errormessage: 'Invalid File (the database is unavailable, please try again later)',
        data: false,
      });
      expect(res.headers['retry-after']).toBe('30');
      expect(JSON.stringify(res.body)).not.toMatch(/terminat|administrator/i);
      // The same pool serves the next import.
      expect(await counts(db)).toEqual(empty);
      expect(await objects.list()).toEqual([]);
      const again = await upload(faulty);
      expect(again.status).toBe(200);
      for (const t of TABLES) await db(t).del();
      for (const o of await objects.list()) await objects.delete(o.key);
    } finally {
      await appDb.destroy();
      await admin.destroy();
    }
  });
});
