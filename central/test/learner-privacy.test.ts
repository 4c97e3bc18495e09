import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS, openZipBuffer } from '@lms/shared';
import type { Knex } from '@lms/db';
import { schoolRoster } from '../src/areas/sync/store';
import { configuredStore } from '../src/http/context';
import { LEARNER_IDENTITY_COLUMNS } from '../src/http/privacy';
import { anonymiseInactive, learnerTables } from '../src/privacy/learner';
import { sweepRetention } from '../src/retention';
import { DEMO_STAFF, seedDemo } from '../src/seed/demo';
import { staffLogin } from './accounts';
import { makeApp, silentLogger, type TestApp } from './helpers';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { seedDemo as seedClassroomDemo } from '../../classroom/src/seed/demo';

// One learner's data on request: the export holds every table that names the learner (found from the live
// schema), the erasure removes identity from every table while the reports keep their totals, both are in
// the access record, and the retention of inactive learners anonymises each learner once.

const D = DEMO_IDS;
const [ERASED, INACTIVE, ...OTHERS] = D.learners;
/** Identity given to the learner that is erased, each value found nowhere else. */
const IDENTITY = {
  mothername: 'Zainabu Erasetest', fathername: 'Kwame Erasetest', familyname: 'Erasetestfamily',
  contact: '+255700111222', dateofbirth: '2014-03-09T00:00:00.000Z', wg_seeing: 2, wg_hearing: 3,
  wg_source: 1,
};
const INACTIVE_MOTHER = 'Retentiontest Mother';

const SYNC_KEY = 'learner-privacy-sync-key';
let t: TestApp;
// The school's classroom server, holding the same demo learners: the roster push carries the erasure there.
let room: ClassroomTestApp;
let roomServer: http.Server;
let superToken: string;
let superId: string;
let adminToken: string;

const staffOf = (name: string) => DEMO_STAFF.find((s) => s.lmsusername === name)!;
const as = (token: string) => ({
  get: (url: string) => request(t.app).get(url).set('Authorization', `Bearer ${token}`),
  post: (url: string, body: object = {}) => request(t.app).post(url).set('Authorization', `Bearer ${token}`).send(body),
});
const binary = (req: request.Test) => req.buffer(true).parse((res, cb) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
});

async function unzip(buf: Buffer): Promise<Map<string, string>> {
  const zip = await openZipBuffer(buf);
  const out = new Map<string, string>();
  try {
    for await (const e of zip.entries()) out.set(e.name, await e.readText());
  } finally {
    zip.close();
  }
  return out;
}

async function lastEntry(): Promise<number> {
  const row = await t.tdb.db('accessrecord').max({ m: 'id' }).first();
  return Number(row?.m ?? 0);
}
async function entriesSince(since: number) {
  const rows = await t.tdb.db('accessrecord').where('id', '>', since).orderBy('id');
  const out = [];
  for (const r of rows) {
    const ls = await t.tdb.db('accessrecordlearners').where('entryid', r.id).pluck('studentid');
    out.push({ ...r, studentids: ls.map(String).sort() });
  }
  return out;
}

