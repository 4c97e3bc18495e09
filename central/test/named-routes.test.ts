import crypto from 'node:crypto';
import type { Server } from 'node:http';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS as DEMO, DEMO_TEXT, ROLE_IDS } from '@lms/shared';
import { seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';
import { createStaff, schoolLogin, staffLogin } from './accounts';

// A stand-in classroom server: records roster pushes and answers the baseline results.
const pushes: Array<{ path: string; auth?: string; type?: string; bytes: number }> = [];
let classroomDown = false;
let classroom: Server;
let classroomUrl = '';

const API_KEY = 'named-routes-key';
let t: TestApp;
const auth: Record<string, string> = {};
beforeAll(async () => {
  const fake = express();
  fake.put(['/import/students', '/import/teachers'], (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pushes.push({
        path: req.path,
        auth: req.headers.authorization,
        type: req.headers['content-type'],
        bytes: Buffer.concat(chunks).length,
      });
      if (classroomDown) res.status(500).json({ error: true });
      else res.json({ error: false, data: true });
    });
  });
  fake.get('/curriculum/:id/getstudentresult', (req, res) => {
    if (classroomDown) {
      res.status(500).end();
      return;
    }
    res.json([
      {
        ispass: 1,
        resultpercentage: 90,
        marks: 9,
        scores: 45,
        totalquestions: 2,
        student: {
          studentfirstname: 'Offline Olu',
          schoolname: DEMO.schoolname,
          schooluser: { schoolusername: 'olu1' },
        },
        curriculumbaseline: { baselinename: 'Term 1' },
      },
    ]);
  });
  classroom = fake.listen(0, '127.0.0.1');
  await new Promise((r) => classroom.once('listening', r));
  const addr = classroom.address();
  classroomUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;

  t = await makeApp({
    APPLICATION_API_KEY: API_KEY,
    SERVER_SYNC_KEY: 'sync-key-xyz',
    RPI_CLOUD: classroomUrl,
    RATE_LIMIT_MAX: '100000',
  });
  await seedDemo(t.tdb.db);
  for (const [k, roleid] of Object.entries({
    user: ROLE_IDS.user,
    teacher: ROLE_IDS.teacher,
    admin: ROLE_IDS.admin,
    superadmin: ROLE_IDS.superadmin,
  })) {
    await createStaff(t.tdb.db, { lmsusername: `${k}@named.test`, roleids: [roleid] });
    auth[k] = `Bearer ${(await staffLogin(t.app, `${k}@named.test`)).accessToken}`;
  }
  auth.apikey = `Bearer ${API_KEY}`;
  auth.schoolteacher = `Bearer ${(await schoolLogin(t.app, 'demo.teacher', 'demo')).accessToken}`;
});
afterAll(async () => {
  await new Promise((r) => classroom.close(r));
  await t.tdb.dispose();
});

const get = (url: string, who?: string) => {
  const r = request(t.app).get(url);
  return who ? r.set('Authorization', auth[who]) : r;
};
const post = (url: string, who: string | undefined, body: object) => {
  const r = request(t.app).post(url);
  return (who ? r.set('Authorization', auth[who]) : r).send(body);
};
const count = async (table: string, where: object = {}) =>
  Number((await t.tdb.db(table).where(where).count({ n: '*' }).first())?.n);

