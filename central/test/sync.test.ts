import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import busboy from 'busboy';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { CONTENT_KEY_LIST, ROLE_IDS, readPackageJson } from '@lms/shared';
import { ClassroomClient } from '../src/classroom-client';
import { closedPort, makeApp, type TestApp } from './helpers';
import { createSchoolUser, createStaff, schoolLogin, staffLogin } from './accounts';

// The central side of curriculum and roster sync against a recording stand-in for the classroom server
// (the real one is driven in e2e-sync.test.ts).

const SYNC_KEY = 'sync-key-for-central-tests';
const API_KEY = 'api-key-for-central-tests';

interface Received {
  method: string;
  url: string;
  authorization?: string;
  contentType?: string;
  /** The multipart part `importfile`, when there was one. */
  file?: { filename: string; bytes: Buffer };
  json?: unknown;
}

/** A stand-in classroom server: records every request and answers what the test says. */
class FakeClassroom {
  received: Received[] = [];
  answer: (r: Received) => { status: number; body: unknown } = () => ({
    status: 200,
    body: { error: false, data: true },
  });
  /** Connections to drop without answering before the next one is served. */
  dropConnections = 0;
  /** Requests seen, answered or not. */
  attempts = 0;
  /** Read the request and never answer. */
  hang = false;
  private server = http.createServer((req, res) => {
    this.attempts += 1;
    if (this.hang) {
      req.resume();
      return;
    }
    if (this.dropConnections > 0) {
      this.dropConnections -= 1;
      req.socket.destroy();
      return;
    }
    const r: Received = {
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
    };
    const done = () => {
      this.received.push(r);
      const { status, body } = this.answer(r);
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (/^multipart\//.test(req.headers['content-type'] ?? '')) {
      const bb = busboy({ headers: req.headers });
      bb.on('file', (name, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (name === 'importfile') r.file = { filename: info.filename, bytes: Buffer.concat(chunks) };
        });
      });
      bb.on('close', done);
      req.pipe(bb);
    } else {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        r.json = text ? JSON.parse(text) : undefined;
        done();
      });
    }
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}


