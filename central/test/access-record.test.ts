import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS, ROLE_IDS } from '@lms/shared';
import { serviceRoutes } from '../src/areas';
import { privacyRoutes } from '../src/privacy/routes';
import { appendEntries, GENESIS, sweepAccessRecord, verifyChain, type AccessEntry } from '../src/access/record';
import { DECLARED, routeKey } from '../src/access/routes-wrap';
import type { CentralRoute } from '../src/http/types';
import { DEMO_STAFF, seedDemo } from '../src/seed/demo';
import { makeApp, silentLogger, type TestApp } from './helpers';
import { sweepRetention } from '../src/retention';
import { configuredStore } from '../src/http/context';
import { staffLogin } from './accounts';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { seedDemo as seedClassroomDemo } from '../../classroom/src/seed/demo';

// The access record of learner data: which requests leave an entry, what an entry says (never the
// personal data), the hash chain and its verification, retention, the superadmin's routes, and a catalogue
// over the route table: any answer that shows a learner's name must have left an entry.

const D = DEMO_IDS;
const LEARNERS = D.learners;
const LEARNER_IDS = LEARNERS.map((l) => l.studentid).sort();
/** A demo learner's name or sign-in name as a whole word in an answer (JSON or CSV). */
const NAMES = new RegExp(`\\b(${LEARNERS.flatMap((l) => [l.studentfirstname, l.studentlastname,
  l.schoolusername.replace('.', '\\.')]).join('|')})\\b`);

const SYNC_KEY = 'access-record-sync-key';
let t: TestApp;
// The classroom server the online reports read from (its demo holds the same learners).
let room: ClassroomTestApp;
let roomServer: http.Server;
let superToken: string;
let superId: string;
let adminToken: string;
let teacherToken: string;

const staffOf = (name: string) => DEMO_STAFF.find((s) => s.lmsusername === name)!;

beforeAll(async () => {
  room = await makeClassroomApp({ SERVER_SYNC_KEY: SYNC_KEY });
  await seedClassroomDemo(room.tdb.db);
  roomServer = http.createServer(room.app);
  await new Promise<void>((resolve) => roomServer.listen(0, '127.0.0.1', resolve));
  const rpiCloud = `http://127.0.0.1:${(roomServer.address() as AddressInfo).port}`;
  t = await makeApp({ RATE_LIMIT_MAX: '100000', SERVER_SYNC_KEY: SYNC_KEY, RPI_CLOUD: rpiCloud });
  await seedDemo(t.tdb.db);
  const sa = staffOf('superadmin@demo.lms');
  superToken = (await staffLogin(t.app, sa.lmsusername, sa.password)).accessToken;
  superId = (await t.tdb.db('lmsusers').where('lmsusername', sa.lmsusername).first('lmsuserid')).lmsuserid;
  const ad = staffOf('admin@demo.lms');
  adminToken = (await staffLogin(t.app, ad.lmsusername, ad.password)).accessToken;
  const te = staffOf('teacher@demo.lms');
  teacherToken = (await staffLogin(t.app, te.lmsusername, te.password)).accessToken;
  PARAMS.lmsuserid = superId;
});
afterAll(async () => {
  await new Promise((resolve) => roomServer.close(resolve));
  await room.tdb.dispose();
  await t.tdb.dispose();
});

const as = (token: string) => ({
  get: (url: string) => request(t.app).get(url).set('Authorization', `Bearer ${token}`),
  post: (url: string, body: object = {}) => request(t.app).post(url).set('Authorization', `Bearer ${token}`).send(body),
  put: (url: string, body: object = {}) => request(t.app).put(url).set('Authorization', `Bearer ${token}`).send(body),
});

async function lastId(): Promise<number> {
  const row = await t.tdb.db('accessrecord').max({ m: 'id' }).first();
  return Number(row?.m ?? 0);
}

type Entry = AccessEntry & { id: number; prevhash: string; hash: string };
/** Entries written after `since`, each with its learners. */
async function entriesSince(since: number): Promise<Entry[]> {
  const rows = await t.tdb.db('accessrecord').where('id', '>', since).orderBy('id');
  const out: Entry[] = [];
  for (const r of rows) {
    const learners = await t.tdb.db('accessrecordlearners').where('entryid', r.id).orderBy('studentid');
    out.push({ ...r, id: Number(r.id), studentids: learners.map((l: { studentid: string }) => l.studentid) });
  }
  return out;
}

