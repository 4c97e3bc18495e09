import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent, type Knex } from '@lms/db';
import { CONTENT_COLUMNS, CONTENT_KEYS, ROLE_IDS, type ContentTable } from '@lms/shared';
import { closedPort, makeApp, type TestApp } from './helpers';
import { PASSWORD, createStaff, staffLogin } from './accounts';
import { hashPassword } from '../src/auth/passwords';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { tokenFor } from '../../classroom/test/auth-helpers';
import { main as syncContentCli, syncContent } from '../../scripts/src/sync-content';
import { hashPassword as classroomHash } from '../../classroom/src/auth/passwords';

// Both real servers on loopback ports: central pushes to the classroom server named by RPI_CLOUD, and a
// client downloads from central and uploads to the classroom, the two ways curriculum reaches a school.

const SYNC_KEY = 'shared-sync-key-for-e2e';
const LEARNER_PASSWORD = 'Learner1';

let central: TestApp;
let classroom: ClassroomTestApp;
let centralUrl: string;
let classroomUrl: string;
const servers: http.Server[] = [];
let admin: string;
let superadmin: string;
let teacher: string;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-e2e-sync-'));

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}


const ids = {
  question: crypto.randomUUID(),
  practice: crypto.randomUUID(),
  practiceQuestion: crypto.randomUUID(),
  learnerUser: crypto.randomUUID(),
  learner: crypto.randomUUID(),
};

async function seedCentral(db: Knex) {
  await seedDemoContent(db);
  await db('questions').insert({
    questionid: ids.question,
    questionidentifier: 'Q1',
    templatetypeid: 1,
    questionstatus: true,
    questioncorrectvalue: 1,
    questiontext: 'How many?',
    questionheading: JSON.stringify({ heading: 'Count' }),
    questionoptions: JSON.stringify([{ option: '3' }]),
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
  await db('schoolusers').insert({
    schooluserid: ids.learnerUser,
    schoolusername: 'amina',
    schooluserpasswordhash: await hashPassword(LEARNER_PASSWORD),
    schooluserrole: 4,
    schoolname: DEMO.schoolname,
  });
  await db('students').insert({
    studentid: ids.learner,
    studentfirstname: 'Amina',
    genderid: 2,
    standard: DEMO.standardid,
    schoolname: DEMO.schoolname,
    city: 'Town',
    country: DEMO.countryname,
    state: 'State',
    curriculumid: DEMO.curriculumid,
    curriculumids: JSON.stringify([DEMO.curriculumid]),
    gradeid: DEMO.gradeid,
    schooluserid: ids.learnerUser,
    isactive: true,
    type: 'online',
  });
}

const pkOf = (table: ContentTable) => Object.keys(CONTENT_COLUMNS[table])[0];

/** Every content row of the classroom server, table by table, in key order. */
async function classroomContent(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of Object.values(CONTENT_KEYS)) out[table] = await classroom.tdb.db(table).orderBy(pkOf(table));
  return out;
}

/** The classroom's rows must carry central's values in every column the classroom keeps. */
async function expectClassroomMatchesCentral() {
  for (const [key, table] of Object.entries(CONTENT_KEYS) as Array<[string, ContentTable]>) {
    const pk = pkOf(table);
    let q = central.tdb.db(table).orderBy(pk);
    if (key === 'curriculumbaselines') q = q.where('isdeleted', false);
    const want = (await q) as Array<Record<string, unknown>>;
    const got = (await classroom.tdb.db(table).orderBy(pk)) as Array<Record<string, unknown>>;
    expect(got.map((r) => r[pk]), table).toEqual(want.map((r) => r[pk]));
    const columns = Object.keys(CONTENT_COLUMNS[table]).filter((c) => c in (want[0] ?? {}) && c in (got[0] ?? {}));
    const pick = (r: Record<string, unknown>) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null]));
    expect(got.map(pick), table).toEqual(want.map(pick));
  }
}