function binaryParser(res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

const fake = new FakeClassroom();
let t: TestApp;
let down: TestApp;
let admin: string;
let superadmin: string;
let teacher: string;
const bearer = (token: string) => `Bearer ${token}`;

const ids = {
  question: crypto.randomUUID(),
  practice: crypto.randomUUID(),
  practiceQuestion: crypto.randomUUID(),
  quiz: crypto.randomUUID(),
  quizQuestion: crypto.randomUUID(),
  levelQuizQuestion: crypto.randomUUID(),
  document: crypto.randomUUID(),
  learning: crypto.randomUUID(),
  baseline: crypto.randomUUID(),
  deletedBaseline: crypto.randomUUID(),
  learnerUser: crypto.randomUUID(),
  learner: crypto.randomUUID(),
  deletedUser: crypto.randomUUID(),
  deletedLearner: crypto.randomUUID(),
  teacherAccUser: crypto.randomUUID(),
  teacherAcc: crypto.randomUUID(),
};

async function seedCentral(t: TestApp) {
  const db = t.tdb.db;
  await seedDemoContent(db);
  await db('documents').insert({
    documentid: ids.document,
    documenttypeid: 2,
    documentname: 'counting.mp4',
    documents3meta: JSON.stringify({ Key: 'counting.mp4' }),
    documenttags: JSON.stringify([]),
  });
  await db('lessonlearnings').insert({
    lessonlearningid: ids.learning,
    lessonlearningname: 'Watch',
    lessonlearningdescription: 'Watch the video',
    lessonlearningstatus: true,
    lessonid: DEMO.lessonid,
    documentid: ids.document,
    lessonlearningorder: 1,
    points: 5,
  });
  await db('questions').insert({
    questionid: ids.question,
    questionidentifier: 'Q1',
    templatetypeid: 1,
    questionstatus: true,
    questioncorrectvalue: 1,
    questiontext: 'How many?',
    questionheading: JSON.stringify({ heading: 'Count', headingfile: { filename: 'apples.png' } }),
    questionoptions: JSON.stringify([
      { option: '3', questionoptionfile: { filename: 'three.png' } },
      { option: '4', questionassociate: { questionassociatefile: { filename: 'four.mp3' } } },
    ]),
    questionfile: JSON.stringify({ filename: 'apples.png' }),
    questiondistractors: JSON.stringify([]),
    questiontags: JSON.stringify(['count']),
  });
  await db('lessonpractices').insert({
    lessonpracticeid: ids.practice,
    lessonid: DEMO.lessonid,
    lessonpracticeorder: 1,
    lessonpracticestatus: true,
    lessonpracticename: 'Practice',
    lessonpracticedescription: 'Try it',
    points: 10,
  });
  await db('lessonpracticequestions').insert({
    lessonpracticequestionid: ids.practiceQuestion,
    lessonpracticeid: ids.practice,
    questionid: ids.question,
    lessonpracticequestionstatus: true,
    lessonpracticequestionorder: 1,
  });
  await db('lessonquizzes').insert({
    lessonquizid: ids.quiz,
    lessonid: DEMO.lessonid,
    lessonquizorder: 1,
    lessonquizname: 'Quiz',
    lessonquizdescription: 'Show it',
    lessonquizstatus: true,
    points: 10,
  });
  await db('lessonquizquestions').insert({
    lessonquizquestionid: ids.quizQuestion,
    lessonquizid: ids.quiz,
    questionid: ids.question,
    lessonquizquestionstatus: true,
    lessonquizquestionorder: 1,
  });
  await db('levelquizquestions').insert({
    levelquizquestionid: ids.levelQuizQuestion,
    levelid: DEMO.levelid,
    questionid: ids.question,
    levelquizquestionstatus: true,
    levelquizquestionorder: 1,
    lessonid: DEMO.lessonid,
  });
  await db('curriculumbaseline').insert([
    {
      curriculumbaselineid: ids.baseline,
      curriculumid: DEMO.curriculumid,
      baselineid: crypto.randomUUID(),
      baselinename: 'Start',
      baselinetype: 1,
      baselinestatus: true,
      isdeleted: false,
      schoolid: JSON.stringify([DEMO.schoolid]),
    },
    {
      curriculumbaselineid: ids.deletedBaseline,
      curriculumid: DEMO.curriculumid,
      baselineid: crypto.randomUUID(),
      baselinename: 'Gone',
      baselinetype: 1,
      baselinestatus: true,
      isdeleted: true,
      schoolid: null,
    },
  ]);
  const learner = (
    schooluserid: string,
    studentid: string,
    name: string,
    extra: Record<string, unknown> = {},
    user: Record<string, unknown> = {},
  ) => ({
    user: {
      schooluserid,
      schoolusername: name,
      schooluserpasswordhash: `$argon2id$v=19$m=19456,t=2,p=1$${name}`,
      schooluserrole: 4,
      schoolname: DEMO.schoolname,
      ...user,
    },
    student: {
      studentid,
      studentfirstname: name,
      genderid: 1,
      standard: DEMO.standardid,
      schoolname: DEMO.schoolname,
      city: 'Town',
      country: DEMO.countryname,
      state: 'State',
      curriculumid: DEMO.curriculumid,
      curriculumids: JSON.stringify([DEMO.curriculumid]),
      schooluserid,
      isactive: true,
      type: 'online',
      ...extra,
    },
  });
  for (const l of [
    learner(ids.learnerUser, ids.learner, 'amina'),
    learner(ids.deletedUser, ids.deletedLearner, 'gone', { isdeleted: true }, { isdeleted: true }),
    learner(ids.teacherAccUser, ids.teacherAcc, 'tacc', { is_teacher_acc: true }, { schooluserrole: 3 }),
  ]) {
    await db('schoolusers').insert(l.user);
    await db('students').insert(l.student);
  }
  await db('studentprogress').insert({
    studentprogressid: crypto.randomUUID(),
    studentid: ids.learner,
    ispass: true,
    studentprogressreferenceid: ids.quiz,
    starttime: new Date().toISOString(),
    progresstype: 2,
    resultpercentage: 100,
  });
  await createSchoolUser(db, { schoolusername: 'teacher1', role: 3, schoolname: DEMO.schoolname });
}

let fakeUrl: string;
beforeAll(async () => {
  const url = await fake.start();
  fakeUrl = url;
  const env = { SERVER_SYNC_KEY: SYNC_KEY, APPLICATION_API_KEY: API_KEY, JWT_SECRET: 'jwt-secret-for-sync-tests' };
  t = await makeApp({ ...env, RPI_CLOUD: url });
  await seedCentral(t);
  await createStaff(t.tdb.db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.admin] });
  await createStaff(t.tdb.db, { lmsusername: 'super@example.org', roleids: [ROLE_IDS.superadmin] });
  await createStaff(t.tdb.db, { lmsusername: 'teacher@example.org', roleids: [ROLE_IDS.teacher] });
  admin = (await staffLogin(t.app, 'admin@example.org')).accessToken;
  superadmin = (await staffLogin(t.app, 'super@example.org')).accessToken;
  teacher = (await staffLogin(t.app, 'teacher@example.org')).accessToken;
  // The same database behind a central whose RPI_CLOUD points at nothing.
  down = await makeApp({ ...env, RPI_CLOUD: `http://127.0.0.1:${await closedPort()}` }, t.tdb);
});

afterAll(async () => {
  await fake.stop();
  await t.tdb.dispose();
});

beforeEach(() => {
  fake.received = [];
  fake.dropConnections = 0;
  fake.attempts = 0;
  fake.hang = false;
  fake.answer = () => ({ status: 200, body: { error: false, data: true } });
});

const download = (path: string, token: string) =>
  request(t.app).get(path).set('Authorization', bearer(token)).buffer(true).parse(binaryParser);