describe('what is recorded', () => {
  it('GET /student/all: one entry naming the caller, the route and every learner answered', async () => {
    const since = await lastId();
    const res = await as(superToken).get(`/student/all?schoolname=${encodeURIComponent(D.schoolname)}`)
      .set('X-Forwarded-For', '203.0.113.9');
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBe(LEARNERS.length);
    const [e, ...more] = await entriesSince(since);
    expect(more).toEqual([]);
    expect(e).toMatchObject({
      accountid: superId, accountkind: 'staff', method: 'GET', route: '/student/all', path: '/student/all',
      stage: 'answered', outcome: 200, learnercount: LEARNERS.length,
    });
    expect(e.studentids).toEqual(LEARNER_IDS);
    expect(JSON.parse(e.filter!)).toEqual({ schoolname: D.schoolname });
    expect(e.client).toBeTruthy();
  });

  it('GET /student/download-students: an entry before the first byte and one with the learners before the last',
    async () => {
      const since = await lastId();
      const res = await as(superToken).get(`/student/download-students?schoolname=${encodeURIComponent(D.schoolname)}`);
      expect(res.status).toBe(200);
      expect(res.text).toMatch(NAMES);
      const entries = await entriesSince(since);
      expect(entries.map((e) => e.stage)).toEqual(['download started', 'download finished']);
      expect(entries[0]).toMatchObject({ route: '/student/download-students', learnercount: null, studentids: [] });
      expect(JSON.parse(entries[0].filter!)).toEqual({ schoolname: D.schoolname });
      expect(entries[1]).toMatchObject({
        outcome: 200, learnercount: LEARNERS.length, requestid: entries[0].requestid,
      });
      expect(entries[1].studentids).toEqual(LEARNER_IDS);
    });

  it('POST /report/studentstatus: an entry naming the learners the report shows, the filter without names',
    async () => {
      const since = await lastId();
      const res = await as(superToken).post('/report/studentstatus', {
        pageindex: 0, pagesize: 50,
        filter: [{ key: 'schoolname', value: D.schoolname }, { key: 'userid', value: 'Amina' }],
      });
      expect(res.status).toBe(200);
      expect(res.text).toMatch(NAMES);
      const entries = await entriesSince(since);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ route: '/report/studentstatus', stage: 'answered', outcome: 200 });
      expect(entries[0].studentids).toEqual(LEARNER_IDS);
      // A value searched for by text is withheld: the record names nobody by name.
      expect(entries[0].filter).not.toMatch(NAMES);
      expect(JSON.parse(entries[0].filter!)['body.filter']).toEqual([
        { key: 'schoolname', value: D.schoolname }, { key: 'userid', value: '[withheld]' },
      ]);
    });

  it('GET /student/:studentid: the one learner', async () => {
    const since = await lastId();
    const res = await as(superToken).get(`/student/${LEARNERS[0].studentid}`);
    expect(res.status).toBe(200);
    const entries = await entriesSince(since);
    expect(entries).toHaveLength(1);
    expect(entries[0].studentids).toEqual([LEARNERS[0].studentid]);
  });

  it('a route that answers no identity writes no entry', async () => {
    const since = await lastId();
    expect((await as(superToken).get('/grade/all').query({ curid: D.curriculumid })).status).toBe(200);
    expect((await as(superToken).get('/country/all')).status).toBe(200);
    expect(await entriesSince(since)).toEqual([]);
  });

  it('a refused request (403) writes no entry: it answered nothing', async () => {
    const since = await lastId();
    expect((await as(teacherToken).get('/student/all')).status).toBe(403);
    expect((await as(teacherToken).get('/student/download-students')).status).toBe(403);
    expect((await as(adminToken).get('/accessrecord')).status).toBe(403);
    expect(await entriesSince(since)).toEqual([]);
  });

  it('a failed request (400) writes no entry', async () => {
    const since = await lastId();
    const res = await as(superToken).get('/student/not-a-learner');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await entriesSince(since)).toEqual([]);
  });

  it('a change of who may see learners is recorded (role created, account narrowed)', async () => {
    const since = await lastId();
    const created = await as(superToken).post('/roles/create', { rolename: 'Data reader', permissionsid: [] });
    expect(created.status).toBeLessThan(300);
    const entries = await entriesSince(since);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ route: '/roles/create', stage: 'answered', learnercount: null, filter: null });
  });

  it('a learner\'s deletion is recorded with the learner; a dry run is not', async () => {
    const since = await lastId();
    const dry = await as(superToken).put('/student/update?dryrun=true', { students: [] });
    expect(dry.status).toBeLessThan(500);
    expect(await entriesSince(since)).toEqual([]);
    const l = LEARNERS[4];
    const res = await request(t.app).delete(`/student/${l.schooluserid}`).set('Authorization', `Bearer ${superToken}`);
    expect(res.status).toBe(200);
    const entries = await entriesSince(since);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ route: '/student/:schooluserid', method: 'DELETE', learnercount: 1 });
    expect(entries[0].studentids).toEqual([l.studentid]);
  });
});

