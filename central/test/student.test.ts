import crypto from 'node:crypto';
import type { Server } from 'node:http';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, schoolLogin, staffLogin } from './accounts';
import { addLearner, callers, seedWorld, snapshot, type Who, type World } from './people-fixtures';

const API_KEY = 'student-test-key';
let t: TestApp;
let w: World;
let as: Record<Who, string>;
let classroom: Server;
const classroomLogins: Array<{ userid: string; logintime: string }> = [];
const place = {
  grade: crypto.randomUUID(),
  level: crypto.randomUUID(),
  lesson1: crypto.randomUUID(),
  lesson2: crypto.randomUUID(),
  quiz1: crypto.randomUUID(),
  quiz2: crypto.randomUUID(),
  practice: crypto.randomUUID(),
};
let amina: { studentid: string; schooluserid: string };
let bilal: { studentid: string; schooluserid: string };
let chen: { studentid: string; schooluserid: string };

beforeAll(async () => {
  // A stand-in classroom server that knows some sign-in times.
  const fake = express();
  fake.post('/student/logintime', express.json(), (req, res) => {
    const ids = new Set(req.body as string[]);
    res.json({ error: false, data: classroomLogins.filter((l) => ids.has(l.userid)) });
  });
  classroom = fake.listen(0, '127.0.0.1');
  await new Promise((r) => classroom.once('listening', r));
  const addr = classroom.address();
  t = await makeApp({
    APPLICATION_API_KEY: API_KEY,
    RPI_CLOUD: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    RATE_LIMIT_MAX: '100000',
  });
  const db = t.tdb.db;
  w = await seedWorld(db);
  as = await callers(t, w, API_KEY);

  amina = await addLearner(db, {
    schoolname: 'Accra Primary',
    standard: w.classA1,
    schoolusername: 'amina1',
    curriculumids: [w.curriculum1, w.curriculum2],
    studentfirstname: 'Amina',
    extra: { mothername: 'Ama', wg_seeing: 2 },
  });
  bilal = await addLearner(db, {
    schoolname: 'Accra Primary',
    standard: w.classA2,
    schoolusername: 'bilal1',
    curriculumids: [w.curriculum2],
    studentfirstname: 'Bilal',
    extra: { city: 'Tema' },
  });
  chen = await addLearner(db, {
    schoolname: 'Bamako Primary',
    standard: w.classB1,
    schoolusername: 'chen1',
    curriculumids: [w.curriculum1],
    studentfirstname: 'Chen',
  });
  // A deleted learner and a teacher account do not show by default.
  const gone = await addLearner(db, {
    schoolname: 'Accra Primary',
    standard: w.classA1,
    schoolusername: 'gone1',
    curriculumids: [w.curriculum1],
    studentfirstname: 'Gone',
  });
  await db('students').where({ studentid: gone.studentid }).update({ isdeleted: true });

  await db('grades').insert({ gradeid: place.grade, curriculumid: w.curriculum1, gradename: 'Grade 1', gradeorder: 1 });
  await db('levels').insert({ levelid: place.level, gradeid: place.grade, levelname: 'Level 1', levelorder: 1 });
  await db('lessons').insert([
    { lessonid: place.lesson1, levelid: place.level, lessonname: 'Sounds', lessonorder: 1 },
    { lessonid: place.lesson2, levelid: place.level, lessonname: 'Words', lessonorder: 2 },
  ]);
  await db('lessonquizzes').insert([
    {
      lessonquizid: place.quiz1,
      lessonid: place.lesson1,
      lessonquizorder: 1,
      lessonquizname: 'Quiz 1',
      lessonquizdescription: '',
    },
    {
      lessonquizid: place.quiz2,
      lessonid: place.lesson2,
      lessonquizorder: 1,
      lessonquizname: 'Quiz 2',
      lessonquizdescription: '',
    },
  ]);
  await db('lessonpractices').insert({
    lessonpracticeid: place.practice,
    lessonid: place.lesson1,
    lessonpracticeorder: 1,
    lessonpracticename: 'Practice 1',
    lessonpracticedescription: '',
  });
  const p = (ref: string, type: number, ispass: boolean, starttime: string) => ({
    studentprogressid: crypto.randomUUID(),
    studentid: amina.studentid,
    studentprogressreferenceid: ref,
    progresstype: type,
    ispass,
    starttime,
    resultpercentage: ispass ? 90 : 20,
  });
  await db('studentprogress').insert([
    p(place.practice, 1, true, '2026-02-01T10:00:00.000Z'),
    p(place.quiz1, 2, true, '2026-02-02T10:00:00.000Z'),
    p(place.quiz2, 2, true, '2026-02-03T10:00:00.000Z'),
    p(place.quiz2, 2, false, '2026-02-04T10:00:00.000Z'),
    p(place.level, 3, false, '2026-02-05T10:00:00.000Z'),
  ]);
  await db('rpiuseraccess').insert([
    {
      rpiuseraccessid: crypto.randomUUID(),
      userid: amina.schooluserid,
      logintime: '2026-03-01T08:00:00.000Z',
      ipaddress: '10.0.0.1',
    },
    {
      rpiuseraccessid: crypto.randomUUID(),
      userid: bilal.schooluserid,
      logintime: '2026-03-05T08:00:00.000Z',
      ipaddress: '10.0.0.1',
    },
  ]);
  // The classroom server saw Amina later than central did, and Bilal earlier.
  classroomLogins.push(
    { userid: amina.schooluserid, logintime: '2026-03-09T07:30:00.000Z' },
    { userid: bilal.schooluserid, logintime: '2026-03-02T07:30:00.000Z' },
  );
});
afterAll(async () => {
  await new Promise((r) => classroom.close(r));
  await t.tdb.dispose();
});