describe('GET /sync/content', () => {
  it('streams the 19-key package with every content row, soft-deleted ones too, but no deleted baseline', async () => {
    const res = await download('/sync/content', teacher);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="sync-data.zip"');
    const { name, json } = await readPackageJson({ buffer: res.body as Buffer });
    expect(name).toBe('syncfile.ini');
    const doc = json as Record<string, Array<Record<string, unknown>>>;
    expect(Object.keys(doc)).toEqual(CONTENT_KEY_LIST);
    expect(doc.curriculumbaselines.map((b) => b.curriculumbaselineid)).toEqual([ids.baseline]);
    expect(doc.questions).toHaveLength(1);
    expect(doc.questions[0]).toMatchObject({
      questionid: ids.question,
      questionheading: { heading: 'Count', headingfile: { filename: 'apples.png' } },
      questionstatus: true,
    });
    expect(doc.lessons[0]).toMatchObject({ lessonid: DEMO.lessonid, lessonstatus: true });
    expect(doc.lessons[0]).toHaveProperty('created_at');
    expect(doc.levelquizquestions[0]).toMatchObject({ lessonid: DEMO.lessonid });
    expect(doc.schools[0]).toMatchObject({ schoolid: DEMO.schoolid, curriculums: [DEMO.curriculumid] });
    expect(doc.documents[0]).toMatchObject({ documentname: 'counting.mp4' });
    // Learner data never rides in the curriculum package.
    expect(JSON.stringify(doc)).not.toContain('argon2');
  });

  it('gives the same bytes for the same data', async () => {
    const a = await download('/sync/content', teacher);
    const b = await download('/sync/content', teacher);
    expect(Buffer.compare(a.body as Buffer, b.body as Buffer)).toBe(0);
  });

  it('pages through more rows than one page holds, in key order', async () => {
    const extra = Array.from({ length: 1203 }, (_, i) => ({
      documentid: `e${String(i).padStart(5, '0')}-0000-4000-8000-000000000000`,
      documenttypeid: 6,
      documentname: `bulk-${i}.png`,
    }));
    for (let i = 0; i < extra.length; i += 200) await t.tdb.db('documents').insert(extra.slice(i, i + 200));
    try {
      const res = await download('/sync/content', teacher);
      const doc = (await readPackageJson({ buffer: res.body as Buffer })).json as Record<
        string,
        Array<Record<string, unknown>>
      >;
      const got = doc.documents.map((d) => d.documentid as string);
      expect(got).toHaveLength(1204);
      expect(new Set(got).size).toBe(1204);
      expect([...got].sort()).toEqual(got);
    } finally {
      await t.tdb.db('documents').whereIn('documentid', extra.map((e) => e.documentid)).delete();
    }
  });

  it('needs a signed-in caller', async () => {
    const res = await request(t.app).get('/sync/content');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: true, data: false });
  });
});

describe('GET /sync (older app format)', () => {
  it('has the 16 keys, global baselines with three columns and level-quiz questions without lessonid', async () => {
    await t.tdb.db('curriculumbaseline').where('curriculumbaselineid', ids.baseline).update({ created_by: null });
    const res = await download('/sync', teacher);
    expect(res.status).toBe(200);
    const doc = (await readPackageJson({ buffer: res.body as Buffer })).json as Record<
      string,
      Array<Record<string, unknown>>
    >;
    expect(Object.keys(doc)).toEqual(
      CONTENT_KEY_LIST.filter((k) => !['baselinequestion', 'lessonplans', 'subjects'].includes(k)),
    );
    expect(doc.curriculumbaselines).toEqual([
      { curriculumbaselineid: ids.baseline, curriculumid: DEMO.curriculumid, baselineid: expect.any(String) },
    ]);
    expect(doc.levelquizquestions[0]).not.toHaveProperty('lessonid');
    expect(doc.levelquizquestions[0]).toMatchObject({ levelquizquestionid: ids.levelQuizQuestion });
  });
});

describe('GET /sync/report-data', () => {
  it('answers the API key with content, school users (without hashes) and recent activity', async () => {
    const res = await request(t.app)
      .get('/sync/report-data')
      .set('Authorization', `Bearer ${API_KEY}`)
      .buffer(true)
      .parse(binaryParser);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    const doc = (await readPackageJson({ buffer: res.body as Buffer })).json as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['contents', 'students', 'studentprogress', 'studentresult', 'studentaccess']);
    const contents = doc.contents as Record<string, unknown[]>;
    expect(Object.keys(contents)).toContain('feedbacks');
    expect(Object.keys(contents)).toContain('schoolcontribution');
    const students = doc.students as Array<Record<string, unknown>>;
    const amina = students.find((s) => s.schooluserid === ids.learnerUser)!;
    expect(amina).toMatchObject({ schoolusername: 'amina', student: { studentid: ids.learner } });
    for (const s of students) expect(s).not.toHaveProperty('schooluserpasswordhash');
    expect(doc.studentresult).toHaveLength(1);
    expect(Object.keys(doc.studentprogress as object)).toEqual([
      'studentactives',
      'studentlearningprogress',
      'studentgradesprogress',
      'studentlevelsprogress',
      'studentlessonsprogress',
      'studentpoints',
      'studentappusages',
    ]);
  });

  it('refuses every staff role, superadmin included', async () => {
    const res = await request(t.app).get('/sync/report-data').set('Authorization', bearer(superadmin));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: true, data: false });
  });
});