describe('the superadmin\'s routes', () => {
  it('GET /accessrecord filters by learner, account and route, pages, and names nobody', async () => {
    const byLearner = await as(superToken).get('/accessrecord').query({ studentid: LEARNERS[0].studentid });
    expect(byLearner.status).toBe(200);
    expect(byLearner.body.data.total).toBeGreaterThan(0);
    for (const e of byLearner.body.data.rows) expect(e.studentids).toContain(LEARNERS[0].studentid);
    expect(byLearner.text).not.toMatch(NAMES);

    const byRoute = await as(superToken).get('/accessrecord').query({ route: '/student/all', accountid: superId });
    expect(byRoute.body.data.rows.length).toBeGreaterThan(0);
    for (const e of byRoute.body.data.rows) expect(e).toMatchObject({ route: '/student/all', accountid: superId });

    const page = await as(superToken).get('/accessrecord').query({ pagesize: 1, pageindex: 1 });
    expect(page.body.data.rows).toHaveLength(1);
    const future = await as(superToken).get('/accessrecord').query({ from: '2999-01-01' });
    expect(future.body.data).toMatchObject({ total: 0, rows: [] });
    expect((await as(superToken).get('/accessrecord').query({ from: 'yesterday-ish' })).status).toBe(400);
    expect((await as(superToken).get('/accessrecord').query({ pagesize: 100000 })).status).toBe(400);
  });

  it('GET /accessrecord/download exports CSV and NDJSON, and is not itself recorded', async () => {
    const since = await lastId();
    const total = (await as(superToken).get('/accessrecord')).body.data.total as number;
    const csv = await as(superToken).get('/accessrecord/download');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/application\/csv/);
    const lines = csv.text.split('\n');
    expect(lines[0]).toBe('id,at,requestid,accountid,accountkind,method,route,path,client,stage,outcome,' +
      'learnercount,studentids,filter,prevhash,hash');
    expect(lines).toHaveLength(total + 1);
    expect(csv.text).not.toMatch(NAMES);
    const nd = await as(superToken).get('/accessrecord/download').query({ format: 'ndjson', route: '/student/all' })
      .buffer(true).parse((res, cb) => {
        let s = '';
        res.on('data', (c: Buffer) => { s += c.toString('utf8'); });
        res.on('end', () => cb(null, s));
      });
    expect(nd.status).toBe(200);
    const rows = (nd.body as string).trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.route).toBe('/student/all');
    expect(await entriesSince(since)).toEqual([]);
  });
});