describe('the six filter feeds', () => {
  it('answer the teacher and the API key, and refuse User (403) and anonymous (401)', async () => {
    const feeds = [
      '/curriculum/all',
      '/standard/all',
      '/country/',
      '/school/',
      `/grade/curriculum/${DEMO.curriculumid}`,
      `/curriculum/country/${DEMO.countryid}`,
    ];
    for (const url of feeds) {
      for (const who of ['teacher', 'apikey', 'admin', 'superadmin'])
        expect([url, who, (await get(url, who)).status]).toEqual([url, who, 200]);
      expect((await get(url, 'user')).status).toBe(403);
      expect((await get(url, 'schoolteacher')).status).toBe(403);
      expect((await get(url)).status).toBe(401);
    }
  });

  it('answer the id/name pairs the admin UI reads', async () => {
    expect((await get('/curriculum/all', 'teacher')).body.data).toEqual([
      expect.objectContaining({ curriculumid: DEMO.curriculumid, curriculumname: DEMO.curriculumname }),
    ]);
    expect((await get(`/curriculum/all?schoolname=${encodeURIComponent('Nowhere')}`, 'teacher')).body.data).toEqual([]);
    expect((await get('/standard/all', 'teacher')).body.data).toEqual([
      { standardid: DEMO.standardid, standardname: DEMO.standardname, school: { schoolname: DEMO.schoolname } },
    ]);
    expect((await get('/country/', 'teacher')).body.data).toEqual([
      expect.objectContaining({ countryid: DEMO.countryid, countryname: DEMO.countryname }),
    ]);
    expect((await get('/school/', 'teacher')).body.data).toEqual([
      {
        schoolname: DEMO.schoolname,
        schooltype: DEMO_TEXT.school.schooltype,
        city: DEMO_TEXT.school.city,
        country: DEMO.countryname,
        state: DEMO_TEXT.school.state,
      },
    ]);
    const grades = (await get(`/grade/curriculum/${DEMO.curriculumid}`, 'teacher')).body.data;
    expect(grades).toEqual([
      expect.objectContaining({
        gradeid: DEMO.gradeid,
        gradename: DEMO.gradename,
        curriculumname: DEMO.curriculumname,
      }),
    ]);
    expect(
      (await get(`/curriculum/country/${DEMO.countryid}`, 'teacher')).body.data.map(
        (c: { curriculumid: string }) => c.curriculumid,
      ),
    ).toEqual([DEMO.curriculumid]);
    const badId = await get('/grade/curriculum/not-a-uuid', 'teacher');
    expect([badId.status, badId.body.errormessage]).toEqual([400, '"Curriculum ID" must be a valid GUID']);
    const noCountry = await get(`/curriculum/country/${crypto.randomUUID()}`, 'teacher');
    expect([noCountry.status, noCountry.body.errormessage]).toEqual([400, 'Invalid country id']);
  });
});

const learner = (schoolusername: string, extra: object = {}) => ({
  studentfirstname: 'Kofi',
  studentlastname: 'Mensah',
  mothername: 'Ama',
  fathername: 'Yaw',
  contact: '0555',
  dateofbirth: '02-03-2016',
  dateofjoin: '05-01-2026',
  genderid: '1',
  wg_seeing: '1',
  wg_hearing: '4',
  wg_walking: '',
  wg_remembering: null,
  city: 'Accra',
  country: DEMO.countryname,
  state: 'Greater Accra',
  schoolusername,
  schooluserpasswordhash: 'pass1',
  ...extra,
});
const createBody = (students: object[]) => ({
  curriculumid: [DEMO.curriculumid],
  schoolid: DEMO.schoolid,
  standard: DEMO.standardid,
  students,
});