describe('POST /sync/cloud', () => {
  it('PUTs the package to {RPI_CLOUD}/import/master with the raw key and answers ' +
      'what the classroom answered', async () => {
    const res = await request(t.app).post('/sync/cloud').set('Authorization', bearer(admin));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ error: false, data: true });
    expect(fake.received).toHaveLength(1);
    const r = fake.received[0];
    expect([r.method, r.url, r.authorization]).toEqual(['PUT', '/import/master', SYNC_KEY]);
    expect(r.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(r.file?.filename).toBe('importfile.zip');
    const sent = await readPackageJson({ buffer: r.file!.bytes });
    expect(sent.name).toBe('syncfile.ini');
    expect(Object.keys(sent.json as object)).toEqual(CONTENT_KEY_LIST);
    // The push and the download carry the same package.
    const downloaded = await download('/sync/content', teacher);
    expect(Buffer.compare(r.file!.bytes, downloaded.body as Buffer)).toBe(0);
  });

  it('is a 500 with the envelope when the classroom refuses the key', async () => {
    fake.answer = () => ({ status: 401, body: { error: true, errormessage: 'Unauthorized', data: false } });
    const res = await request(t.app).post('/sync/cloud').set('Authorization', bearer(superadmin));
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      error: true,
      data: false,
      errormessage: 'Classroom server refused the server sync key (401)',
    });
  });

  it('is a 500 with the envelope when the classroom refuses the package', async () => {
    fake.answer = () => ({ status: 400, body: { error: true, errormessage: 'Invalid file', data: false } });
    const res = await request(t.app).post('/sync/cloud').set('Authorization', bearer(admin));
    expect(res.status).toBe(500);
    expect(res.body.errormessage).toBe('Classroom server answered 400: Invalid file');
  });

  it('is a 500 with the envelope when RPI_CLOUD points at nothing', async () => {
    const res = await request(down.app).post('/sync/cloud').set('Authorization', bearer(admin));
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ error: true, data: false });
    expect(res.body.errormessage).toMatch(/^Classroom server is unreachable \(check RPI_CLOUD: ECONNREFUSED\)$/);
  });

  it('tries again after a dropped connection', async () => {
    fake.dropConnections = 1;
    const res = await request(t.app).post('/sync/cloud').set('Authorization', bearer(admin));
    expect(res.status).toBe(200);
    expect(fake.received).toHaveLength(1);
  });

  it('is for admins and superadmins only', async () => {
    const res = await request(t.app).post('/sync/cloud').set('Authorization', bearer(teacher));
    expect(res.status).toBe(403);
    expect(fake.received).toHaveLength(0);
  });
});

describe('POST /sync/cloud/:schoolname/students', () => {
  it('pushes the school roster, hashes included, soft-deleted learners and teacher accounts too', async () => {
    const res = await request(t.app)
      .post(`/sync/cloud/${encodeURIComponent(` ${DEMO.schoolname} `)}/students`)
      .set('Authorization', bearer(admin));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ error: false, data: true });
    expect(fake.received.map((x) => x.url)).toEqual(['/import/students', '/import/teachers']);
    const r = fake.received[0];
    expect([r.method, r.url, r.authorization, r.file?.filename]).toEqual([
      'PUT',
      '/import/students',
      SYNC_KEY,
      'importfile.zip',
    ]);
    const { name, json } = await readPackageJson({ buffer: r.file!.bytes });
    expect(name).toBe('students.ini');
    const users = (json as { studentusers: Array<Record<string, unknown> & { student: Record<string, unknown> }> })
      .studentusers;
    expect(users.map((u) => u.schoolusername).sort()).toEqual(['amina', 'gone', 'tacc']);
    const amina = users.find((u) => u.schooluserid === ids.learnerUser)!;
    expect(amina.schooluserpasswordhash).toBe('$argon2id$v=19$m=19456,t=2,p=1$amina');
    expect(amina.student).toMatchObject({ studentid: ids.learner, curriculumids: [DEMO.curriculumid], type: 'online' });
    expect(users.find((u) => u.schoolusername === 'gone')).toMatchObject({ isdeleted: true });
    // The plain teacher account has no learner row and stays out of the learners; it goes with the teachers,
    // its hash included, for it to sign in on the classroom server.
    expect(users.find((u) => u.schoolusername === 'teacher1')).toBeUndefined();
    const pushed = fake.received[1];
    expect([pushed.method, pushed.authorization, pushed.file?.filename]).toEqual(['PUT', SYNC_KEY, 'importfile.zip']);
    const teachers = await readPackageJson({ buffer: pushed.file!.bytes });
    expect(teachers.name).toBe('teachers.ini');
    const rows = teachers.json as Array<Record<string, unknown>>;
    expect(rows.map((u) => u.schoolusername).sort()).toEqual(['tacc', 'teacher1']);
    const teacher1 = rows.find((u) => u.schoolusername === 'teacher1')!;
    expect(teacher1.schooluserpasswordhash).toEqual(expect.any(String));
    expect(teacher1).toMatchObject({ schooluserrole: 3, schoolname: DEMO.schoolname });
  });

  it('is a 400 and sends nothing when the school has no learner', async () => {
    const res = await request(t.app).post('/sync/cloud/Nowhere%20School/students').set('Authorization', bearer(admin));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: true, errormessage: 'No student available', data: false });
    expect(fake.received).toHaveLength(0);
  });

  it('is a 500 when the classroom refuses the key', async () => {
    fake.answer = () => ({ status: 403, body: { error: true, errormessage: 'Forbidden resource', data: false } });
    const res = await request(t.app)
      .post(`/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`)
      .set('Authorization', bearer(admin));
    expect(res.status).toBe(500);
    expect(res.body.errormessage).toBe('Classroom server refused the server sync key (403)');
  });

  it('refuses a teacher', async () => {
    const res = await request(t.app)
      .post(`/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`)
      .set('Authorization', bearer(teacher));
    expect(res.status).toBe(403);
    expect(fake.received).toHaveLength(0);
  });
});