describe('the hash chain', () => {
  it('verifies; a tampered entry is named by verify, as is a learner taken out of an entry', async () => {
    const ok = await as(superToken).get('/accessrecord/verify');
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ ok: true });
    const all = await t.tdb.db('accessrecord').count({ n: '*' }).first();
    expect(ok.body.data.checked).toBe(Number(all!.n));

    const victim = (await t.tdb.db('accessrecord').where('route', '/student/all').orderBy('id').first()) as Entry;
    await t.tdb.db('accessrecord').where('id', victim.id).update({ client: '198.51.100.1' });
    const bad = await as(superToken).get('/accessrecord/verify');
    expect(bad.body.data).toMatchObject({ ok: false, broken: { id: victim.id } });
    await t.tdb.db('accessrecord').where('id', victim.id).update({ client: victim.client });
    expect((await verifyChain(t.tdb.db)).ok).toBe(true);

    const [one] = await t.tdb.db('accessrecordlearners').where('entryid', victim.id).limit(1);
    await t.tdb.db('accessrecordlearners').where(one).delete();
    expect(await verifyChain(t.tdb.db)).toMatchObject({ ok: false, broken: { id: victim.id } });
    await t.tdb.db('accessrecordlearners').insert(one);

    // An entry removed from the middle: the one after it no longer links.
    const [, c, d] = await t.tdb.db('accessrecord').orderBy('id').limit(3);
    await t.tdb.db('accessrecord').where('id', c.id).delete();
    expect(await verifyChain(t.tdb.db)).toMatchObject({ ok: false, broken: { id: Number(d.id) } });
    await t.tdb.db('accessrecord').insert(c);
    expect((await verifyChain(t.tdb.db)).ok).toBe(true);
  });

  it('retention removes the oldest entries and what remains still verifies', async () => {
    const old = (years: number): AccessEntry => ({
      at: new Date(Date.now() - years * 366 * 24 * 3600 * 1000).toISOString(), requestid: null, accountid: superId,
      accountkind: 'staff', method: 'GET', route: '/student/all', path: '/student/all', client: '127.0.0.1',
      stage: 'answered', outcome: 200, learnercount: 1, filter: null, studentids: [LEARNERS[1].studentid],
    });
    // A separate chain of its own in a fresh database: entries aged 8 and 7 years, then one of today.
    const fresh = await makeApp();
    try {
      const db = fresh.tdb.db;
      const ids = await appendEntries(db, [old(8), old(7)]);
      const [today] = await appendEntries(db, [{ ...old(0), at: new Date().toISOString() }]);
      expect((await db('accessrecord').where('id', ids[0]).first()).prevhash).toBe(GENESIS);
      // The hourly retention pass removes them and counts them.
      const counted: Array<[string, number]> = [];
      const objects = configuredStore(fresh.config);
      await sweepRetention({ db, objects, logger: silentLogger },
        { logArchiveDays: 0, signInDays: 0, accessRecordYears: 6 }, (what, n) => counted.push([what, n]));
      expect(counted).toEqual([['accessrecord', 2]]);
      expect(await sweepAccessRecord(db, 6)).toBe(0);
      expect((await db('accessrecord').select('id')).map((r: { id: number }) => Number(r.id))).toEqual([today]);
      expect(await db('accessrecordlearners').whereIn('entryid', ids)).toEqual([]);
      expect(await verifyChain(db)).toMatchObject({ ok: true, checked: 1, firstid: today });
      const [next] = await appendEntries(db, [old(0)]);
      expect(await verifyChain(db)).toMatchObject({ ok: true, checked: 2, lastid: next });
    } finally {
      await fresh.tdb.dispose();
    }
  });

  it('appends at the same time form one chain', async () => {
    const base: AccessEntry = {
      at: new Date().toISOString(), requestid: null, accountid: superId, accountkind: 'staff', method: 'GET',
      route: '/student/all', path: '/student/all', client: null, stage: 'answered', outcome: 200,
      learnercount: 1, filter: null, studentids: [LEARNERS[2].studentid],
    };
    await Promise.all(Array.from({ length: 8 }, () => appendEntries(t.tdb.db, [base])));
    expect((await verifyChain(t.tdb.db)).ok).toBe(true);
  });
});