const get = (url: string, who: Who) => request(t.app).get(url).set('Authorization', as[who]);
const send = (method: 'post' | 'put' | 'delete', url: string, who: Who, body?: unknown) =>
  request(t.app)
    [method](url)
    .set('Authorization', as[who])
    .send(body as object);
const TABLES = ['students', 'schoolusers', 'studentprogress', 'tokens'];

describe('POST /student (the Students page)', () => {
  it('answers the page the admin UI asks for, rows flattened with lastlogin, ' +
      'school user, curriculum and class', async () => {
    const res = await send('post', '/student', 'admin', { pagesize: 100, pageindex: 1, filter: [] });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ total: 3, pageindex: 1, pagesize: 100 });
    const rows = res.body.data.data as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.studentfirstname)).toEqual(['Amina', 'Bilal', 'Chen']);
    const a = rows[0];
    expect(a).toMatchObject({
      studentid: amina.studentid,
      schooluserid: amina.schooluserid,
      mothername: 'Ama',
      wg_seeing: 2,
      isactive: true,
      isdeleted: false,
      curriculumids: [w.curriculum1, w.curriculum2],
      lastlogin: '2026-03-09T07:30:00.000Z',
      schooluser: null,
      curriculum: null,
      'schooluser.schoolusername': 'amina1',
      'schooluser.schooluserrole': 4,
      'schooluser.schooluserstatus': true,
      'schooluser.isdisabled': false,
      'schooluser.isdeleted': false,
      'curriculum.curriculumname': 'Reading, Numbers',
      'curriculum.subjectid': expect.any(String),
      class: { standardname: 'Class 1' },
    });
    expect(rows[1].lastlogin).toBe('2026-03-05T08:00:00.000Z');
    expect(rows[2].lastlogin).toBeNull();
    expect(JSON.stringify(res.body)).not.toMatch(/argon2|schooluserpasswordhash/);
  });

  it('filters by the contract keys, the school user and any curriculum the learner ' +
      'studies; pages echo the request', async () => {
    const names = async (filter: object[], extra: object = {}) =>
      (
        (await send('post', '/student', 'admin', { filter, ...extra })).body.data.data as Array<{
          studentfirstname: string;
        }>
      ).map((r) => r.studentfirstname);
    expect(await names([{ key: 'schooluser.schoolusername', value: 'BILAL' }])).toEqual(['Bilal']);
    expect(await names([{ key: 'curriculum.curriculumname', value: 'numbers' }])).toEqual(['Amina', 'Bilal']);
    expect(await names([{ key: 'curriculum.curriculumname', value: 'read' }])).toEqual(['Amina', 'Chen']);
    expect(await names([{ key: 'schoolname', value: 'bamako' }])).toEqual(['Chen']);
    expect(await names([{ key: 'city', value: 'Tema' }, { key: 'standard', value: w.classA2 }])).toEqual(['Bilal']);
    expect(await names([{ key: 'studentfirstname', value: '100%' }])).toEqual([]);
    expect(await names([], { pageindex: 2, pagesize: 2 })).toEqual(['Chen']);
    const tooMany = await send('post', '/student', 'admin', {
      filter: Array.from({ length: 7 }, () => ({ key: 'city', value: 'x' })),
    });
    expect([tooMany.status, tooMany.body.errormessage]).toEqual([400, 'Invalid filter']);
    const badKey = await send('post', '/student', 'admin', { filter: [{ key: 'contact', value: 'x' }] });
    expect(badKey.status).toBe(400);
  });

  it('keeps learner identities from teachers (403) and the key-less (401)', async () => {
    expect((await send('post', '/student', 'teacher', {})).status).toBe(403);
    expect((await send('post', '/student', 'schoolteacher', {})).status).toBe(403);
    expect((await send('post', '/student', 'user', {})).status).toBe(403);
    expect((await request(t.app).post('/student').send({})).status).toBe(401);
  });
});

