import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openZipBuffer } from '@lms/shared';
import { classroomRoutes } from '../src/areas';
import { localDay } from '../src/logging';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';
import { syncKeyOf, tokenFor, type TestUser } from './auth-helpers';

/**
 * One classroom server holding two schools (a cloud classroom server central pushes every school to): every
 * route that school users call is walked, and what it answers a user of the demo school (every staff role, and
 * a learner where learners may call it) must name nothing of the other school. A route added to the table without
 * a place here fails the catalogue check below.
 */

const OTHER = 'Hilltop Junior School';
const uuid = () => crypto.randomUUID();

const binary = (res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

async function zipText(buffer: Buffer): Promise<string> {
  const zip = await openZipBuffer(buffer);
  let text = '';
  try {
    for await (const e of zip.entries()) text += `${e.name}\n${await e.readText()}\n`;
  } finally {
    zip.close();
  }
  return text;
}

let t: TestApp;
let logDir: string;
let teacherA: TestUser;
let adminA: TestUser;
let superA: TestUser;
let learnerA: TestUser;
let teacherB: TestUser;
let learnerB: TestUser;
const other = { schoolid: uuid(), standardid: uuid(), progress: uuid(), baseline: uuid(), access: uuid() };
/** Anything of which in an answer to the demo school's people is a leak. */
let markers: string[];

/** A learner's activity of the last days: a quiz and a baseline result, an active row, a sign-in, app usage. */
async function activity(learner: TestUser, ids: { progress: string; baseline: string; access: string }) {
  const db = t.tdb.db;
  const at = new Date(Date.now() - 86_400_000).toISOString();
  await db('studentprogress').insert([
    {
      studentprogressid: ids.progress,
      studentid: learner.studentid,
      ispass: true,
      studentprogressreferenceid: C.quizid,
      starttime: at,
      endtime: at,
      progresstype: 2,
      resultpercentage: 75,
      points: 3,
      fullpoints: 4,
      marks: 3,
      scores: 3,
    },
    {
      studentprogressid: ids.baseline,
      studentid: learner.studentid,
      ispass: true,
      studentprogressreferenceid: C.baselineid,
      starttime: at,
      endtime: at,
      progresstype: 4,
      resultpercentage: 50,
      points: 1,
      fullpoints: 2,
      marks: 1,
      scores: 1,
    },
  ]);
  await db('studentprogressquestions').insert({
    studentprogressquestionid: uuid(),
    studentprogressid: ids.progress,
    tries: 1,
    iscorrect: true,
    referencequestionid: C.questions[0],
  });
  await db('studentactives').insert({
    studentactiveid: uuid(),
    studentid: learner.studentid,
    referenceid: C.quizid,
    referencetype: 3,
    created_at: at,
  });
  await db('studentappusages').insert({
    studentappusageid: uuid(),
    schooluserid: learner.schooluserid,
    time_spent: 120,
    last_updated: at,
    created_at: at,
  });
  await db('rpiuseraccess').insert({
    rpiuseraccessid: ids.access,
    userid: learner.schooluserid,
    logintime: at,
    ipaddress: '10.0.0.9',
    timespent: 60,
  });
}

beforeAll(async () => {
  logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'classroom-scope-'));
  // The server's own log file: it names both schools' people.
  fs.writeFileSync(
    path.join(logDir, `RPI-API-info-${localDay(new Date())}.log`),
    '{"message":"hilltop.kid signed in"}\n',
  );
  t = await makeApp({ LOG_DIR: logDir, LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemo(t.tdb.db);
  const db = t.tdb.db;
  // The second school as a content push and a roster push leave it.
  await db('schools').insert({
    schoolid: other.schoolid,
    schoolname: OTHER,
    countryid: C.countryid,
    curriculums: JSON.stringify([C.curriculumid]),
  });
  await db('standards').insert({
    standardid: other.standardid,
    standardname: 'Hill Class',
    schoolname: OTHER,
    schoolid: other.schoolid,
  });
  teacherB = await tokenFor(t, 3, { schoolname: OTHER, schoolusername: 'hilltop.teacher' });
  learnerB = await tokenFor(t, 4, {
    schoolname: OTHER,
    schoolusername: 'hilltop.kid',
    studentFields: { standard: other.standardid },
  });
  teacherA = await tokenFor(t, 3);
  adminA = await tokenFor(t, 2);
  superA = await tokenFor(t, 1);
  learnerA = await tokenFor(t, 4);
  await activity(learnerA, { progress: uuid(), baseline: uuid(), access: uuid() });
  await activity(learnerB, other);
  for (const staff of [teacherB, teacherA, adminA, superA]) {
    await db('rpiuseraccess').insert({
      rpiuseraccessid: uuid(),
      userid: staff.schooluserid,
      logintime: new Date().toISOString(),
      ipaddress: '10.0.0.8',
    });
  }
  // The other school's teacher exported last.
  expect(
    (await request(t.app).get('/export/log').set('Authorization', teacherB.auth).buffer(true).parse(binary)).status,
  ).toBe(200);
  markers = [
    OTHER,
    'hilltop.',
    'Hill Class',
    learnerB.studentid!,
    learnerB.schooluserid,
    teacherB.schooluserid,
    other.progress,
    other.baseline,
    other.access,
  ];
});
afterAll(async () => {
  await t.tdb.dispose();
  fs.rmSync(logDir, { recursive: true, force: true });
});

type Call = (auth: string) => request.Test;
interface Narrowed {
  /** Who of the demo school calls it. */
  as: 'staff' | 'everyone';
  calls: Call[];
  /** Beyond "names nothing of the other school": what the answer must be. */
  check?: (res: request.Response, text: string) => Promise<void> | void;
}

const paging = { pageindex: 1, pagesize: 100 };
const reportBodies = () => [
  paging,
  { ...paging, filter: [{ key: 'schoolname', value: OTHER }] },
  { ...paging, filter: [{ key: 'studentid', value: learnerB.studentid }] },
  { ...paging, filter: [{ key: 'standard', value: other.standardid }] },
];
const report = (p: string): Narrowed => ({
  as: 'staff',
  calls: reportBodies().map((b) => (auth: string) => request(t.app).post(p).set('Authorization', auth).send(b)),
});
const get =
  (p: string, query: Record<string, string> = {}): Call =>
  (auth) =>
    request(t.app).get(p).query(query).set('Authorization', auth);
const zip =
  (p: string): Call =>
  (auth) =>
    request(t.app).get(p).set('Authorization', auth).buffer(true).parse(binary);
const refused = (status: number) => (res: request.Response) => expect(res.status).toBe(status);

const NARROWED: Record<string, () => Narrowed> = {
  'GET /student/all': () => ({
    as: 'staff',
    calls: [
      get('/student/all'),
      get('/student/all', { schoolname: OTHER }),
      get('/student/all', { userid: 'hilltop' }),
    ],
  }),
  'POST /student/logintime': () => ({
    as: 'everyone',
    calls: [
      (auth) =>
        request(t.app)
          .post('/student/logintime')
          .set('Authorization', auth)
          .send([learnerB.schooluserid, teacherB.schooluserid]),
    ],
    check: (res) => expect(res.body.data).toEqual([]),
  }),
  'GET /curriculum/:curriculumbaselineid/getstudentresult': () => ({
    as: 'staff',
    calls: [get(`/curriculum/${C.baselineid}/getstudentresult`)],
  }),
  'POST /curriculum/baseline/:curriculumid/:schoolname/:studentid': () => ({
    as: 'everyone',
    calls: [
      (auth) =>
        request(t.app)
          .post(`/curriculum/baseline/${C.curriculumid}/${encodeURIComponent(OTHER)}/${learnerB.studentid}`)
          .set('Authorization', auth)
          .send({}),
      (auth) =>
        request(t.app)
          .post(`/curriculum/baseline/${C.curriculumid}/${encodeURIComponent(OTHER)}/${learnerB.schooluserid}`)
          .set('Authorization', auth)
          .send({}),
    ],
    check: (res) => expect(res.body).toEqual({ error: true, errormessage: 'Invalid Curriculum id', data: false }),
  }),
  'GET /export/log': () => ({ as: 'staff', calls: [zip('/export/log')], check: (res) => expect(res.status).toBe(200) }),
  'GET /export/report-data': () => ({
    as: 'staff',
    calls: [zip('/export/report-data')],
    check: (res) => expect(res.status).toBe(200),
  }),
  'GET /export/system-log/files': () => ({
    as: 'staff',
    calls: [zip('/export/system-log/files')],
    check: refused(403),
  }),
  'GET /export/log/summary': () => ({
    as: 'staff',
    calls: [get('/export/log/summary')],
    check: (res) => {
      // The demo school's own activity alone: one learner with a quiz and a baseline result, one answer; no
      // server log file (it names the other school's people), and the last export is the demo school's own.
      expect(res.body.data).toMatchObject({ learners: 1, results: 2, answers: 1, logfiles: 0 });
      expect(res.body.data.lastexport?.by ?? null).not.toBe('hilltop.teacher');
    },
  }),
  'GET /report/offlineonline': () => ({
    as: 'staff',
    calls: [get('/report/offlineonline', { schoolname: OTHER })],
    check: (res) => expect(res.body.data).toEqual({ name: 'Online', value: 0 }),
  }),
  'GET /teacher/standards': () => ({ as: 'staff', calls: [get('/teacher/standards')] }),
  'GET /teacher/stats': () => ({ as: 'staff', calls: [get('/teacher/stats')] }),
  'GET /teacher/students': () => ({ as: 'staff', calls: [get('/teacher/students')] }),
  'GET /teacher/profile': () => ({ as: 'staff', calls: [get('/teacher/profile', { standard: other.standardid })] }),
  'GET /teacher/standard/all': () => ({
    as: 'staff',
    calls: [get('/teacher/standard/all'), get('/teacher/standard/all', { standard: 'Hill' })],
  }),
  'POST /teacher/studentprogress': () => ({
    as: 'staff',
    calls: [
      (auth) =>
        request(t.app)
          .post('/teacher/studentprogress')
          .set('Authorization', auth)
          .send({ ...paging, filter: [{ key: 'standard', value: other.standardid }] }),
    ],
  }),
  'GET /teacher/studentinfo': () => ({
    as: 'staff',
    calls: [get('/teacher/studentinfo', { studentid: learnerB.studentid! })],
    check: refused(400),
  }),
  ...Object.fromEntries(
    ['', '/practice', '/quiz', '/level'].map((suffix) => [
      `GET /teacher/stats/student/:studentid${suffix}`,
      () =>
        ({
          as: 'staff',
          calls: [get(`/teacher/stats/student/${learnerB.studentid}${suffix}`)],
          check: refused(400),
        }) satisfies Narrowed,
    ]),
  ),
  ...Object.fromEntries(
    [
      '/report/studentprogress',
      '/report/studentprogress/class',
      '/report/studentlastcompletedquiz',
      '/report/studentlevelquiz',
      '/report/studentlevelquiz/class',
      '/report/studentstatus',
      '/report/student-grade-progress',
      '/report/student-level-progress',
      '/report/student-lesson-progress',
      '/report/studentprogress/download',
      '/report/studentlastcompletedquiz/download',
      '/report/studentlevelquiz/download',
      '/report/studentlevelquiz/class/download',
      '/report/studentstatus/download',
      '/report/studentprogress/class/download',
    ].map((p) => [`POST ${p}`, () => report(p)]),
  ),
};

/** Routes that are not about a school's people, or only about the caller's own rows: why each needs no narrowing. */
const NOT_SCHOOL_DATA: Record<string, string> = {
  'GET /': 'public',
  'GET /version': 'public',
  'POST /auth/login': 'the caller signing in',
  'POST /auth/logout': "the caller's own session",
  'GET /school/branding': "public: a school's logo and colours before sign-in",
  'POST /access': "the caller's own sign-in row",
  'GET /access': "the caller's own sign-in rows",
  'PUT /import/students': 'the sync key only',
  'PUT /import/teachers': 'the sync key only',
  'PUT /import/master': 'curriculum content, the sync key (or staff offline)',
  'POST /student/profile': "the caller's own row",
  'GET /student/progress': "the caller's own progress",
  'GET /student/progress/summary': "the caller's own progress",
};
// Curriculum content is one package for every school of the server; a learner's progress in it is the caller's own.
const CONTENT = /^(GET|POST) \/(curriculum|grade|level|Lesson|lesson|question|result)\b/;

describe('a classroom server holding two schools', () => {
  it("places every route: narrowed to the caller's school, or not about a school's people", () => {
    const unplaced = classroomRoutes
      .map((r) => `${r.method} ${r.path}`)
      .filter((k) => !(k in NARROWED) && !(k in NOT_SCHOOL_DATA) && !CONTENT.test(k));
    expect(unplaced).toEqual([]);
    for (const k of Object.keys(NARROWED))
      expect(
        classroomRoutes.some((r) => `${r.method} ${r.path}` === k),
        k,
      ).toBe(true);
  });

  it.each(Object.keys(NARROWED))("%s answers the demo school's people nothing of the other school", async (key) => {
    const c = NARROWED[key]();
    const callers = c.as === 'staff' ? [teacherA, adminA, superA] : [learnerA, teacherA, adminA, superA];
    for (const caller of callers) {
      for (const call of c.calls) {
        const res = await call(caller.auth);
        const text =
          Buffer.isBuffer(res.body) && res.status === 200 && res.headers['content-type'] === 'application/zip'
            ? await zipText(res.body)
            : Buffer.isBuffer(res.body)
              ? res.body.toString('utf8')
              : JSON.stringify(res.body) + (res.text ?? '');
        expect(res.status, `${key} ${text.slice(0, 200)}`).toBeLessThan(500);
        for (const m of markers) expect(text, `${key} as role ${caller.schoolusername}: ${m}`).not.toContain(m);
        await c.check?.(res, text);
      }
    }
  });

  it("the sync key still reads every school (central's proxied reports and baseline download)", async () => {
    const key = syncKeyOf(t);
    const results = await request(t.app).get(`/curriculum/${C.baselineid}/getstudentresult`).set('Authorization', key);
    expect(JSON.stringify(results.body)).toContain(learnerB.studentid);
    const status = await request(t.app).post('/report/studentstatus').set('Authorization', key).send(paging);
    expect(JSON.stringify(status.body)).toContain(OTHER);
    const logins = await request(t.app)
      .post('/student/logintime')
      .set('Authorization', key)
      .send([learnerB.schooluserid]);
    expect(logins.body.data).toEqual([{ userid: learnerB.schooluserid, logintime: expect.any(String) }]);
  });

  it("the demo school's own people still see their own school", async () => {
    const all = await request(t.app).get('/student/all').set('Authorization', teacherA.auth);
    expect(all.body.data.map((s: { studentid: string }) => s.studentid)).toContain(learnerA.studentid);
    const logins = await request(t.app)
      .post('/student/logintime')
      .set('Authorization', learnerA.auth)
      .send([learnerA.schooluserid]);
    expect(logins.body.data).toEqual([{ userid: learnerA.schooluserid, logintime: expect.any(String) }]);
    const log = await request(t.app).get('/export/log').set('Authorization', adminA.auth).buffer(true).parse(binary);
    expect(await zipText(log.body as Buffer)).toContain(learnerA.studentid);
  });
});