/** Every table of the database, each row as JSON text (for scanning for a value). */
async function everyRow(db: Knex): Promise<string> {
  const isPg = db.client.config.client === 'pg';
  const tables: string[] = isPg
    ? (await db.raw("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() " +
      "AND table_type = 'BASE TABLE'")).rows.map((r: { t: string }) => r.t)
    : (await db.raw("SELECT name AS t FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
      .map((r: { t: string }) => r.t);
  const parts: string[] = [];
  for (const table of tables) parts.push(JSON.stringify(await db(table).select('*')));
  return parts.join('\n');
}

beforeAll(async () => {
  room = await makeClassroomApp({ SERVER_SYNC_KEY: SYNC_KEY });
  await seedClassroomDemo(room.tdb.db);
  roomServer = http.createServer(room.app);
  await new Promise<void>((resolve) => roomServer.listen(0, '127.0.0.1', resolve));
  const rpiCloud = `http://127.0.0.1:${(roomServer.address() as AddressInfo).port}`;
  t = await makeApp({ RATE_LIMIT_MAX: '100000', SERVER_SYNC_KEY: SYNC_KEY, RPI_CLOUD: rpiCloud });
  await seedDemo(t.tdb.db);
  await t.tdb.db('students').where('studentid', ERASED.studentid).update(IDENTITY);
  await t.tdb.db('students').where('studentid', INACTIVE.studentid).update({ mothername: INACTIVE_MOTHER });
  await t.tdb.db('rpiuseraccess').insert({
    rpiuseraccessid: 'privacy-test-signin', userid: ERASED.schooluserid, logintime: new Date().toISOString(),
    ipaddress: '127.0.0.1',
  });
  // An attempt of the learner with one answer, and another learner's: the export takes the first only.
  await t.tdb.db('studentprogress').insert([
    { studentprogressid: 'privacy-p1', studentid: ERASED.studentid, studentprogressreferenceid: 'privacy-ref',
      progresstype: 1, starttime: new Date().toISOString() },
    { studentprogressid: 'privacy-p2', studentid: INACTIVE.studentid, studentprogressreferenceid: 'privacy-ref',
      progresstype: 1, starttime: new Date().toISOString() },
  ]);
  await t.tdb.db('studentprogressquestions').insert([
    { studentprogressid: 'privacy-p1', studentprogressquestionid: 'privacy-q1', tries: 1, iscorrect: true,
      referencequestionid: 'privacy-ref' },
    { studentprogressid: 'privacy-p2', studentprogressquestionid: 'privacy-q2', tries: 2, iscorrect: false,
      referencequestionid: 'privacy-ref' },
  ]);
  const sa = staffOf('superadmin@demo.lms');
  superToken = (await staffLogin(t.app, sa.lmsusername, sa.password)).accessToken;
  superId = (await t.tdb.db('lmsusers').where('lmsusername', sa.lmsusername).first('lmsuserid')).lmsuserid;
  const ad = staffOf('admin@demo.lms');
  adminToken = (await staffLogin(t.app, ad.lmsusername, ad.password)).accessToken;
}, 120_000);
afterAll(async () => {
  await new Promise((resolve) => roomServer.close(resolve));
  await room.tdb.dispose();
  await t.tdb.dispose();
});

describe('who may ask', () => {
  it('an Admin (not superadmin) is refused 403 and nothing is recorded or changed', async () => {
    const since = await lastEntry();
    expect((await as(adminToken).get(`/privacy/learner/${ERASED.studentid}/export`)).status).toBe(403);
    expect((await as(adminToken).post(`/privacy/learner/${ERASED.studentid}/erase`)).status).toBe(403);
    expect((await request(t.app).post(`/privacy/learner/${ERASED.studentid}/erase`)).status).toBe(401);
    expect(await entriesSince(since)).toEqual([]);
    const row = await t.tdb.db('students').where('studentid', ERASED.studentid).first();
    expect(row.mothername).toBe(IDENTITY.mothername);
    expect(await t.tdb.db('learnererasures')).toEqual([]);
  });

  it('an unknown learner is answered 404, with the envelope, and nothing is written', async () => {
    const since = await lastEntry();
    const unknown = '00000000-0000-4000-8000-00000000dead';
    const ex = await as(superToken).get(`/privacy/learner/${unknown}/export`);
    expect(ex.status).toBe(404);
    const er = await as(superToken).post(`/privacy/learner/${unknown}/erase`);
    expect(er.status).toBe(404);
    expect(er.body).toEqual({ error: true, errormessage: 'Invalid student id', data: false });
    // The download's first entry is written before the handler runs; its end says it failed.
    const entries = await entriesSince(since);
    expect(entries.map((e) => e.stage)).toEqual(['download started', 'download failed']);
    expect(entries[1].outcome).toBe(404);
    expect(await t.tdb.db('learnererasures')).toEqual([]);
  });
});

describe('export of one learner', () => {
  it('holds every table of the live schema that names the learner, a table added later included', async () => {
    // A table that gains a learner column after this release is read too: the list comes from the schema.
    await t.tdb.db.schema.createTable('zzlearnernotes', (b) => {
      b.string('noteid', 36).primary();
      b.string('studentid', 36);
      b.text('note');
    });
    await t.tdb.db('zzlearnernotes').insert([
      { noteid: 'n1', studentid: ERASED.studentid, note: 'this learner' },
      { noteid: 'n2', studentid: INACTIVE.studentid, note: 'another learner' },
    ]);
    try {
      const since = await lastEntry();
      const res = await binary(as(superToken).get(`/privacy/learner/${ERASED.studentid}/export`));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/zip');
      const files = await unzip(res.body as Buffer);

      const tables = await learnerTables(t.tdb.db);
      expect(tables.map((x) => x.table)).toEqual(expect.arrayContaining(
        ['students', 'schoolusers', 'studentprogress', 'accessrecordlearners', 'learnererasures', 'zzlearnernotes',
          'rpiuseraccess', 'studentprogressquestions']));
      for (const { table } of tables) expect(files.has(`tables/${table}.json`), table).toBe(true);
      expect(JSON.parse(files.get('tables/zzlearnernotes.json')!)).toEqual(
        [{ noteid: 'n1', studentid: ERASED.studentid, note: 'this learner' }]);

      // The classroom's sign-ins name the account as `userid`; an attempt's answers name the attempt.
      expect(JSON.parse(files.get('tables/rpiuseraccess.json')!)).toEqual(
        [expect.objectContaining({ rpiuseraccessid: 'privacy-test-signin', userid: ERASED.schooluserid })]);
      const attempts = (await t.tdb.db('studentprogress').where('studentid', ERASED.studentid)
        .pluck('studentprogressid')).map(String);
      const answers = await t.tdb.db('studentprogressquestions').whereIn('studentprogressid', attempts);
      expect(answers.map((a) => a.studentprogressquestionid)).toContain('privacy-q1');
      const exported = JSON.parse(files.get('tables/studentprogressquestions.json')!);
      expect(exported.map((a: { studentprogressquestionid: string }) => a.studentprogressquestionid).sort())
        .toEqual(answers.map((a) => a.studentprogressquestionid).sort());
      const students = JSON.parse(files.get('tables/students.json')!);
      expect(students).toHaveLength(1);
      expect(students[0]).toMatchObject({ studentid: ERASED.studentid, mothername: IDENTITY.mothername });
      const users = JSON.parse(files.get('tables/schoolusers.json')!);
      expect(users).toEqual([expect.objectContaining({ schoolusername: ERASED.schoolusername })]);
      expect(users[0]).not.toHaveProperty('schooluserpasswordhash');
      // Other learners' rows never go in.
      const all = [...files.values()].join('\n');
      for (const o of [INACTIVE, ...OTHERS]) expect(all).not.toContain(o.studentid);

      const manifest = JSON.parse(files.get('manifest.json')!);
      expect(manifest).toMatchObject({ studentid: ERASED.studentid, schoolname: D.schoolname, erased: null });
      expect(manifest.tables.map((x: { table: string }) => x.table)).toEqual(tables.map((x) => x.table));
      expect(files.get('manifest.txt')).toMatch(/not enrolled in the fleet is not covered/);

      const entries = await entriesSince(since);
      expect(entries.map((e) => e.stage)).toEqual(['download started', 'download finished']);
      expect(entries[1]).toMatchObject({
        accountid: superId, route: '/privacy/learner/:studentid/export', outcome: 200, learnercount: 1,
        studentids: [ERASED.studentid],
      });
    } finally {
      await t.tdb.db.schema.dropTable('zzlearnernotes');
    }
  }, 120_000);
});

describe('erasure', () => {
  it('removes the identity from every table, keeps the reports\' totals, is recorded, and happens once', async () => {
    const reports = ['/report/dashboard', '/report/gender', `/report/dashboard/school/${D.schoolname}`];
    const before = await Promise.all(reports.map((u) => as(superToken).get(u)));
    for (const r of before) expect(r.status).toBe(200);
    const progressBefore = await t.tdb.db('studentprogress').where('studentid', ERASED.studentid).count({ n: '*' });

    // The old values, as JSON values, are found before the erasure (the scan can fail).
    const olds = [ERASED.studentfirstname, ERASED.studentlastname, ERASED.schoolusername, IDENTITY.mothername,
      IDENTITY.fathername, IDENTITY.familyname, IDENTITY.contact].map((v) => JSON.stringify(v));
    const scanBefore = await everyRow(t.tdb.db);
    for (const v of olds) expect(scanBefore).toContain(v);

    const since = await lastEntry();
    const res = await as(superToken).post(`/privacy/learner/${ERASED.studentid}/erase`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ studentid: ERASED.studentid, erased: true });

    const scan = await everyRow(t.tdb.db);
    for (const v of olds) expect(scan).not.toContain(v);
    const row = await t.tdb.db('students').where('studentid', ERASED.studentid).first();
    for (const c of LEARNER_IDENTITY_COLUMNS) expect(row[c] ?? '', c).toBe('');
    expect(row.genderid).toBe(ERASED.genderid);
    const user = await t.tdb.db('schoolusers').where('schooluserid', ERASED.schooluserid).first();
    expect(user.schoolusername).toMatch(/^erased-[0-9a-f]{16}$/);
    // The other learners keep theirs.
    const other = await t.tdb.db('students').where('studentid', INACTIVE.studentid).first();
    expect(other.studentfirstname).toBe(INACTIVE.studentfirstname);

    // Activity stays, by id; the reports' totals are the same.
    expect(await t.tdb.db('studentprogress').where('studentid', ERASED.studentid).count({ n: '*' }))
      .toEqual(progressBefore);
    const after = await Promise.all(reports.map((u) => as(superToken).get(u)));
    for (let i = 0; i < reports.length; i += 1) expect(after[i].body, reports[i]).toEqual(before[i].body);

    const entries = await entriesSince(since);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      accountid: superId, method: 'POST', route: '/privacy/learner/:studentid/erase', stage: 'answered',
      outcome: 200, studentids: [ERASED.studentid],
    });

    // The school's pending erasure; the next roster carries the learner anonymised.
    const mark = await t.tdb.db('learnererasures').where('studentid', ERASED.studentid).first();
    expect(mark).toMatchObject({
      schoolname: D.schoolname, reason: 'request', erasedby: superId, token: user.schoolusername,
    });
    expect(mark.rosterpushedat).toBeNull();
    const roster = await schoolRoster(t.tdb.db, D.schoolname, { teacherAccounts: true, hash: false });
    const item = roster.find((r) => r.student.studentid === ERASED.studentid)!;
    expect(item.schoolusername).toBe(user.schoolusername);
    expect(item.student.studentfirstname).toBe('');
    expect(item.student.mothername ?? null).toBeNull();
    expect(JSON.stringify(roster)).not.toContain(JSON.stringify(IDENTITY.mothername));

    // One roster push later the school's classroom server holds the learner anonymised too.
    const boxBefore = await room.tdb.db('students').where('studentid', ERASED.studentid).first();
    expect(boxBefore.studentfirstname).toBe(ERASED.studentfirstname);
    const push = await as(superToken).post(`/sync/cloud/${encodeURIComponent(D.schoolname)}/students`);
    expect(push.status).toBe(200);
    const box = await room.tdb.db('students').where('studentid', ERASED.studentid).first();
    for (const c of LEARNER_IDENTITY_COLUMNS) if (c in box) expect(box[c] ?? '', `box ${c}`).toBe('');
    const boxUser = await room.tdb.db('schoolusers').where('schooluserid', ERASED.schooluserid).first();
    expect(boxUser.schoolusername).toBe(user.schoolusername);
    expect(await everyRow(room.tdb.db)).not.toContain(JSON.stringify(ERASED.studentlastname));
    const carried = await t.tdb.db('learnererasures').where('studentid', ERASED.studentid).first();
    expect(carried.rosterpushedat).not.toBeNull();

    // A second erasure changes nothing.
    const again = await as(superToken).post(`/privacy/learner/${ERASED.studentid}/erase`);
    expect(again.body.data).toEqual({ studentid: ERASED.studentid, erased: false });
    const userAgain = await t.tdb.db('schoolusers').where('schooluserid', ERASED.schooluserid).first();
    expect(userAgain.schoolusername).toBe(user.schoolusername);
    expect(Number((await t.tdb.db('learnererasures').count({ n: '*' }))[0].n)).toBe(1);

    // The export says the learner was erased.
    const ex = await binary(as(superToken).get(`/privacy/learner/${ERASED.studentid}/export`));
    const manifest = JSON.parse((await unzip(ex.body as Buffer)).get('manifest.json')!);
    expect(manifest.erased).toMatchObject({ reason: 'request' });
  }, 120_000);
});