describe('one learner', () => {
  it('GET /student/:studentid: the row, its school user without a hash, its curriculum and last sign-in', async () => {
    const res = await get(`/student/${amina.studentid}`, 'admin');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      studentid: amina.studentid,
      curriculumids: [w.curriculum1, w.curriculum2],
      lastlogin: '2026-03-09T07:30:00.000Z',
      schooluser: { schoolusername: 'amina1', schooluserrole: 4, isdeleted: false },
      curriculum: { curriculumname: 'Reading' },
    });
    expect(res.body.data.schooluser).not.toHaveProperty('schooluserpasswordhash');
    const unknown = await get(`/student/${crypto.randomUUID()}`, 'admin');
    expect([unknown.status, unknown.body.errormessage]).toEqual([400, 'Invalid student id']);
    expect((await get('/student/nope', 'admin')).body.errormessage).toBe('"studentid" must be a valid GUID');
  });

  it('GET /student/stats/:studentid and its practice, quiz and level attempts', async () => {
    const stats = await get(`/student/stats/${amina.studentid}`, 'admin');
    expect(stats.body.data).toMatchObject({
      studentid: amina.studentid,
      lastlogin: '2026-02-03T10:00:00.000Z',
      currentlessonname: 'Words',
      currentlessonorder: 2,
      currentlessonid: place.lesson2,
      currentlevelid: place.level,
      currentlevelname: 'Level 1',
      currentlevelorder: 1,
      currentgradename: 'Grade 1',
      currentgradeorder: 1,
      currentgradeid: place.grade,
    });
    expect((await get(`/student/stats/${bilal.studentid}`, 'admin')).body).toEqual({ error: false, data: null });
    const practice = await get(`/student/stats/${amina.studentid}/practice`, 'admin');
    expect(practice.body.data).toEqual([
      expect.objectContaining({
        progresstype: 1,
        lessonpracticename: 'Practice 1',
        lessonpracticeid: place.practice,
        lessonname: 'Sounds',
        levelname: 'Level 1',
        gradename: 'Grade 1',
        gradeid: place.grade,
      }),
    ]);
    const quiz = await get(`/student/stats/${amina.studentid}/quiz`, 'admin');
    expect(
      quiz.body.data.map((q: { lessonquizname: string; ispass: boolean }) => [q.lessonquizname, q.ispass]),
    ).toEqual([
      ['Quiz 1', true],
      ['Quiz 2', true],
      ['Quiz 2', false],
    ]);
    const level = await get(`/student/stats/${amina.studentid}/level`, 'admin');
    expect(level.body.data).toEqual([
      expect.objectContaining({
        progresstype: 3,
        levelid: place.level,
        levelname: 'Level 1',
        levelorder: 1,
        gradename: 'Grade 1',
      }),
    ]);
    for (const url of [`/student/stats/${crypto.randomUUID()}`, `/student/stats/${crypto.randomUUID()}/quiz`]) {
      const r = await get(url, 'admin');
      expect([r.status, r.body.errormessage]).toEqual([400, 'Invalid student id']);
    }
    expect((await get(`/student/stats/${amina.studentid}`, 'teacher')).status).toBe(403);
  });
});

