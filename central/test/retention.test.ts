import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent, type Knex, type TestDatabase } from '@lms/db';
import { PROGRESS_KEYS, writeLogZipFromDocument, type LogDocument } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createFolderStore, isObjectNotFound, type ObjectStore } from '../src/objects';
import { SIGNIN_TABLES, expiredSignIns, startRetentionSweep, sweepRetention, sweepSignIns } from '../src/retention';
import { sweepExpiredArchives } from '../src/areas/log/archives';
import { createSchoolUser, createStaff, schoolLogin, staffLogin } from './accounts';
import { silentLogger, testDatabase } from './helpers';

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);
/** An import's archive as stored, and after the sweep: the `syncs` row (the sync-status report's) stays. */
const KEPT = { object: true, archiveRow: true, textLogRows: 1, claim: true, sync: true };
const GONE = { object: false, archiveRow: false, textLogRows: 0, claim: false, sync: true };

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('retention settings', () => {
  it('default to 0 (keep for ever) and take only non-negative whole numbers of days', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).retention).toEqual({ logArchiveDays: 0, signInDays: 0 });
    const c = loadConfig({ NODE_ENV: 'test', LOG_ARCHIVE_RETENTION_DAYS: '90', SIGNIN_RETENTION_DAYS: '400' });
    expect(c.retention).toEqual({ logArchiveDays: 90, signInDays: 400 });
    for (const bad of ['-1', '1.5', 'ninety']) {
      for (const name of ['LOG_ARCHIVE_RETENTION_DAYS', 'SIGNIN_RETENTION_DAYS']) {
        expect(() => loadConfig({ NODE_ENV: 'test', [name]: bad })).toThrow(new RegExp(name));
      }
    }
  });
});