beforeAll(async () => {
  // The classroom runs offline so that a teacher's device may upload a package it downloaded.
  classroom = await makeClassroomApp({
    SERVER_SYNC_KEY: SYNC_KEY,
    RPI_OFFLINE: 'true',
    JWT_SECRET: 'classroom-jwt-for-e2e',
  });
  classroomUrl = await listen(classroom.app);
  central = await makeApp({ SERVER_SYNC_KEY: SYNC_KEY, RPI_CLOUD: classroomUrl, JWT_SECRET: 'central-jwt-for-e2e' });
  centralUrl = await listen(central.app);
  await seedCentral(central.tdb.db);
  await createStaff(central.tdb.db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.admin] });
  await createStaff(central.tdb.db, { lmsusername: 'teacher@example.org', roleids: [ROLE_IDS.teacher] });
  await createStaff(central.tdb.db, { lmsusername: 'super@example.org', roleids: [ROLE_IDS.superadmin] });
  superadmin = (await staffLogin(central.app, 'super@example.org')).accessToken;
  admin = (await staffLogin(central.app, 'admin@example.org')).accessToken;
  teacher = (await staffLogin(central.app, 'teacher@example.org')).accessToken;
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  await central.tdb.dispose();
  await classroom.tdb.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const push = (app = central.app) => request(app).post('/sync/cloud').set('Authorization', `Bearer ${admin}`);

describe('server-side push (POST /sync/cloud)', () => {
  it('brings central content to an empty classroom server', async () => {
    expect(await classroom.tdb.db('lessons').count({ n: '*' }).first()).toEqual({ n: 0 });
    const res = await push();
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    await expectClassroomMatchesCentral();
    expect(await classroom.tdb.db('questions').where('questionid', ids.question).first()).toMatchObject({
      questionheading: { heading: 'Count' },
      questionstatus: true,
    });
  });

  it('changes nothing when pushed again', async () => {
    const before = await classroomContent();
    const res = await push();
    expect(res.status).toBe(200);
    expect(await classroomContent()).toEqual(before);
  });

  it('carries an edit and a removal made on central', async () => {
    await central.tdb.db('lessons').where('lessonid', DEMO.lessonid).update({ lessonname: 'Counting to twenty' });
    await central.tdb.db('lessonpracticequestions').where('lessonpracticequestionid', ids.practiceQuestion).delete();
    const res = await push();
    expect(res.status).toBe(200);
    expect(await classroom.tdb.db('lessons').where('lessonid', DEMO.lessonid).first()).toMatchObject({
      lessonname: 'Counting to twenty',
    });
    expect(
      await classroom.tdb.db('lessonpracticequestions').where('lessonpracticequestionid', ids.practiceQuestion).first(),
    ).toBeUndefined();
    await expectClassroomMatchesCentral();
  });
});

describe('a broken push leaves the classroom content as it was', () => {
  it('wrong key: 500 with the envelope, nothing applied', async () => {
    const before = await classroomContent();
    await central.tdb.db('lessons').where('lessonid', DEMO.lessonid).update({ lessonname: 'Never arrives (key)' });
    const wrongKey = await makeApp(
      { SERVER_SYNC_KEY: 'not-the-classroom-key', RPI_CLOUD: classroomUrl, JWT_SECRET: 'central-jwt-for-e2e' },
      central.tdb,
    );
    const res = await push(wrongKey.app);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      error: true,
      data: false,
      errormessage: 'Classroom server refused the server sync key (401)',
    });
    expect(await classroomContent()).toEqual(before);
  });

  it('classroom server down: 500 with the envelope', async () => {
    const down = await makeApp(
      {
        SERVER_SYNC_KEY: SYNC_KEY,
        RPI_CLOUD: `http://127.0.0.1:${await closedPort()}`,
        JWT_SECRET: 'central-jwt-for-e2e',
      },
      central.tdb,
    );
    const before = await classroomContent();
    const res = await push(down.app);
    expect(res.status).toBe(500);
    expect(res.body.errormessage).toMatch(/^Classroom server is unreachable/);
    expect(await classroomContent()).toEqual(before);
  });

  it('a package the classroom cannot apply: 500, and not one table changed', async () => {
    const before = await classroomContent();
    // A baseline of a curriculum that does not exist: the classroom's foreign key refuses it, last of all tables.
    const orphan = crypto.randomUUID();
    await central.tdb
      .db('curriculumbaseline')
      .insert({
        curriculumbaselineid: orphan,
        curriculumid: crypto.randomUUID(),
        baselineid: crypto.randomUUID(),
        isdeleted: false,
      });
    try {
      const res = await push();
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ error: true, data: false });
      expect(res.body.errormessage).toMatch(/^Classroom server answered 400: Invalid file/);
      expect(await classroomContent()).toEqual(before);
    } finally {
      await central.tdb.db('curriculumbaseline').where('curriculumbaselineid', orphan).delete();
      await central.tdb.db('lessons').where('lessonid', DEMO.lessonid).update({ lessonname: 'Counting to twenty' });
    }
  });
});