describe('POST /student/create', () => {
  it('creates school users and learners with their Washington Group answers', async () => {
    const res = await post(
      '/student/create?online=false',
      'admin',
      createBody([learner('kofi1'), learner('esi1', { studentfirstname: 'Esi', genderid: '2', wg_hearing: '' })]),
    );
    expect(res.body).toEqual({ error: false, data: true });
    const kofi = await t.tdb
      .db('students as s')
      .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .where('u.schoolusername', 'kofi1')
      .first();
    expect(kofi).toMatchObject({
      schooluserrole: 4,
      schoolname: DEMO.schoolname,
      wg_seeing: 1,
      wg_hearing: 4,
      wg_walking: null,
      wg_source: 1,
      type: 'offline',
      standard: DEMO.standardid,
      curriculumids: [DEMO.curriculumid],
    });
    expect(kofi.dateofbirth).toBe('2016-03-02T00:00:00.000Z');
    expect(kofi.schooluserpasswordhash).toMatch(/^\$argon2id\$/);
    const esi = await t.tdb.db('students').where({ studentfirstname: 'Esi' }).first();
    expect(esi.wg_hearing).toBeNull();
  });

  it('refuses taken usernames, a missing class and bad rows, writing nothing', async () => {
    const before = [await count('schoolusers'), await count('students')];
    const taken = await post('/student/create', 'admin', createBody([learner('KOFI1'), learner('new1')]));
    expect([taken.status, taken.body.errormessage]).toEqual([400, 'Students already exists, kofi1']);
    const noClass = await post('/student/create', 'admin', { ...createBody([learner('new2')]), standard: '' });
    expect([noClass.status, noClass.body.errormessage]).toEqual([400, 'Student must has a class!']);
    const badName = await post('/student/create', 'admin', createBody([learner('bad name!')]));
    expect(badName.status).toBe(400);
    const badWg = await post('/student/create', 'admin', createBody([learner('new3', { wg_seeing: '5' })]));
    expect(badWg.status).toBe(400);
    const noSchool = await post('/student/create', 'admin', {
      ...createBody([learner('new4')]),
      schoolid: crypto.randomUUID(),
    });
    expect([noSchool.status, noSchool.body.errormessage]).toEqual([400, 'Invalid School Name']);
    expect([await count('schoolusers'), await count('students')]).toEqual(before);
  });

  it('admits the API key; refuses a Teacher and a User with 403 and anonymous with 401', async () => {
    expect((await post('/student/create', 'apikey', createBody([learner('viakey1')]))).status).toBe(200);
    for (const who of ['teacher', 'user', 'schoolteacher'])
      expect((await post('/student/create', who, createBody([learner('nope1')]))).status).toBe(403);
    expect((await post('/student/create', undefined, createBody([learner('nope1')]))).status).toBe(401);
    expect(await count('schoolusers', { schoolusername: 'nope1' })).toBe(0);
  });

  it('pushes the new learners to the classroom server with ?cloud=true, ' +
      'and writes nothing when it refuses', async () => {
    pushes.length = 0;
    expect((await post('/student/create?cloud=true', 'admin', createBody([learner('cloud1')]))).status).toBe(200);
    expect(pushes).toEqual([
      {
        path: '/import/students',
        auth: 'sync-key-xyz',
        type: expect.stringMatching(/^multipart\/form-data/),
        bytes: expect.any(Number),
      },
    ]);
    classroomDown = true;
    try {
      const res = await post('/student/create?cloud=true', 'admin', createBody([learner('cloud2')]));
      expect(res.status).toBe(500);
      expect(await count('schoolusers', { schoolusername: 'cloud2' })).toBe(0);
    } finally {
      classroomDown = false;
    }
  });
});