describe('retention of stored log archives and sign-in rows', () => {
  let tdb: TestDatabase;
  let db: Knex;
  let dir: string;
  let objects: ObjectStore;
  let app: ReturnType<typeof createApp>;
  let teacherToken: string;
  let teacherid: string;
  let studentid: string;
  const deps = () => ({ db, objects, logger: silentLogger });

  const exists = (key: string) =>
    objects.stat(key).then(() => true, (err: unknown) => (isObjectNotFound(err) ? false : Promise.reject(err)));

  /** One log through PUT /log/import: a result of the learner, a sign-in of the teacher, a text log. */
  async function importLog(): Promise<{ archive: string; studentprogressid: string; rpiuseraccessid: string }> {
    const studentprogressid = crypto.randomUUID();
    const rpiuseraccessid = crypto.randomUUID();
    const doc = {
      log: {
        result: [{
          studentprogressid, studentid, ispass: true, studentprogressreferenceid: DEMO.lessonid,
          starttime: '2026-08-20T05:12:19.000Z', endtime: '2026-08-20T05:14:00.000Z', progresstype: 2,
          resultpercentage: 80, marks: 4, points: 40, scores: 2, fullpoints: 50, studentprogressquestions: [],
        }],
        progress: Object.fromEntries(PROGRESS_KEYS.map((k) => [k, []])),
        access: [{
          rpiuseraccessid, userid: teacherid, logintime: new Date().toISOString(), logouttime: null, timespent: '0',
          status: 1, ipaddress: '10.0.0.2',
        }],
      },
    } as unknown as LogDocument;
    const zip = await readAll(writeLogZipFromDocument(doc, [{ name: 'RPI-API-info-2026-08-20.log', content: '{}\n' }]));
    const res = await request(app).put('/log/import').set('Authorization', `Bearer ${teacherToken}`)
      .attach('importfile', zip, 'studentlog');
    expect(res.status).toBe(200);
    const summary = JSON.parse(String(res.headers['x-log-import'])) as { archive: string };
    return { archive: summary.archive, studentprogressid, rpiuseraccessid };
  }

  /** Dates an import's archive `days` back, as if it had been uploaded then. */
  async function age(archive: string, days: number): Promise<void> {
    const at = daysAgo(days);
    await db('logfiles').where({ logfilename: archive, type: 2 }).update({ created_at: at });
    await db('logarchives').where({ archive }).update({ claimed_at: at, settled_at: at });
  }

  async function stored(archive: string) {
    const row = await db('logfiles').where({ logfilename: archive, type: 2 }).first('logfileid');
    const textLogs = row && (await db('logfiles').where({ parentfileid: row.logfileid }).count({ n: '*' }).first());
    return {
      object: await exists(archive),
      archiveRow: !!row,
      textLogRows: textLogs ? Number(textLogs.n) : 0,
      claim: !!(await db('logarchives').where({ archive }).first('archive')),
      sync: !!(await db('syncs').where({ filename: archive }).first('syncid')),
    };
  }

  beforeAll(async () => {
    tdb = await testDatabase();
    db = tdb.db;
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-retention-'));
    objects = createFolderStore({ dir: path.join(dir, 'objects') });
    const env = { NODE_ENV: 'test', DATABASE_URL: tdb.url, LOG_IMPORT_ENABLED: 'true', RATE_LIMIT_MAX: '100000' };
    app = createApp(loadConfig(env), { db, logger: silentLogger, objects });
    await seedDemoContent(db);
    teacherid = await createSchoolUser(db, { schoolusername: 'teacher1', role: 3, schoolname: DEMO.schoolname });
    const schooluserid = crypto.randomUUID();
    await db('schoolusers').insert({
      schooluserid, schoolusername: 'learner1', schooluserpasswordhash: 'x', schooluserrole: 4,
      schoolname: DEMO.schoolname,
    });
    studentid = crypto.randomUUID();
    await db('students').insert({
      studentid, studentfirstname: 'learner1', genderid: 1, city: 'C', country: 'X', state: 'S',
      curriculumid: DEMO.curriculumid, schooluserid, schoolname: DEMO.schoolname,
    });
    teacherToken = (await schoolLogin(app, 'teacher1')).accessToken;
  });
  afterAll(async () => {
    await tdb.dispose();
    await fsp.rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    // Nothing older than a day from an earlier test decides what the next one sweeps.
    const archives = (await db('logfiles').where({ type: 2 }).pluck('logfilename')) as string[];
    for (const archive of archives) await age(archive, 1);
  });

  it('deletes archives older than the bound (object, rows), keeps newer ones and every imported row', async () => {
    const old = await importLog();
    const recent = await importLog();
    await age(old.archive, 40);
    await age(recent.archive, 20);
    expect(await stored(old.archive)).toEqual(KEPT);

    const counted: Array<[string, number]> = [];
    await sweepRetention(deps(), { logArchiveDays: 30, signInDays: 0 }, (what, n) => counted.push([what, n]));

    expect(await stored(old.archive)).toEqual(GONE);
    expect(await stored(recent.archive)).toEqual(KEPT);
    expect(counted).toEqual([['logarchive', 1]]);
    // What the import wrote stays: the learner's result and the teacher's sign-in of the old log.
    const result = await db('studentprogress').where({ studentprogressid: old.studentprogressid }).first('studentid');
    expect(result).toEqual({ studentid });
    const signIn = await db('rpiuseraccess').where({ rpiuseraccessid: old.rpiuseraccessid }).first('userid');
    expect(signIn).toEqual({ userid: teacherid });
  });

  it('0 keeps everything: no sweep is started, and a pass with both settings at 0 deletes nothing', async () => {
    const old = await importLog();
    await age(old.archive, 4000);
    await db('lmsuseraccess').insert({
      useraccessid: crypto.randomUUID(), userid: 'u-ancient', logintime: daysAgo(4000), ipaddress: '10.0.0.1',
    });
    expect(startRetentionSweep(deps(), { logArchiveDays: 0, signInDays: 0 })).toBeUndefined();
    await sweepRetention(deps(), { logArchiveDays: 0, signInDays: 0 });
    expect(await stored(old.archive)).toEqual(KEPT);
    expect(await db('lmsuseraccess').where({ userid: 'u-ancient' }).first('userid')).toEqual({ userid: 'u-ancient' });
    await db('lmsuseraccess').where({ userid: 'u-ancient' }).delete();
  });

  it('two sweeps at once delete each expired archive once, without errors', async () => {
    const old = [];
    for (let i = 0; i < 7; i += 1) old.push(await importLog());
    for (const o of old) await age(o.archive, 60);
    const keep = await importLog();
    const errors: unknown[] = [];
    const logger = { ...silentLogger, error: (o: unknown) => errors.push(o) } as unknown as typeof silentLogger;
    // Batches of two, so that the two sweeps interleave over several transactions.
    const [a, b] = await Promise.all([
      sweepExpiredArchives({ db, objects, logger }, 30 * DAY, 2),
      sweepExpiredArchives({ db, objects, logger }, 30 * DAY, 2),
    ]);
    expect(errors).toEqual([]);
    expect([...a, ...b].sort()).toEqual(old.map((o) => o.archive).sort());
    for (const o of old) {
      expect(await stored(o.archive)).toMatchObject({ object: false, archiveRow: false, claim: false, sync: true });
    }
    expect(await stored(keep.archive)).toMatchObject({ object: true, archiveRow: true, claim: true });
  });

  it('an archive whose object cannot be deleted keeps its rows and is deleted by a later sweep', async () => {
    const old = await importLog();
    await age(old.archive, 60);
    const failing: ObjectStore = { ...objects, delete: () => Promise.reject(new Error('store unavailable')) };
    expect(await sweepExpiredArchives({ db, objects: failing, logger: silentLogger }, 30 * DAY)).toEqual([]);
    expect(await stored(old.archive)).toMatchObject({ object: true, archiveRow: true, claim: true });
    expect(await sweepExpiredArchives(deps(), 30 * DAY)).toEqual([old.archive]);
    expect(await stored(old.archive)).toMatchObject({ object: false, archiveRow: false, claim: false });
  });

  it('deletes old sign-in rows in batches, keeps newer ones; two sweeps at once delete each once', async () => {
    await db('lmsuseraccess').delete();
    await db('rpiuseraccess').delete();
    // A staff sign-in through the API records its row; it is recent and stays.
    await createStaff(db, { lmsusername: 'admin1@example.org' });
    expect((await staffLogin(app, 'admin1@example.org')).accessToken).toBeTruthy();
    const staffRows = await db('lmsuseraccess').count({ n: '*' }).first();
    expect(Number(staffRows?.n)).toBe(1);
    const rows = (n: number, days: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, at: daysAgo(days) }));
    const oldStaff = rows(23, 400, 'old-staff');
    const oldClassroom = rows(31, 400, 'old-room');
    const staffRow = (useraccessid: string, logintime: Date) =>
      ({ useraccessid, userid: 'u1', logintime, ipaddress: '10.0.0.1' });
    await db('lmsuseraccess').insert(oldStaff.map((r) => staffRow(r.id, r.at)));
    await db('lmsuseraccess').insert(staffRow('recent-staff', daysAgo(100)));
    await db('rpiuseraccess').insert(oldClassroom.map((r) => ({
      rpiuseraccessid: r.id, userid: teacherid, logintime: r.at, ipaddress: '10.0.0.2', status: 2, timespent: 60,
    })));
    const roomRow = (rpiuseraccessid: string, logintime: Date) =>
      ({ rpiuseraccessid, userid: teacherid, logintime, ipaddress: '10.0.0.2' });
    await db('rpiuseraccess').insert(roomRow('recent-room', daysAgo(100)));

    const [a, b] = await Promise.all([sweepSignIns(db, 365, 5), sweepSignIns(db, 365, 5)]);
    expect(a.lmsuseraccess + b.lmsuseraccess).toBe(23);
    expect(a.rpiuseraccess + b.rpiuseraccess).toBe(31);
    const staffLeft = (await db('lmsuseraccess').pluck('useraccessid')) as string[];
    expect(staffLeft.filter((id) => id.startsWith('old'))).toEqual([]);
    expect(Number((await db('lmsuseraccess').count({ n: '*' }).first())?.n)).toBe(2);
    expect(await db('rpiuseraccess').pluck('rpiuseraccessid')).toEqual(['recent-room']);

    // Through the pass with its counter, nothing more is due.
    const counted: Array<[string, number]> = [];
    await sweepRetention(deps(), { logArchiveDays: 0, signInDays: 365 }, (what, n) => counted.push([what, n]));
    expect(counted).toEqual([]);
    await db('rpiuseraccess').insert(roomRow('old-again', daysAgo(500)));
    await sweepRetention(deps(), { logArchiveDays: 0, signInDays: 365 }, (what, n) => counted.push([what, n]));
    expect(counted).toEqual([['rpiuseraccess', 1]]);
  });

  it('finds expired sign-ins through an index on the time, not by reading the whole table', async () => {
    const pg = db.client.config.client === 'pg';
    for (const { table } of SIGNIN_TABLES) {
      const { sql, bindings } = expiredSignIns(db, table, daysAgo(365), 10_000).toSQL();
      const plan = await db.transaction(async (trx) => {
        // PostgreSQL reads a table this small whole whatever its indexes: ask for the plan it has for a large one.
        if (pg) await trx.raw('SET LOCAL enable_seqscan = off');
        const rows = await trx.raw(`EXPLAIN ${pg ? '' : 'QUERY PLAN '}${sql}`, bindings as never);
        const lines = (pg ? rows.rows : rows) as Array<Record<string, string>>;
        return lines.map((r) => r['QUERY PLAN'] ?? r.detail).join('\n');
      });
      expect(plan).toContain(`${table}_logintime_idx`);
    }
  });

  it('the periodic sweep runs at start, counts what it deleted and stops cleanly', async () => {
    await db('lmsuseraccess').insert({
      useraccessid: 'started', userid: 'u2', logintime: daysAgo(900), ipaddress: '10.0.0.1',
    });
    const counted: Array<[string, number]> = [];
    const settings = { logArchiveDays: 0, signInDays: 730 };
    const sweep = startRetentionSweep(deps(), settings, (what, n) => counted.push([what, n]));
    await sweep!.first;
    await sweep!.stop();
    expect(counted).toEqual([['lmsuseraccess', 1]]);
    expect(await db('lmsuseraccess').where({ useraccessid: 'started' }).first()).toBeUndefined();
  });
});