const learner = (schoolusername: string, extra: object = {}) => ({
  studentfirstname: 'Kofi',
  studentlastname: 'Mensah',
  dateofbirth: '02-03-2016',
  dateofjoin: '05-01-2026',
  genderid: '1',
  wg_seeing: '1',
  city: 'Accra',
  country: 'Ghana',
  state: 'Greater Accra',
  schoolusername,
  schooluserpasswordhash: 'pass1',
  ...extra,
});
const createBody = (students: object[], extra: object = {}) => ({
  curriculumid: [w.curriculum1],
  schoolid: w.schoolA.schoolid,
  standard: w.classA1,
  students,
  ...extra,
});

describe('POST /student/create', () => {
  it('lists every problem of every row (decision 29) and writes nothing', async () => {
    const before = await snapshot(t.tdb.db, TABLES);
    const res = await send('post', '/student/create', 'admin', createBody([
      learner('new1'),
      learner('AMINA1'),
      learner('x', { genderid: '3', wg_walking: '7', dateofjoin: '31-02-2026' }),
      learner('new1', { studentfirstname: 'K', extra: 1 }),
      learner('ok2', { is_teacher_acc: '1' }),
    ]));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(true);
    expect(res.body.data).toBe(false);
    expect(res.body.errors).toEqual(expect.arrayContaining([
      { row: 3, field: 'schoolusername', message: 'length must be at least 2 characters long' },
      { row: 3, field: 'genderid', message: 'must be one of [1, 2]' },
      { row: 3, field: 'wg_walking', message: 'must be one of [1, 2, 3, 4]' },
      { row: 3, field: 'dateofjoin', message: 'not valid' },
      { row: 4, field: 'studentfirstname', message: 'length must be at least 2 characters long' },
      { row: 4, field: 'extra', message: '"extra" is not allowed' },
      { row: 2, field: 'schoolusername', message: 'Students already exists, amina1' },
    ]));
    expect(res.body.errors).toHaveLength(7);
    for (const part of [
      '"students.2.dateofjoin" not valid',
      '"students.2.genderid" must be one of [1, 2]',
      '"students.2.schoolusername" length must be at least 2 characters long',
      '"students.2.wg_walking" must be one of [1, 2, 3, 4]',
      '"students.3.extra" is not allowed',
      '"students.3.studentfirstname" length must be at least 2 characters long',
    ])
      expect(res.body.errormessage).toContain(part);
    // The schema's words first, then the business rules.
    expect(res.body.errormessage).toMatch(/^"students\.[23]\..*, Students already exists, amina1$/);
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('refuses two rows with one username (any case), a missing class, ' +
      'unknown school, class and curriculum', async () => {
    const before = await snapshot(t.tdb.db, TABLES);
    const dup = await send('post', '/student/create', 'admin', createBody([learner('twin1'), learner('TWIN1')]));
    expect([dup.status, dup.body.errormessage, dup.body.errors]).toEqual([
      400,
      'Students already exists, twin1',
      [
        { row: 1, field: 'schoolusername', message: 'Students already exists, twin1' },
        { row: 2, field: 'schoolusername', message: 'Students already exists, twin1' },
      ],
    ]);
    const noClass = await send(
      'post',
      '/student/create',
      'admin',
      createBody([learner('nc1'), learner('nc2', { is_teacher_acc: '1' })], { standard: null }),
    );
    expect([noClass.body.errormessage, noClass.body.errors]).toEqual([
      'Student must has a class!',
      [{ row: 1, field: 'standard', message: 'Student must has a class!' }],
    ]);
    const noSchool = await send(
      'post',
      '/student/create',
      'admin',
      createBody([learner('ns1')], { schoolid: crypto.randomUUID() }),
    );
    expect([noSchool.body.errormessage, noSchool.body.errors]).toEqual([
      'Invalid School Name',
      [{ row: null, field: 'schoolid', message: 'Invalid School Name' }],
    ]);
    const otherClass = await send(
      'post',
      '/student/create',
      'admin',
      createBody([learner('oc1')], { standard: w.classB1 }),
    );
    expect(otherClass.body.errormessage).toBe('Invalid standard id');
    const noCurriculum = await send(
      'post',
      '/student/create',
      'admin',
      createBody([learner('cu1')], { curriculumid: [crypto.randomUUID()] }),
    );
    expect(noCurriculum.body.errormessage).toBe('Invalid curriculum id');
    const empty = await send('post', '/student/create', 'admin', createBody([]));
    expect([empty.status, empty.body.errormessage]).toEqual([400, '"students" must contain at least 1 items']);
    const many = await send(
      'post',
      '/student/create',
      'admin',
      createBody(Array.from({ length: 501 }, (_, i) => learner(`m${i}`))),
    );
    expect([many.status, many.body.errormessage]).toEqual([
      400,
      '"students" must contain less than or equal to 500 items',
    ]);
    const blankType = await send('post', '/student/create', 'admin', createBody([learner('bt1', { schooltype: '' })]));
    expect(blankType.body.errormessage).toBe('"students.0.schooltype" is not allowed to be empty');
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('?dryrun=true checks a batch and writes nothing, whatever it finds', async () => {
    const before = await snapshot(t.tdb.db, TABLES);
    const good = await send(
      'post',
      '/student/create?dryrun=true',
      'admin',
      createBody([learner('dry1'), learner('dry2')]),
    );
    expect([good.status, good.body]).toEqual([200, { error: false, data: { valid: true, errors: [] } }]);
    const bad = await send(
      'post',
      '/student/create?dryrun=true',
      'admin',
      createBody([learner('dry1', { genderid: '9' }), learner('bilal1')]),
    );
    expect([bad.status, bad.body.data]).toEqual([
      200,
      {
        valid: false,
        errors: [
          { row: 1, field: 'genderid', message: 'must be one of [1, 2]' },
          { row: 2, field: 'schoolusername', message: 'Students already exists, bilal1' },
        ],
      },
    ]);
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('enrols names in any script; two batches at once taking one username: one wins, the other hears why', async () => {
    const ok = await send(
      'post',
      '/student/create?online=false',
      'admin',
      createBody([learner('khmer1', { studentfirstname: 'សុខា', mothername: 'ចាន់', contact: '+855 12 345 678' })]),
    );
    expect(ok.body).toEqual({ error: false, data: true });
    expect(
      await t.tdb
        .db('students as s')
        .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
        .where('u.schoolusername', 'khmer1')
        .first('s.studentfirstname', 's.mothername', 's.contact', 's.type'),
    ).toEqual({ studentfirstname: 'សុខា', mothername: 'ចាន់', contact: '+855 12 345 678', type: 'offline' });

    for (const round of [1, 2, 3]) {
      const a = createBody([learner(`race${round}`), learner(`race${round}a`)]);
      const b = createBody([learner(`RACE${round}`), learner(`race${round}b`)]);
      const [ra, rb] = await Promise.all([
        send('post', '/student/create', 'admin', a),
        send('post', '/student/create', 'admin', b),
      ]);
      expect([ra.status, rb.status].sort()).toEqual([200, 400]);
      const loser = ra.status === 400 ? ra : rb;
      expect(loser.body.errormessage).toBe(`Students already exists, race${round}`);
      expect(loser.body.errors).toEqual([
        { row: 1, field: 'schoolusername', message: `Students already exists, race${round}` },
      ]);
      const made = await t.tdb
        .db('schoolusers')
        .whereRaw('lower(schoolusername) like ?', [`race${round}%`])
        .orderBy('schoolusername')
        .pluck('schoolusername');
      expect(made.sort()).toEqual(
        (ra.status === 200 ? [`race${round}`, `race${round}a`] : [`RACE${round}`, `race${round}b`]).sort(),
      );
    }
  });

  it('refuses oversize and malformed bodies and tokens of the wrong type', async () => {
    const big = JSON.stringify(createBody([learner('big1', { mothername: 'x'.repeat(100) })])).replace(
      '"students":[',
      `"pad":"${'y'.repeat(5.5 * 1024 * 1024)}","students":[`,
    );
    const over = await request(t.app)
      .post('/student/create')
      .set('Authorization', as.admin)
      .set('Content-Type', 'application/json')
      .send(big);
    expect([over.status, over.body.errormessage]).toEqual([413, 'Request body is too large']);
    // The rest of the service keeps its 1 MB.
    const overList = await request(t.app)
      .post('/student')
      .set('Authorization', as.admin)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ pad: 'y'.repeat(1.2 * 1024 * 1024) }));
    expect(overList.status).toBe(413);
    const broken = await request(t.app)
      .put('/student/update')
      .set('Authorization', as.admin)
      .set('Content-Type', 'application/json')
      .send('{"students":[{');
    expect([broken.status, broken.body.errormessage]).toEqual([400, 'Request body is not valid JSON']);
    const notObject = await send('put', '/student/update', 'admin', [1, 2]);
    expect(notObject.status).toBe(400);
    const refresh = (
      await staffLogin(t.app, (await t.tdb.db('lmsusers').where('lmsusername', 'like', 'admin-%').first()).lmsusername)
    ).refreshToken;
    for (const [method, url] of [
      ['post', '/student'],
      ['post', '/student/create'],
      ['put', '/student/update'],
      ['get', '/student/download-students'],
    ] as const) {
      const r = await request(t.app)[method](url).set('Authorization', `Bearer ${refresh}`).send({});
      expect([url, r.status]).toEqual([url, 401]);
    }
    expect(await t.tdb.db('schoolusers').where({ schoolusername: 'big1' }).first()).toBeUndefined();
  });
});

describe('DELETE /student/:schooluserid', () => {
  it('soft-deletes the learner and its school user; the username stays taken and progress stays', async () => {
    const victim = await addLearner(t.tdb.db, {
      schoolname: 'Accra Primary',
      standard: w.classA1,
      schoolusername: 'leaver1',
      curriculumids: [w.curriculum1],
      studentfirstname: 'Leaver',
    });
    await t.tdb
      .db('studentprogress')
      .insert({
        studentprogressid: crypto.randomUUID(),
        studentid: victim.studentid,
        studentprogressreferenceid: place.quiz1,
        progresstype: 2,
        ispass: true,
      });
    const res = await send('delete', `/student/${victim.schooluserid}`, 'admin');
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    const adminId = (await t.tdb.db('lmsusers').where('lmsusername', 'like', 'admin-%').first('lmsuserid')).lmsuserid;
    expect(await t.tdb.db('students').where({ studentid: victim.studentid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: adminId,
    });
    expect(await t.tdb.db('schoolusers').where({ schooluserid: victim.schooluserid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: adminId,
    });
    expect(await t.tdb.db('studentprogress').where({ studentid: victim.studentid }).count({ n: '*' }).first()).toEqual({
      n: 1,
    });
    const names = (
      (await send('post', '/student', 'admin', { pagesize: 200 })).body.data.data as Array<{ studentfirstname: string }>
    ).map((r) => r.studentfirstname);
    expect(names).not.toContain('Leaver');
    const reuse = await send('post', '/student/create', 'admin', createBody([learner('LEAVER1')]));
    expect([reuse.status, reuse.body.errormessage]).toEqual([400, 'Students already exists, leaver1']);

    const again = await send('delete', `/student/${victim.schooluserid}`, 'admin');
    expect([again.status, again.body.errormessage]).toEqual([400, 'Student already deleted or not found']);
    const unknown = await send('delete', `/student/${crypto.randomUUID()}`, 'admin');
    expect([unknown.status, unknown.body.errormessage]).toEqual([400, 'Invalid school user id']);
    expect((await send('delete', `/student/${bilal.schooluserid}`, 'teacher')).status).toBe(403);
    expect(await t.tdb.db('students').where({ studentid: bilal.studentid }).first('isdeleted')).toEqual({
      isdeleted: false,
    });
  });
});

describe('PUT /student/update rules', () => {
  const row = (s: { studentid: string; schooluserid: string }, username: string, extra: object = {}) => ({
    studentid: s.studentid,
    schooluserid: s.schooluserid,
    schoolusername: username,
    schoolname: 'Accra Primary',
    curriculums: 'Reading/Numbers',
    standard: 'Class 1',
    studentfirstname: 'Amina',
    studentlastname: 'Mensah',
    genderid: '1',
    dateofjoin: '05-01-2026',
    city: 'Accra',
    country: 'Ghana',
    state: 'Greater Accra',
    isactive: 1,
    ...extra,
  });

  it('names each problem of each row, and writes nothing', async () => {
    const before = await snapshot(t.tdb.db, TABLES);
    const res = await send('put', '/student/update', 'admin', { students: [
      row(amina, 'amina1', { standard: 'Class 7' }),
      row(bilal, 'bilal1', { curriculums: 'Reading/Physics', schoolname: 'Nowhere School' }),
      row({ studentid: chen.studentid, schooluserid: amina.schooluserid }, 'chen1'),
      row(amina, 'amina1'),
      row(bilal, 'chen1', { schoolusername: 'chen1' }),
      { ...row({ studentid: 'nope', schooluserid: bilal.schooluserid }, 'b!'), isactive: 5 },
    ] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { row: 6, field: 'studentid', message: 'must be a valid GUID' },
      { row: 6, field: 'schoolusername', message: 'must only contain alpha-numeric characters' },
      { row: 6, field: 'isactive', message: 'must be one of [1, 0]' },
      { row: 1, field: 'standard', message: 'Schoolname or standard name not found!' },
      { row: 2, field: 'schoolname', message: 'Schoolname or standard name not found!' },
      { row: 2, field: 'curriculums', message: 'Invalid curriculum name!' },
      { row: 3, field: 'studentid', message: 'Student not found!' },
      { row: 4, field: 'studentid', message: 'Student is listed more than once!' },
      { row: 5, field: 'studentid', message: 'Student is listed more than once!' },
    ]);
    expect(res.body.errormessage).toBe(
      '"students.5.studentid" must be a valid GUID, "students.5.schoolusername" must only contain alpha-numeric ' +
        'characters, "students.5.isactive" must be one of [1, 0], Schoolname or standard name not found!, ' +
          'Invalid curriculum name!, Student not found!, Student is listed more than once!',
    );
    const taken = await send('put', '/student/update', 'admin', {
      students: [row(bilal, 'Chen1', { studentfirstname: 'Bilal', curriculums: 'Numbers', standard: 'Class 2' })],
    });
    expect([taken.status, taken.body.errormessage, taken.body.errors]).toEqual([
      400,
      'Students already exists, chen1',
      [{ row: 1, field: 'schoolusername', message: 'Students already exists, chen1' }],
    ]);
    const twice = await send('put', '/student/update', 'admin', {
      students: [row(amina, 'same1'), row(bilal, 'SAME1', { standard: 'Class 2' })],
    });
    expect(twice.body.errormessage).toBe('Students already exists, same1');
    expect(twice.body.errors).toHaveLength(2);
    // The school user id must be the learner's own; a learner outside the caller's scope is not found.
    const elsewhere = await send('put', '/student/update', 'scopedSchool', {
      students: [row(chen, 'chen1', { schoolname: 'Bamako Primary', curriculums: 'Reading' })],
    });
    expect(elsewhere.body.errors).toEqual([{ row: 1, field: 'studentid', message: 'Student not found!' }]);
    const dry = await send('put', '/student/update?dryrun=true', 'admin', {
      students: [row(amina, 'amina1', { standard: 'Class 7' })],
    });
    expect([dry.status, dry.body.data]).toEqual([
      200,
      { valid: false, errors: [{ row: 1, field: 'standard', message: 'Schoolname or standard name not found!' }] },
    ]);
    for (const who of ['teacher', 'user', 'schoolteacher'] as const)
      expect((await send('put', '/student/update', who, { students: [row(amina, 'amina1')] })).status).toBe(403);
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('renames a learner, changes its password (its sign-ins end) and keeps a ' +
      'teacher account without a class', async () => {
    const res = await send('put', '/student/update', 'admin', {
      students: [
        row(bilal, 'bilal2', {
          studentfirstname: 'Bilal',
          curriculums: 'Numbers',
          standard: '',
          is_teacher_acc: '1',
          schooluserpasswordhash: 'newpass9',
        }),
      ],
    });
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    const u = await t.tdb.db('schoolusers').where({ schooluserid: bilal.schooluserid }).first();
    expect(u.schoolusername).toBe('bilal2');
    expect(u.schooluserpasswordhash).toMatch(/^\$argon2id\$/);
    const s = await t.tdb.db('students').where({ studentid: bilal.studentid }).first();
    expect(s).toMatchObject({ is_teacher_acc: true, standard: w.classA2 });
    // A teacher account signs in on central with its new password.
    await t.tdb.db('schoolusers').where({ schooluserid: bilal.schooluserid }).update({ schooluserrole: 3 });
    await schoolLogin(t.app, 'bilal2', 'newpass9');
    await t.tdb.db('schoolusers').where({ schooluserid: bilal.schooluserid }).update({ schooluserrole: 4 });
  });
});

describe('scope of the learner routes', () => {
  it('a staff account of one country lists and downloads that country\'s learners only', async () => {
    const lmsusername = `country-only-${crypto.randomBytes(3).toString('hex')}@people.test`;
    await createStaff(t.tdb.db, { lmsusername, roleids: [ROLE_IDS.admin], countries: [w.countryY] });
    const token = `Bearer ${(await staffLogin(t.app, lmsusername)).accessToken}`;
    const list = await request(t.app).post('/student').set('Authorization', token).send({});
    expect(list.body.data.data.map((r: { studentfirstname: string }) => r.studentfirstname)).toEqual(['Chen']);
    const csv = await request(t.app).get('/student/download-students').set('Authorization', token);
    expect(csv.text.split('\n').slice(1).map((l) => l.split(',')[2])).toEqual(['chen1']);
    const all = await request(t.app).get('/student/all?teacher=true').set('Authorization', token);
    expect(all.body.data.map((r: { studentfirstname: string }) => r.studentfirstname)).toEqual(['Chen']);
    // The username part matches whatever its case, and literally.
    expect(
      (await get('/student/all?userid=CHEN&teacher=true', 'admin')).body.data.map(
        (r: { studentfirstname: string }) => r.studentfirstname,
      ),
    ).toEqual(['Chen']);
    expect((await get('/student/all?userid=%25&teacher=true', 'admin')).body.data).toEqual([]);
  });
});