describe('rosters (POST /sync/cloud/:schoolname/students)', () => {
  it('brings the learners, and a pushed learner signs in on the classroom server with ' +
      'the password set centrally', async () => {
    const before = await request(classroomUrl)
      .post('/auth/login')
      .send({ studentusername: 'amina', studentpassword: LEARNER_PASSWORD });
    expect(before.status).toBe(400);
    const res = await request(central.app)
      .post(`/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`)
      .set('Authorization', `Bearer ${admin}`);
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    expect(await classroom.tdb.db('students').where('studentid', ids.learner).first()).toMatchObject({
      schooluserid: ids.learnerUser,
      curriculumids: [DEMO.curriculumid],
      type: 'online',
    });
    const login = await request(classroomUrl)
      .post('/auth/login')
      .send({ studentusername: 'amina', studentpassword: LEARNER_PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.data.accessToken).toEqual(expect.any(String));
    const wrong = await request(classroomUrl)
      .post('/auth/login')
      .send({ studentusername: 'amina', studentpassword: 'Wrong1' });
    expect(wrong.status).toBe(400);
  });

  it('changes nothing on the classroom when pushed again', async () => {
    const rows = async () => ({
      schoolusers: await classroom.tdb.db('schoolusers').orderBy('schooluserid'),
      students: await classroom.tdb.db('students').orderBy('studentid'),
    });
    const before = await rows();
    const res = await request(central.app)
      .post(`/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`)
      .set('Authorization', `Bearer ${admin}`);
    expect(res.status).toBe(200);
    expect(await rows()).toEqual(before);
  });

  it('a learner removed centrally can no longer sign in after the next push', async () => {
    await central.tdb.db('schoolusers').where('schooluserid', ids.learnerUser).update({ isdeleted: true });
    try {
      const res = await request(central.app)
        .post(`/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`)
        .set('Authorization', `Bearer ${admin}`);
      expect(res.status).toBe(200);
      const login = await request(classroomUrl)
        .post('/auth/login')
        .send({ studentusername: 'amina', studentpassword: LEARNER_PASSWORD });
      expect(login.status).toBe(400);
    } finally {
      await central.tdb.db('schoolusers').where('schooluserid', ids.learnerUser).update({ isdeleted: false });
      await request(central.app)
        .post(`/sync/cloud/${encodeURIComponent(DEMO.schoolname)}/students`)
        .set('Authorization', `Bearer ${admin}`);
    }
  });
});

describe('a roster pushed before its school\'s content', () => {
  it('answers 409 saying to push the content first, and the classroom keeps nothing of it', async () => {
    const db = central.tdb.db;
    const school = { schoolid: crypto.randomUUID(), schoolname: 'Riverside Primary' };
    const user = crypto.randomUUID();
    const student = crypto.randomUUID();
    await db('schools').insert({
      ...school,
      countryid: DEMO.countryid,
      curriculums: JSON.stringify([DEMO.curriculumid]),
    });
    await db('schoolusers').insert({
      schooluserid: user,
      schoolusername: 'riverkid',
      schooluserpasswordhash: await hashPassword(LEARNER_PASSWORD),
      schooluserrole: 4,
      schoolname: school.schoolname,
    });
    await db('students').insert({
      studentid: student,
      studentfirstname: 'River',
      genderid: 1,
      schoolname: school.schoolname,
      city: 'Town',
      country: DEMO.countryname,
      state: 'State',
      curriculumid: DEMO.curriculumid,
      curriculumids: JSON.stringify([DEMO.curriculumid]),
      gradeid: DEMO.gradeid,
      schooluserid: user,
      isactive: true,
      type: 'online',
    });
    const res = await request(central.app)
      .post(`/sync/cloud/${encodeURIComponent(school.schoolname)}/students`)
      .set('Authorization', `Bearer ${admin}`);
    expect([res.status, res.body]).toEqual([
      409,
      {
        error: true,
        data: false,
        errormessage:
          'Classroom server: This classroom server does not have school Riverside Primary: push the content first',
      },
    ]);
    expect(await classroom.tdb.db('students').where({ studentid: student }).first()).toBeUndefined();
    expect(await classroom.tdb.db('schoolusers').where({ schooluserid: user }).first()).toBeUndefined();
  });
});

describe('teachers imported centrally with cloud=true', () => {
  it('sign in on the classroom server with the password of the list', async () => {
    const res = await request(central.app)
      .put(`/import/${encodeURIComponent(DEMO.schoolname)}/teachers?cloud=true`)
      .set('Authorization', `Bearer ${superadmin}`)
      .attach('importfile', Buffer.from('teacherusername,teacheruserpassword\nmsjoy,Teach123\n'), 'teachers.csv');
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    expect(await classroom.tdb.db('schoolusers').where('schoolusername', 'msjoy').first()).toMatchObject({
      schooluserrole: 3,
      schoolname: DEMO.schoolname,
    });
    const login = await request(classroomUrl)
      .post('/auth/login')
      .send({ studentusername: 'msjoy', studentpassword: 'Teach123' });
    expect(login.status).toBe(200);
  });
});

describe('client-side: download from central, upload to the classroom', () => {
  it('the ZIP of GET /sync/content is accepted by PUT /import/master with a staff token', async () => {
    await central.tdb.db('levels').where('levelid', DEMO.levelid).update({ levelname: 'Level one (downloaded)' });
    const download = await request(centralUrl)
      .get('/sync/content')
      .set('Authorization', `Bearer ${teacher}`)
      .buffer(true)
      .parse((res, cb) => {
        const c: Buffer[] = [];
        res.on('data', (d: Buffer) => c.push(d));
        res.on('end', () => cb(null, Buffer.concat(c)));
      });
    expect(download.status).toBe(200);
    const staff = await tokenFor(classroom, 3);
    const upload = await request(classroomUrl)
      .put('/import/master')
      .set('Authorization', staff.auth)
      .attach('importfile', download.body as Buffer, 'sync-data.zip');
    expect([upload.status, upload.body]).toEqual([200, { error: false, data: true }]);
    expect(await classroom.tdb.db('levels').where('levelid', DEMO.levelid).first()).toMatchObject({
      levelname: 'Level one (downloaded)',
    });
    await expectClassroomMatchesCentral();
  });

  it('the sync-content tool downloads, saves and uploads, then uploads the saved file again offline', async () => {
    await central.tdb.db('grades').where('gradeid', DEMO.gradeid).update({ gradename: 'Grade one (tool)' });
    const staff = await tokenFor(classroom, 2);
    const saved = path.join(tmp, 'today.zip');
    const lines: string[] = [];
    await syncContent(
      { central: centralUrl, centralToken: teacher, classroom: classroomUrl, classroomToken: staff.token, save: saved },
      (l) => lines.push(l),
    );
    expect(fs.existsSync(saved)).toBe(true);
    expect(lines.some((l) => /^Downloaded /.test(l))).toBe(true);
    expect(lines.some((l) => /^Uploaded .*\(100%\)$/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe('Classroom server applied the package');
    expect(await classroom.tdb.db('grades').where('gradeid', DEMO.gradeid).first()).toMatchObject({
      gradename: 'Grade one (tool)',
    });

    // Offline from the saved file, with the server key this time: the same content, nothing changes.
    const before = await classroomContent();
    await syncContent({ file: saved, classroom: classroomUrl, syncKey: SYNC_KEY });
    expect(await classroomContent()).toEqual(before);
  });

  it('the command line signs in to both servers with passwords from the environment', async () => {
    await central.tdb
      .db('lessons')
      .where('lessonid', DEMO.lessonid)
      .update({ lessondescription: 'Synced by the command line' });
    const staff = await tokenFor(classroom, 3, { passwordhash: await classroomHash('Device123') });
    const out: string[] = [];
    const code = await syncContentCli(
      [
        '--central',
        centralUrl,
        '--central-user',
        'admin@example.org',
        '--classroom',
        classroomUrl,
        '--classroom-user',
        staff.schoolusername,
      ],
      { LMS_CENTRAL_PASSWORD: PASSWORD, LMS_CLASSROOM_PASSWORD: 'Device123' },
      (text) => out.push(text),
    );
    expect(code).toBe(0);
    expect(await classroom.tdb.db('lessons').where('lessonid', DEMO.lessonid).first()).toMatchObject({
      lessondescription: 'Synced by the command line',
    });
    const wrong = await syncContentCli(
      ['--central', centralUrl, '--central-user', 'admin@example.org', '--save', path.join(tmp, 'y.zip')],
      { LMS_CENTRAL_PASSWORD: 'Wrong1234' },
      (text) => out.push(text),
    );
    expect(wrong).toBe(1);
    expect(out.at(-1)).toBe('sync-content: Signing in to the central API failed: 400: User/Password not matching\n');
    expect(fs.existsSync(path.join(tmp, 'y.zip'))).toBe(false);
    expect(await syncContentCli(['--bogus'], {}, (text) => out.push(text))).toBe(2);
  });

  it('the tool refuses a corrupted file before sending it, and reports a classroom refusal clearly', async () => {
    const before = await classroomContent();
    const saved = path.join(tmp, 'today.zip');
    const broken = path.join(tmp, 'broken.zip');
    const bytes = fs.readFileSync(saved);
    fs.writeFileSync(broken, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await expect(syncContent({ file: broken, classroom: classroomUrl, syncKey: SYNC_KEY })).rejects.toThrow(
      /broken\.zip is not a usable curriculum package/,
    );
    await expect(syncContent({ file: saved, classroom: classroomUrl, syncKey: 'wrong-key' })).rejects.toThrow(
      /^Classroom server refused the package: 401: .*Its content is unchanged\.$/,
    );
    await expect(
      syncContent({ central: centralUrl, centralToken: 'not-a-token', save: path.join(tmp, 'x.zip') }),
    ).rejects.toThrow(/^Central API refused the download: 401/);
    await expect(
      syncContent({ file: saved, classroom: `http://127.0.0.1:${await closedPort()}`, syncKey: SYNC_KEY }),
    ).rejects.toThrow(/^Nothing answers at/);
    expect(await classroomContent()).toEqual(before);
  });

  it('the older app format of GET /sync is refused by the classroom, which keeps its content', async () => {
    const before = await classroomContent();
    const legacy = await request(centralUrl)
      .get('/sync')
      .set('Authorization', `Bearer ${teacher}`)
      .buffer(true)
      .parse((res, cb) => {
        const c: Buffer[] = [];
        res.on('data', (d: Buffer) => c.push(d));
        res.on('end', () => cb(null, Buffer.concat(c)));
      });
    expect(legacy.status).toBe(200);
    const res = await request(classroomUrl)
      .put('/import/master')
      .set('Authorization', SYNC_KEY)
      .attach('importfile', legacy.body as Buffer, 'sync-data.zip');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, data: false });
    expect(await classroomContent()).toEqual(before);
  });

  it('a corrupted upload straight to the classroom is refused and changes nothing', async () => {
    const before = await classroomContent();
    const staff = await tokenFor(classroom, 3);
    const res = await request(classroomUrl)
      .put('/import/master')
      .set('Authorization', staff.auth)
      .attach('importfile', Buffer.from('PK\u0003\u0004 truncated'), 'sync-data.zip');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(true);
    expect(await classroomContent()).toEqual(before);
  });
});