// The catalogue: every GET route of the route table, and every POST list route, called by the superadmin
// with the demo data. An answer that shows a learner's name must have left an entry of that route. A new
// route with a path parameter this table does not know fails until it has one.
const PARAMS: Record<string, string> = {
  countryid: D.countryid,
  curriculumbaselineid: D.baseline.curriculumbaselineid,
  curriculumid: D.curriculumid,
  documentid: D.lessons[0].documentid,
  gradeid: D.gradeid,
  lessonid: D.lessons[0].lessonid,
  lessonlearningid: D.lessons[0].lessonlearningid,
  lessonplanid: D.lessonplan.lessonplanid,
  lessonpracticeid: D.lessons[0].lessonpracticeid,
  lessonquizid: D.lessons[0].lessonquizid,
  levelid: D.levelid,
  questionid: D.questionids[0],
  roleid: ROLE_IDS.superadmin,
  schoolid: D.schoolid,
  schoolname: D.schoolname,
  standardid: D.standardid,
  studentid: LEARNERS[0].studentid,
  subjectid: D.subjectid,
  // No demo row: the route is called, answers an error, and shows nobody.
  documenttagid: 'none',
  questiontagid: 'none',
  feedbackid: 'none',
  schoolcontributeid: 'none',
  boxid: 'none',
  releaseid: '00000000-0000-4000-8000-000000000000',
  diagnosticid: '00000000-0000-4000-8000-000000000000',
  filename: 'none.mp4',
  tag: 'none',
};
/** Query strings that make a route answer its learners (a school or a class named). */
const QUERIES: Record<string, Record<string, string>> = {
  'GET /student/all': { schoolname: D.schoolname },
  'GET /student/download-students': { schoolname: D.schoolname },
};
const filtered = (filters: Record<string, unknown>) => ({
  pageindex: 1, pagesize: 100, filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
});
/** The bodies each POST list route is called with: a bare page, a class, the learners, one learner. */
const BODIES = [
  { pageindex: 1, pagesize: 50 },
  filtered({ standard: [D.standardid] }),
  filtered({ studentid: LEARNER_IDS }),
  filtered({ studentid: LEARNERS[0].studentid }),
];
/** POST routes that only read (lists, reports, report downloads). */
const isPostList = (r: CentralRoute) =>
  r.method === 'POST' && !r.path.includes(':') &&
  !/create|upload|cloud|migrate|remove|bind|clone|import|auth|techdowntime/.test(r.path);

describe('catalogue: every answer that shows a learner leaves an entry', () => {
  const routes = serviceRoutes.filter((r) => r.method === 'GET' || isPostList(r));
  /** The routes whose answer showed a learner's name. */
  const shown: string[] = [];

  it('the table has GET and POST list routes to walk', () => {
    expect(routes.length).toBeGreaterThan(100);
    expect(routes.some((r) => r.path === '/report/studentstatus')).toBe(true);
  });

  it.each(routes.map((r) => [routeKey(r), r] as const))('%s', async (_key, r) => {
    const path = r.path.replace(/:(\w+)\+?/g, (_, p: string) => {
      if (!(p in PARAMS)) throw new Error(`no catalogue value for the path parameter :${p} of ${routeKey(r)}`);
      return encodeURIComponent(PARAMS[p]);
    });
    const text = async (req: request.Test) => {
      const res = await req.buffer(true).parse((stream, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => cb(null, Buffer.concat(chunks).toString('utf8')));
      });
      return { status: res.status, text: res.body as string };
    };
    const calls = r.method === 'GET'
      ? [() => as(superToken).get(path).query(QUERIES[routeKey(r)] ?? {})]
      : BODIES.map((b) => () => as(superToken).post(path, b));
    for (const call of calls) {
      const since = await lastId();
      const res = await text(call());
      expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
      const entries = (await entriesSince(since)).filter((e) => e.route === r.path && e.method === r.method);
      if (NAMES.test(res.text)) {
        shown.push(routeKey(r));
        expect(entries.length, `${routeKey(r)} showed a learner's name and wrote no access entry`).toBeGreaterThan(0);
      }
      if (DECLARED[routeKey(r)] === 'download' && res.status === 200) expect(entries.length).toBeGreaterThan(0);
    }
  });

  it('the walk met learners\' names where they are expected (the catalogue is not vacuous)', () => {
    for (const k of ['GET /student/all', 'GET /student/download-students', 'GET /student/:studentid', 'POST /student',
      'POST /report/studentstatus', 'POST /report/online/studentstatus', 'POST /report/student-grade-progress',
    ]) expect([...new Set(shown)].sort().join('\n')).toContain(k);
  });
});

describe('the declared routes', () => {
  it('each names a route of the table (a renamed route fails here)', () => {
    const keys = new Set([...serviceRoutes, ...privacyRoutes].map(routeKey));
    for (const k of Object.keys(DECLARED)) expect(keys.has(k), k).toBe(true);
  });
});

describe('the benchmark switch', () => {
  it('ACCESS_RECORD_OFF stops the record (development and test only)', async () => {
    const off = await makeApp({ ACCESS_RECORD_OFF: 'true' }, t.tdb);
    const since = await lastId();
    expect((await request(off.app).get('/student/all').query({ schoolname: D.schoolname })
      .set('Authorization', `Bearer ${superToken}`)).status).toBe(200);
    expect(await entriesSince(since)).toEqual([]);
    expect(off.config.accessRecord.enabled).toBe(false);
  });
});