describe('retention of inactive learners', () => {
  it('anonymises only the learner without activity for N years, once, and counts it', async () => {
    const db = t.tdb.db;
    const now = new Date().toISOString();
    const old = new Date(Date.now() - 10 * 365 * 24 * 3600 * 1000).toISOString();
    await db('students').whereNot('studentid', INACTIVE.studentid).update({ updated_at: now });
    await db('students').where('studentid', INACTIVE.studentid).update({ updated_at: old, created_at: old });
    await db('studentprogress').where('studentid', INACTIVE.studentid).update({ starttime: old });
    await db('rpiuseraccess').where('userid', INACTIVE.schooluserid).update({ logintime: old });
    // A learner whose row is old but who signed in lately stays.
    const [active] = OTHERS;
    await db('students').where('studentid', active.studentid).update({ updated_at: old, created_at: old });
    await db('studentprogress').where('studentid', active.studentid).update({ starttime: old });
    await db('rpiuseraccess').insert({
      rpiuseraccessid: 'retention-test-signin', userid: active.schooluserid, logintime: now, ipaddress: '127.0.0.1',
    });

    // Off by default: nothing happens.
    expect(t.config.learnerRetentionYears).toBe(0);
    const counted: number[] = [];
    await sweepRetention({ db, objects: configuredStore(t.config), logger: silentLogger },
      { logArchiveDays: 0, signInDays: 0, learnerYears: 0 }, undefined, (n) => counted.push(n));
    expect(counted).toEqual([]);

    await sweepRetention({ db, objects: configuredStore(t.config), logger: silentLogger },
      { logArchiveDays: 0, signInDays: 0, learnerYears: 3 }, undefined, (n) => counted.push(n));
    expect(counted).toEqual([1]);
    const row = await db('students').where('studentid', INACTIVE.studentid).first();
    expect(row.mothername ?? null).toBeNull();
    expect(row.studentfirstname).toBe('');
    const mark = await db('learnererasures').where('studentid', INACTIVE.studentid).first();
    expect(mark).toMatchObject({ reason: 'retention', erasedby: null });
    for (const o of OTHERS) {
      const r = await db('students').where('studentid', o.studentid).first();
      expect(r.studentfirstname).toBe(o.studentfirstname);
    }
    // A second pass (another instance, the next hour) finds no one.
    expect(await anonymiseInactive({ db, logger: silentLogger }, 3)).toBe(0);
    expect(Number((await db('learnererasures').where('reason', 'retention').count({ n: '*' }))[0].n)).toBe(1);
  }, 120_000);
});