describe('content sent towards classrooms is recorded for the sync-status report', () => {
  beforeEach(async () => {
    await t.tdb.db('contentpushes').del();
  });

  it('a curriculum push (every school of the classroom server), with its sender and row count', async () => {
    expect((await request(t.app).post('/sync/cloud').set('Authorization', bearer(admin))).status).toBe(200);
    const rows = await t.tdb.db('contentpushes').select();
    expect(rows).toEqual([
      expect.objectContaining({ kind: 'content', schoolid: null, created_by_name: 'admin@example.org' }),
    ]);
    // Every row of the package: content rows of the seed (a curriculum, a grade, a level, a lesson, ...).
    const sent = await readPackageJson({ buffer: fake.received[0].file!.bytes });
    const rowsSent = Object.values(sent.json as Record<string, unknown[]>).reduce((n, list) => n + list.length, 0);
    expect(rows[0].rowcount).toBe(rowsSent);
  });

  it('a roster push for its school; nothing when the classroom refuses', async () => {
    expect(
      (
        await request(t.app)
          .post(`/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`)
          .set('Authorization', bearer(admin))
      ).status,
    ).toBe(200);
    expect(await t.tdb.db('contentpushes').select('kind', 'schoolid', 'rowcount')).toEqual([
      { kind: 'students', schoolid: DEMO.schoolid, rowcount: 3 },
    ]);
    fake.answer = () => ({ status: 400, body: { error: true, errormessage: 'Invalid file', data: false } });
    expect((await request(t.app).post('/sync/cloud').set('Authorization', bearer(admin))).status).toBe(500);
    expect(await t.tdb.db('contentpushes').count({ n: '*' }).first()).toMatchObject({ n: 1 });
  });

  it('a teacher of the school fetching the package for the classroom', async () => {
    const schoolTeacher = (await schoolLogin(t.app, 'teacher1')).accessToken;
    expect((await download('/sync/content', schoolTeacher)).status).toBe(200);
    const [row] = await t.tdb.db('contentpushes').select();
    expect(row).toMatchObject({ kind: 'download', schoolid: DEMO.schoolid, created_by_name: 'teacher1' });
    expect(row.rowcount).toBeGreaterThan(5);
    // A staff download is not tied to a school.
    expect((await download('/sync/content', teacher)).status).toBe(200);
    expect(await t.tdb.db('contentpushes').count({ n: '*' }).first()).toMatchObject({ n: 1 });
  });
});