describe('GET /student/all and /student/download-students', () => {
  it('gives an admin the learner identity fields with the six wg_* answers', async () => {
    const res = await get(`/student/all?schoolname=${encodeURIComponent(DEMO.schoolname)}`, 'admin');
    expect(res.status).toBe(200);
    const amina = res.body.data.find((s: { studentfirstname: string }) => s.studentfirstname === 'Amina');
    expect(amina).toMatchObject({
      studentlastname: 'Okafor',
      mothername: 'Demo Mother',
      fathername: 'Demo Father',
      dateofbirth: '2017-03-14T00:00:00.000Z',
      schooluser: { schoolusername: 'demo.student' },
    });
    for (const k of [
      'wg_seeing',
      'wg_hearing',
      'wg_walking',
      'wg_remembering',
      'wg_selfcare',
      'wg_communicating',
      'contact',
    ])
      expect(amina).toHaveProperty(k);
    expect(JSON.stringify(res.body)).not.toMatch(/argon2/);
  });

  it('refuses a teacher (403), the API key (401: no apikey on the route gate) and anonymous (401)', async () => {
    expect((await get('/student/all', 'teacher')).status).toBe(403);
    expect((await get('/student/all', 'apikey')).status).toBe(401);
    expect((await get('/student/all')).status).toBe(401);
  });

  it('downloads the learner CSV for an admin and the API key only', async () => {
    const res = await get(`/student/download-students?schoolname=${encodeURIComponent(DEMO.schoolname)}`, 'apikey');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/csv/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="students-${DEMO.schoolname}.csv"`);
    const [header, ...rows] = res.text.split('\n');
    expect(header).toBe(
      'studentid,schooluserid,schoolusername,schoolname,curriculums,standard,' +
        'studentfirstname,studentlastname,familyname,mothername,fathername,contact,genderid,' +
        'wg_seeing,wg_hearing,wg_walking,wg_remembering,wg_selfcare,wg_communicating,' +
        'dateofbirth,dateofjoin,schooltype,city,country,state,type,isactive,schooluserpasswordhash,is_teacher_acc',
    );
    const amina = rows.find((r) => r.includes('demo.student,'))!;
    expect(amina).toContain(`,${DEMO.curriculumname},${DEMO.standardname},Amina,Okafor,`);
    expect(amina).toContain(',14-03-2017,05-01-2026,');
    expect((await get('/student/download-students', 'teacher')).status).toBe(403);
    expect((await get('/student/download-students')).status).toBe(401);
    const unknown = await get('/student/download-students?schoolname=Nowhere', 'admin');
    expect([unknown.status, unknown.body.errormessage]).toEqual([400, 'School does not exists!']);
  });
});

describe('POST /teacher/create', () => {
  it('creates teacher school users; refuses duplicates and non-admin accounts', async () => {
    const body = {
      schoolname: DEMO.schoolname,
      teachers: [{ schoolusername: 'mrsbee', schooluserpasswordhash: 'bee123' }],
    };
    expect((await post('/teacher/create', 'admin', body)).body).toEqual({ error: false, data: true });
    expect(await t.tdb.db('schoolusers').where({ schoolusername: 'mrsbee' }).first()).toMatchObject({
      schooluserrole: 3,
      schoolname: DEMO.schoolname,
    });
    const again = await post('/teacher/create', 'admin', body);
    expect([again.status, again.body.errormessage]).toEqual([400, 'Teachers already exists, mrsbee']);
    expect(
      (
        await post('/teacher/create', 'teacher', {
          ...body,
          teachers: [{ schoolusername: 'x2', schooluserpasswordhash: 'x' }],
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await post('/teacher/create', 'user', {
          ...body,
          teachers: [{ schoolusername: 'x2', schooluserpasswordhash: 'x' }],
        })
      ).status,
    ).toBe(403);
    expect(await count('schoolusers', { schoolusername: 'x2' })).toBe(0);
    await schoolLogin(t.app, 'mrsbee', 'bee123');
  });
});

describe('data migrations', () => {
  it('run for superadmin only, without a key parameter', async () => {
    const db = t.tdb.db;
    await db('standards').insert({
      standardid: crypto.randomUUID(),
      standardname: 'Class 9',
      schoolid: null,
      schoolname: null,
    });
    await db('students')
      .where({ studentfirstname: 'Esi' })
      .update({ standard: DEMO.standardname, curriculumids: null });
    for (const url of [
      '/standard/migrate-standardid',
      '/standard/remove-standardid',
      '/student/migrate-standardid',
      '/student/migrate-subject-curriculum',
    ]) {
      expect((await post(url, 'admin', {})).status).toBe(403);
      expect((await post(url, 'apikey', {})).status).toBe(401);
    }
    expect((await post('/standard/migrate-standardid', 'superadmin', {})).body).toEqual({
      error: false,
      data: 'Migrated successfully!',
    });
    expect(await count('standards', { standardname: 'Class 9', schoolid: DEMO.schoolid })).toBe(1);
    expect((await post('/student/migrate-standardid', 'superadmin', {})).body.data).toBe('Migrated successfully!');
    expect((await post('/student/migrate-subject-curriculum', 'superadmin', {})).body.data).toBe(
      'Migrated successfully!',
    );
    expect(await db('students').where({ studentfirstname: 'Esi' }).first()).toMatchObject({
      standard: DEMO.standardid,
      curriculumids: [DEMO.curriculumid],
    });
    expect((await post('/standard/remove-standardid', 'superadmin', {})).body.data).toBe('Removed class successfully!');
    expect(await count('standards', { standardname: 'Class 9' })).toBe(0);
    expect(await count('standards', { standardid: DEMO.standardid })).toBe(1);
    expect((await post('/standard/migrate-standardid/abc', 'superadmin', {})).status).toBe(404);
  });
});

describe('reports a teacher may read', () => {
  it('POST /report/studentstatus: usernames, school, class and activity, no learner names', async () => {
    const amina = await t.tdb.db('students').where({ studentfirstname: 'Amina' }).first();
    await t.tdb
      .db('rpiuseraccess')
      .insert({
        rpiuseraccessid: 'a1',
        userid: amina.schooluserid,
        logintime: new Date().toISOString(),
        ipaddress: '10.0.0.2',
      });
    await t.tdb
      .db('studentappusages')
      .insert({ studentappusageid: crypto.randomUUID(), schooluserid: amina.schooluserid, time_spent: 121 });
    const res = await post('/report/studentstatus', 'teacher', {
      pageindex: 1,
      pagesize: 100,
      filter: [{ key: 'schoolname', value: DEMO.schoolname }],
    });
    expect(res.status).toBe(200);
    const row = res.body.data.data.find((r: { schooluserid: string }) => r.schooluserid === amina.schooluserid);
    expect(row).toMatchObject({
      schooluser: { schoolusername: 'demo.student' },
      class: { standardname: DEMO.standardname },
      curriculum: { curriculumname: DEMO.curriculumname },
      status: true,
      totalusages: 3,
    });
    expect(row.school).toMatchObject({ schoolid: DEMO.schoolid, countries: { countryname: DEMO.countryname } });
    expect(res.body.data.total).toBeGreaterThan(3);
    const never = res.body.data.data.find(
      (r: { schooluser: { schoolusername: string } }) => r.schooluser.schoolusername === 'demo.bopha',
    );
    expect(never).not.toHaveProperty('lastLogin');
    expect(JSON.stringify(res.body)).not.toMatch(/Amina|Okafor|Demo Mother/);
    expect((await post('/report/studentstatus', 'user', {})).status).toBe(403);
    expect((await post('/report/studentstatus', 'teacher', { pageindex: -1 })).body.errormessage).toBe(
      'Invalid page index',
    );
  });

  it('GET /report/disability: three counts and nothing else', async () => {
    const res = await get('/report/disability?countryid=all&schoolname=', 'teacher');
    expect(res.status).toBe(200);
    const total = await count('students', { isdeleted: false });
    const data = res.body.data as Array<{ name: string; value: number }>;
    expect(data.map((d) => d.name)).toEqual(['with disability', 'no disability', 'not collected']);
    expect(data.reduce((a, d) => a + d.value, 0)).toBe(total);
    expect(data[0].value).toBeGreaterThanOrEqual(2); // Jonas (hearing 3) and Kofi (hearing 4)
    const school = await get(
      `/report/disability?countryid=&schoolname=${encodeURIComponent(DEMO.schoolname)}`,
      'teacher',
    );
    expect(school.body.data.reduce((a: number, d: { value: number }) => a + d.value, 0)).toBe(total);
    expect(
      (await get('/report/disability?schoolname=Nowhere', 'teacher')).body.data.every(
        (d: { value: number }) => d.value === 0,
      ),
    ).toBe(true);
  });
});

describe('GET /curriculumbaseline/:id/download', () => {
  it('gives an admin learner identity with results from the cloud and the classroom; ' +
      'teacher 403, anonymous 401', async () => {
    const db = t.tdb.db;
    const id = crypto.randomUUID();
    await db('curriculumbaseline').insert({
      curriculumbaselineid: id,
      curriculumid: DEMO.curriculumid,
      baselineid: DEMO.curriculumid,
      baselinename: 'Term 1',
      baselinetype: 1,
      schoolid: JSON.stringify([DEMO.schoolid]),
    });
    await db('baselinequestion').insert([
      { baselinequestionid: crypto.randomUUID(), curriculumbaselineid: id },
      { baselinequestionid: crypto.randomUUID(), curriculumbaselineid: id },
    ]);
    const amina = await db('students').where({ studentfirstname: 'Amina' }).first();
    await db('studentprogress').insert({
      studentprogressid: crypto.randomUUID(),
      studentid: amina.studentid,
      studentprogressreferenceid: id,
      progresstype: 3,
      ispass: false,
      resultpercentage: 50,
      marks: 1,
      scores: 10,
    });
    expect((await get(`/curriculumbaseline/${id}/download`)).status).toBe(401);
    expect((await get(`/curriculumbaseline/${id}/download`, 'teacher')).status).toBe(403);
    const res = await get(`/curriculumbaseline/${id}/download`, 'admin');
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="students-results.csv"');
    expect(res.text.split('\n')).toEqual([
      'student,username,schoolname,baselinename,ispass,resultpercentage,correct,totalquestions,scores',
      `Amina,demo.student,${DEMO.schoolname},Term 1,,50,1,2,10`,
      `Offline Olu,olu1,${DEMO.schoolname},Term 1,Pass,90,9,2,45`,
    ]);
    classroomDown = true;
    try {
      expect((await get(`/curriculumbaseline/${id}/download`, 'admin')).status).toBe(500);
    } finally {
      classroomDown = false;
    }
  });
});