describe('GET /export/:schoolname/students|teachers', () => {
  it('downloads the learners with their progress, without password hashes', async () => {
    const res = await download(`/export/${encodeURIComponent(DEMO.schoolname)}/students`, superadmin);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="students-${DEMO.schoolname}.zip"`);
    expect(res.headers['cache-control']).toBe('no-store');
    const { name, json } = await readPackageJson({ buffer: res.body as Buffer });
    expect(name).toBe('students.ini');
    const doc = json as { studentusers: Array<Record<string, unknown>>; studentprogresses: Record<string, unknown[]> };
    expect(doc.studentusers.map((u) => u.schoolusername).sort()).toEqual(['amina', 'gone']);
    for (const u of doc.studentusers) expect(u).not.toHaveProperty('schooluserpasswordhash');
    expect(Object.keys(doc.studentprogresses)).toEqual([
      'studentprogress',
      'studentgradesprogress',
      'studentlearningprogress',
      'studentlessonsprogress',
      'studentlevelsprogress',
    ]);
    expect(doc.studentprogresses.studentprogress).toHaveLength(1);
  });

  it('includes teacher accounts with cloud=true', async () => {
    const res = await download(`/export/${encodeURIComponent(DEMO.schoolname)}/students?cloud=true`, superadmin);
    const doc = (await readPackageJson({ buffer: res.body as Buffer })).json as {
      studentusers: Array<Record<string, unknown>>;
    };
    expect(doc.studentusers.map((u) => u.schoolusername).sort()).toEqual(['amina', 'gone', 'tacc']);
  });

  it('downloads the teachers as a bare array, without hashes', async () => {
    const res = await download(`/export/${encodeURIComponent(DEMO.schoolname)}/teachers`, superadmin);
    expect(res.status).toBe(200);
    const { name, json } = await readPackageJson({ buffer: res.body as Buffer });
    expect(name).toBe('teachers.ini');
    const rows = json as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.schoolusername).sort()).toEqual(['tacc', 'teacher1']);
    for (const r of rows) expect(r).not.toHaveProperty('schooluserpasswordhash');
  });

  it('names an unknown school', async () => {
    const res = await request(t.app).get('/export/Nowhere/students').set('Authorization', bearer(superadmin));
    expect([res.status, res.body]).toEqual([400, { error: true, errormessage: 'Invalid School Name', data: false }]);
  });

  it('needs the permission', async () => {
    const res = await request(t.app).get(`/export/${encodeURIComponent(DEMO.schoolname)}/students`);
    expect(res.status).toBe(401);
  });
});

describe('GET /export/documents/:curriculumid', () => {
  it("answers the curriculum's media names as a bare array, each once", async () => {
    const res = await request(t.app)
      .get(`/export/documents/${DEMO.curriculumid}`)
      .set('Authorization', bearer(superadmin));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(['counting.mp4', 'apples.png', 'three.png', 'four.mp3']);
  });

  it('refuses an unknown curriculum and a bad id', async () => {
    const unknown = await request(t.app)
      .get(`/export/documents/${crypto.randomUUID()}`)
      .set('Authorization', bearer(superadmin));
    expect([unknown.status, unknown.body.errormessage]).toEqual([400, 'Invalid Curriculum id']);
    const bad = await request(t.app).get('/export/documents/not-a-uuid').set('Authorization', bearer(superadmin));
    expect(bad.status).toBe(400);
  });
});

describe('PUT /import/:schoolname/teachers', () => {
  const upload = (school: string, csv: string, token = superadmin) =>
    request(t.app)
      .put(`/import/${encodeURIComponent(school)}/teachers`)
      .set('Authorization', bearer(token))
      .attach('importfile', Buffer.from(csv), 'teachers.csv');
  const teacherCount = async () =>
    Number(
      (
        await t.tdb
          .db('schoolusers')
          .where({ schooluserrole: 3, schoolname: DEMO.schoolname })
          .count({ n: '*' })
          .first()
      )?.n,
    );

  it('creates the listed teachers with hashed passwords', async () => {
    const res = await upload(
      DEMO.schoolname,
      'teacherusername,teacheruserpassword\r\nmsjoy,Pass1\n"mr,quoted",Pass2\n',
    );
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    const rows = await t.tdb
      .db('schoolusers')
      .whereIn('schoolusername', ['msjoy', 'mr,quoted'])
      .orderBy('schoolusername');
    expect(rows.map((r) => [r.schoolusername, r.schooluserrole, r.schoolname, r.schooluserstatus])).toEqual([
      ['mr,quoted', 3, DEMO.schoolname, true], ['msjoy', 3, DEMO.schoolname, true],
    ]);
    for (const r of rows) expect(r.schooluserpasswordhash).toMatch(/^\$argon2id\$/);
  });

  it('refuses a list with a known name and writes none of it', async () => {
    const before = await teacherCount();
    const res = await upload(
      DEMO.schoolname,
      'teacherusername,teacheruserpassword\nnewone,Pass1\nteacher1,Pass2\nnewone,Pass3\n',
    );
    expect([res.status, res.body]).toEqual([
      400,
      { error: true, errormessage: 'Duplicate teacher found : newone,teacher1', data: false },
    ]);
    expect(await teacherCount()).toBe(before);
  });

  it('refuses a row with an empty cell, a wrong header, ' +
      'an unknown school and a missing file, writing nothing', async () => {
    const before = await teacherCount();
    const empty = await upload(DEMO.schoolname, 'teacherusername,teacheruserpassword\nfine,Pass1\nnopass,\n');
    expect([empty.status, empty.body.errormessage]).toEqual([400, 'Invalid file']);
    const header = await upload(DEMO.schoolname, 'name,password\nx,y\n');
    expect([header.status, header.body.errormessage]).toEqual([400, 'Invalid file']);
    const school = await upload('Nowhere', 'teacherusername,teacheruserpassword\nx,y\n');
    expect([school.status, school.body.errormessage]).toEqual([400, 'Invalid School Name']);
    const none = await request(t.app)
      .put(`/import/${encodeURIComponent(DEMO.schoolname)}/teachers`)
      .set('Authorization', bearer(superadmin))
      .field('other', 'x');
    expect(none.status).toBe(400);
    expect(await teacherCount()).toBe(before);
    expect(await t.tdb.db('schoolusers').where('schoolusername', 'fine').first()).toBeUndefined();
  });
});

describe('PUT /import/:schoolname/teachers?cloud=true', () => {
  const csv = (name: string) => Buffer.from(`teacherusername,teacheruserpassword\n${name},Pass1\n`);

  it('also sends the new teachers, hashes included, to the classroom server', async () => {
    const res = await request(t.app)
      .put(`/import/${encodeURIComponent(DEMO.schoolname)}/teachers?cloud=true`)
      .set('Authorization', bearer(superadmin))
      .attach('importfile', csv('cloudteacher'), 't.csv');
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    expect(fake.received).toHaveLength(1);
    const r = fake.received[0];
    expect([r.method, r.url, r.authorization]).toEqual(['PUT', '/import/teachers', SYNC_KEY]);
    const { name, json } = await readPackageJson({ buffer: r.file!.bytes });
    expect(name).toBe('teachers.ini');
    const row = await t.tdb.db('schoolusers').where('schoolusername', 'cloudteacher').first();
    expect(json).toEqual([
      expect.objectContaining({
        schooluserid: row.schooluserid,
        schoolusername: 'cloudteacher',
        schooluserrole: 3,
        schooluserpasswordhash: row.schooluserpasswordhash,
      }),
    ]);
  });

  it('writes nothing centrally when the classroom server refuses them', async () => {
    fake.answer = () => ({ status: 401, body: { error: true, errormessage: 'Unauthorized', data: false } });
    const res = await request(t.app)
      .put(`/import/${encodeURIComponent(DEMO.schoolname)}/teachers?cloud=true`)
      .set('Authorization', bearer(superadmin))
      .attach('importfile', csv('refusedteacher'), 't.csv');
    expect([res.status, res.body.errormessage]).toEqual([500, 'Classroom server refused the server sync key (401)']);
    expect(await t.tdb.db('schoolusers').where('schoolusername', 'refusedteacher').first()).toBeUndefined();
  });
});

describe('online reports (proxied to the classroom server)', () => {
  const page = { pageindex: 1, pagesize: 10, filter: [{ key: 'standard', value: DEMO.standardid }] };

  it('forwards the body with the key and re-wraps a page', async () => {
    fake.answer = () => ({
      status: 200,
      body: { error: false, data: { data: [{ studentid: 's1' }], total: 41, pageindex: 1, pagesize: 10 } },
    });
    const res = await request(t.app)
      .post('/report/online/studentprogress')
      .set('Authorization', bearer(superadmin))
      .send(page);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      error: false,
      data: { data: [{ studentid: 's1' }], total: 41, pageindex: 1, pagesize: 10 },
    });
    expect(fake.received[0]).toMatchObject({
      method: 'POST',
      url: '/report/studentprogress',
      authorization: SYNC_KEY,
      json: page,
    });
  });

  it('keeps the different word order of the level-quiz route and carries the learner ' +
      'where the report has one', async () => {
    fake.answer = () => ({
      status: 200,
      body: { error: false, data: { data: [], total: 0, student: { studentfirstname: 'Amina' } } },
    });
    const quiz = await request(t.app)
      .post('/report/studentlevelquiz/online')
      .set('Authorization', bearer(superadmin))
      .send({});
    expect(fake.received[0].url).toBe('/report/studentlevelquiz');
    expect(quiz.body.data).toEqual({ data: [], total: 0, pageindex: 0, pagesize: 0 });
    const level = await request(t.app)
      .post('/report/online/student-level-progress')
      .set('Authorization', bearer(superadmin))
      .send({});
    expect(fake.received[1].url).toBe('/report/student-level-progress');
    expect(level.body.data).toEqual({
      data: [],
      total: 0,
      pageindex: 0,
      pagesize: 0,
      student: { studentfirstname: 'Amina' },
    });
  });

  it('answers a download as the CSV of the classroom\'s rows', async () => {
    const row = {
      schoolname: 'Demo School', schooluser: { schoolusername: 'u1' }, class: { standardname: 'Class 1' },
      level: { levelname: 'L1', grade: { gradename: 'G1', curriculum: { curriculumname: 'Demo' } } },
      laststudentprogress: { marks: 3, resultpercentage: 75, scores: 4, totalquestions: 4 },
    };
    fake.answer = () => ({ status: 200, body: { error: false, data: [row] } });
    const res = await request(t.app)
      .post('/report/online/studentlevelquiz/class/download')
      .set('Authorization', bearer(superadmin))
      .send({});
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/csv/);
    expect(res.text).toBe(
      'curriculum,school,userid,class,course,level,marks,totalquestions,percentage,quizscore,result\nDemo,Demo ' +
        'School,u1,Class 1,G1,L1,3,4,75%,4,Redo',
    );
    expect(fake.received[0].url).toBe('/report/studentlevelquiz/class/download');
  });

  it('limits the active-status report to the caller\'s schools when the account names some', async () => {
    const id = await createStaff(t.tdb.db, { lmsusername: 'scoped@example.org', roleids: [ROLE_IDS.admin] });
    await t.tdb.db('lmsusers').where('lmsuserid', id).update({ schools: JSON.stringify([DEMO.schoolid]) });
    const scoped = (await staffLogin(t.app, 'scoped@example.org')).accessToken;
    fake.answer = () => ({ status: 200, body: { error: false, data: { data: [], total: 0 } } });
    const body = { pageindex: 1, pagesize: 20, filter: [{ key: 'standard', value: 'x' }] };
    await request(t.app).post('/report/online/studentstatus').set('Authorization', bearer(scoped)).send(body);
    expect(fake.received[0].json).toEqual({
      ...body,
      filter: [
        { key: 'standard', value: 'x' },
        { key: 'schoolid', value: [DEMO.schoolid] },
      ],
    });
    await request(t.app).post('/report/online/studentstatus').set('Authorization', bearer(superadmin)).send(body);
    expect(fake.received[1].json).toEqual(body);
  });

  it('is a 500 on a wrong key or a wrong RPI_CLOUD', async () => {
    fake.answer = () => ({ status: 401, body: { error: true, errormessage: 'Unauthorized', data: false } });
    const key = await request(t.app)
      .post('/report/online/studentstatus')
      .set('Authorization', bearer(superadmin))
      .send({});
    expect([key.status, key.body.error, key.body.data]).toEqual([500, true, false]);
    const cloud = await request(down.app)
      .post('/report/online/studentstatus/download')
      .set('Authorization', bearer(superadmin))
      .send({});
    expect([cloud.status, cloud.body.error, cloud.body.data]).toEqual([500, true, false]);
  });

  it('refuses a malformed page without calling the classroom', async () => {
    const res = await request(t.app)
      .post('/report/online/studentprogress')
      .set('Authorization', bearer(superadmin))
      .send({ pagesize: 5000 });
    expect(res.status).toBe(400);
    expect(fake.received).toHaveLength(0);
  });
});

describe('classroom client', () => {
  const client = async (o: Partial<ConstructorParameters<typeof ClassroomClient>[0]> = {}) =>
    new ClassroomClient({ baseUrl: fakeUrl, serverSyncKey: SYNC_KEY, retryDelayMs: 10, ...o });

  it('gives up after a bounded number of attempts when the link keeps dropping', async () => {
    fake.dropConnections = 10;
    const c = await client({ attempts: 3 });
    await expect(c.postJson('/report/studentprogress', {})).rejects.toMatchObject({ kind: 'unreachable' });
    expect(fake.attempts).toBe(3);
    expect(fake.received).toHaveLength(0);
  });

  it('abandons a classroom server that stops answering, without retrying it', async () => {
    fake.hang = true;
    const c = await client({ idleTimeoutMs: 300, attempts: 3 });
    const started = Date.now();
    await expect(c.postJson('/report/studentprogress', {})).rejects.toMatchObject({
      kind: 'timeout',
      message: 'Classroom server did not answer in time (check RPI_CLOUD)',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fake.attempts).toBe(1);
  });

  it('does not retry a refused connection', async () => {
    const c = new ClassroomClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      serverSyncKey: SYNC_KEY,
      retryDelayMs: 2_000,
    });
    const started = Date.now();
    await expect(c.postJson('/x', {})).rejects.toMatchObject({ kind: 'unreachable' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});

describe('gates of the sync routes (spec: [admin, superadmin] for the pushes, [apikey] alone for report-data)', () => {
  it('answers each persona as the role lists say', async () => {
    await createStaff(t.tdb.db, { lmsusername: 'nobody@example.org', roleids: [] });
    const user = (await staffLogin(t.app, 'nobody@example.org')).accessToken;
    const personas: Array<[string, string | undefined]> = [
      ['anonymous', undefined],
      ['apikey', API_KEY],
      ['user', user],
      ['teacher', teacher],
      ['admin', admin],
      ['superadmin', superadmin],
    ];
    const routes: Array<[string, string, string[]]> = [
      ['POST', '/sync/cloud', ['admin', 'superadmin']],
      ['POST', `/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`, ['admin', 'superadmin']],
      ['GET', '/sync/report-data', ['apikey']],
    ];
    const got: string[] = [];
    const want: string[] = [];
    for (const [method, path, allowed] of routes) {
      for (const [name, token] of personas) {
        let r = method === 'GET' ? request(t.app).get(path) : request(t.app).post(path);
        if (token) r = r.set('Authorization', `Bearer ${token}`);
        const res = await r;
        got.push(`${name} ${method} ${path} ${res.status}`);
        // The API key is not a staff token: where its role is not listed there is no caller at all (401).
        const refused = token === undefined || name === 'apikey' ? 401 : 403;
        want.push(`${name} ${method} ${path} ${allowed.includes(name) ? 200 : refused}`);
      }
    }
    expect(got).toEqual(want);
    // Only the admitted pushes reached the classroom server.
    expect(fake.received.map((r) => r.url)).toEqual([
      '/import/master',
      '/import/master',
      '/import/students',
      '/import/teachers',
      '/import/students',
      '/import/teachers',
    ]);
  });
});
