import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';
import { tokenFor, type TestUser } from './auth-helpers';

let t: TestApp;
let teacher: string;
let learnerAuth: string;
let otherSchoolTeacher: TestUser;
const [amina, jonas] = C.students;
const learnerIds = C.students.map((s) => s.studentid);

async function signIn(username: string): Promise<string> {
  const res = await request(t.app).post('/auth/login').send({ studentusername: username, studentpassword: 'demo' });
  expect(res.status).toBe(200);
  return `Bearer ${res.body.data.accessToken}`;
}
const quiz = (auth: string, starttime: number, correct: boolean[]) =>
  request(t.app)
    .post(`/result/lesson/quiz/${C.quizid}`)
    .set('Authorization', auth)
    .send({
      starttime,
      endtime: starttime + 60_000,
      result: C.quizquestions.map((q, i) => ({
        iscorrect: correct[i],
        lessonquizid: C.quizid,
        lessonquizquestionid: q,
        questionid: C.questions[i],
      })),
    });

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemo(t.tdb.db);
  await t.tdb
    .db('schoolusers')
    .insert({
      schooluserid: 'd0000000-0000-4000-8000-00000000f001',
      schoolusername: 'other.admin',
      schooluserpasswordhash: '',
      schooluserrole: 2,
      schoolname: 'Elsewhere',
    });
  otherSchoolTeacher = await tokenFor(t, 3, { schoolname: 'Elsewhere School' });
  await signIn('demo.teacher');
  teacher = await signIn('demo.teacher');
  learnerAuth = await signIn(amina.schoolusername);
  await signIn(jonas.schoolusername);
  expect((await quiz(learnerAuth, Date.parse('2026-11-19T09:00:00Z'), [true, false, false, false])).status).toBe(200);
  expect((await quiz(learnerAuth, Date.parse('2026-11-20T09:00:00Z'), [true, true, true, true])).status).toBe(200);
});
afterAll(async () => { await t.tdb.dispose(); });

describe('teacher routes', () => {
  it("lists the school's classes, learners and gender counts", async () => {
    expect((await request(t.app).get('/teacher/standards').set('Authorization', teacher)).body.data).toEqual([
      { standard: C.standardid },
    ]);
    expect((await request(t.app).get('/teacher/stats').set('Authorization', teacher)).body.data).toEqual({
      total: 5,
      gendercount: [
        { genderid: 1, count: 2 },
        { genderid: 2, count: 3 },
      ],
    });
    const students = (await request(t.app).get('/teacher/students').set('Authorization', teacher)).body.data;
    expect(students.map((s: { studentid: string }) => s.studentid).sort()).toEqual([...learnerIds].sort());
    expect(
      (await request(t.app).get('/teacher/standard/all').query({ standard: 'class' }).set('Authorization', teacher))
        .body.data,
    ).toEqual([{ standardid: C.standardid, standardname: C.standardname }]);
    expect(
      (await request(t.app).get('/teacher/standards').set('Authorization', otherSchoolTeacher.auth)).body.data,
    ).toEqual([]);
  });

  it('shows the profile with the previous sign-in; a teacher who never signed in gets 400', async () => {
    const res = await request(t.app)
      .get('/teacher/profile')
      .query({ standard: C.standardid })
      .set('Authorization', teacher);
    // With a class chosen, the field the app's dashboard labels "Class name" carries the class.
    expect(res.body.data.teacher).toMatchObject({
      schoolusername: 'demo.teacher',
      schoolname: C.standardname,
      standardid: C.standardid,
      standardname: C.standardname,
    });
    const noClass = await request(t.app).get('/teacher/profile').set('Authorization', teacher);
    expect(noClass.body.data.teacher.schoolname).toBe(C.schoolname);
    expect(noClass.body.data.teacher).not.toHaveProperty('standardname');
    expect(res.body.data.teacher.rpiuseraccesses).toHaveLength(2);
    expect(res.body.data.teacher.logintime).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2} [AP]M$/);
    expect(res.body.data.numberofstudents).toBe(5);
    expect((await request(t.app).get('/teacher/profile').set('Authorization', otherSchoolTeacher.auth)).body).toEqual({
      error: true,
      errormessage: 'No teacher!',
      data: false,
    });
  });

  it("shows a learner's stats and attempts, and keeps teachers to their own school", async () => {
    const stats = await request(t.app).get(`/teacher/stats/student/${amina.studentid}`).set('Authorization', teacher);
    expect(stats.body.data).toMatchObject({
      studentid: amina.studentid,
      currentlessonid: C.lessonid,
      currentlevelid: C.levelid,
      currentgradeid: C.gradeid,
    });
    expect(stats.body.data.lastlogin).toBeTruthy();
    const quizzes = await request(t.app)
      .get(`/teacher/stats/student/${amina.studentid}/quiz`)
      .set('Authorization', teacher);
    expect(
      quizzes.body.data.map((r: { resultpercentage: number; lessonname: string }) => [
        r.resultpercentage,
        r.lessonname,
      ]),
    ).toEqual([
      [100, C.lessonname],
      [25, C.lessonname],
    ]);
    expect(
      (await request(t.app).get(`/teacher/stats/student/${amina.studentid}/practice`).set('Authorization', teacher))
        .body.data,
    ).toEqual([]);
    expect(
      (
        await request(t.app)
          .get(`/teacher/stats/student/${amina.studentid}`)
          .set('Authorization', otherSchoolTeacher.auth)
      ).body,
    ).toEqual({ error: true, errormessage: 'Invalid Student ID', data: false });
    const info = await request(t.app)
      .get('/teacher/studentinfo')
      .query({ studentid: amina.studentid })
      .set('Authorization', teacher);
    expect(info.body.data).toMatchObject({ studentprogressreferenceid: C.quizid, ispass: true, lessonid: C.lessonid });
  });

  it('builds the class score sheet for a lesson, paged', async () => {
    const res = await request(t.app)
      .post('/teacher/studentprogress')
      .set('Authorization', teacher)
      .send({
        pageindex: 1,
        pagesize: 20,
        filter: [
          { key: 'standard', value: C.standardid },
          { key: 'lessonid', value: C.lessonid },
        ],
      });
    expect(res.body.data).toMatchObject({ total: 5, pageindex: 1, pagesize: 20 });
    const row = res.body.data.data.find((r: { studentid: string }) => r.studentid === amina.studentid);
    expect(row).toMatchObject({ studentfirstname: 'Amina', studentlastname: 'Okafor' });
    expect(row.studentprogress).toEqual({
      studentprogressreferenceid: C.quizid,
      scores: 3,
      resultpercentage: 100,
      marks: 4,
      mark: 4,
      ispass: 1,
      totalquestions: 4,
    });
    expect(row.schooluser).toEqual({ schoolusername: amina.schoolusername });
    const other = res.body.data.data.find((r: { studentid: string }) => r.studentid === jonas.studentid);
    expect(other.studentprogress).toEqual({
      studentprogressreferenceid: null,
      scores: 0,
      resultpercentage: 0,
      marks: 0,
      mark: 0,
      ispass: 0,
      totalquestions: 0,
    });
    expect(other.studentlastname).toBe('Meyer');
    const defaults = await request(t.app).post('/teacher/studentprogress').set('Authorization', teacher).send({});
    expect(defaults.body.data.total).toBe(5);
    expect(
      (await request(t.app).post('/teacher/studentprogress').set('Authorization', otherSchoolTeacher.auth).send({}))
        .body.errormessage,
    ).toBe('school has no student!');
  });
});

describe('reports', () => {
  it('answers lesson-quiz results per learner to staff and to the sync key, and refuses learners', async () => {
    for (const auth of [teacher, t.config.serverSyncKey]) {
      const res = await request(t.app)
        .post('/report/studentprogress')
        .set('Authorization', auth)
        .send({ filter: [{ key: 'lessonid', value: C.lessonid }] });
      expect(res.status).toBe(200);
      expect(res.body.data.total).toBe(1);
      expect(res.body.data.data[0]).toMatchObject({
        studentid: amina.studentid,
        totalquestions: 4,
        laststudentprogress: { resultpercentage: 100 },
        class: { standardname: C.standardname },
      });
    }
    expect(
      (await request(t.app).post('/report/studentprogress').set('Authorization', learnerAuth).send({})).status,
    ).toBe(403);
    const download = await request(t.app)
      .post('/report/studentprogress/download')
      .set('Authorization', teacher)
      .send({});
    expect(download.body).toMatchObject({
      error: false,
      data: [expect.objectContaining({ studentid: amina.studentid })],
    });
  });

  it('scopes a teacher to their own school', async () => {
    const res = await request(t.app)
      .post('/report/studentstatus')
      .set('Authorization', otherSchoolTeacher.auth)
      .send({});
    expect(res.body.data).toEqual({ data: [], total: 0, pageindex: 0, pagesize: 20 });
  });

  it('reports per class, last completed quiz, sign-in status and progress', async () => {
    const cls = await request(t.app)
      .post('/report/studentprogress/class')
      .set('Authorization', teacher)
      .send({ filter: [{ key: 'standard', value: C.standardid }] });
    expect(cls.body.data.data[0]).toMatchObject({ class: { standardname: C.standardname }, learners: 1, passed: 1 });
    const last = await request(t.app).post('/report/studentlastcompletedquiz').set('Authorization', teacher).send({});
    expect(last.body.data.data[0]).toMatchObject({
      studentid: amina.studentid,
      curriculum: { curriculumname: C.curriculumname },
      studentprogresses: 1,
    });
    const status = await request(t.app)
      .post('/report/studentstatus/download')
      .set('Authorization', t.config.serverSyncKey)
      .send({});
    const byId = new Map(status.body.data.map((r: { studentid: string }) => [r.studentid, r]));
    expect(byId.get(amina.studentid)).toMatchObject({
      status: true,
      schoolname: C.schoolname,
      country: C.countryname,
      curriculum: { curriculumname: C.curriculumname },
    });
    const grade = await request(t.app)
      .post('/report/student-grade-progress')
      .set('Authorization', teacher)
      .send({ filter: [{ key: 'studentid', value: amina.studentid }] });
    expect(grade.body.data.data[0]).toMatchObject({
      studentid: amina.studentid,
      gradeid: C.gradeid,
      gradename: C.gradename,
    });
    const lesson = await request(t.app)
      .post('/report/student-lesson-progress')
      .set('Authorization', teacher)
      .send({ filter: [{ key: 'studentid', value: amina.studentid }] });
    expect(lesson.body.data.student).toMatchObject({ studentid: amina.studentid });
    expect(lesson.body.data.data[0]).toMatchObject({ lessonid: C.lessonid, completed: true, points: 40 });
    expect(
      (await request(t.app).get('/report/offlineonline').query({ countryid: 'all' }).set('Authorization', teacher)).body
        .data,
    ).toEqual({ name: 'Online', value: C.students.length });
  });

  it('serves baseline results as a bare array to the sync key', async () => {
    await request(t.app)
      .post(`/result/baseline/question/${C.baselineid}`)
      .set('Authorization', learnerAuth)
      .send({
        starttime: Date.parse('2026-11-20T10:00:00Z'),
        result: C.baselinequestions.map((q, i) => ({
          iscorrect: true,
          curriculumbaselineid: C.baselineid,
          baselinequestionid: q,
          questionid: C.questions[i * 3],
        })),
      });
    const res = await request(t.app)
      .get(`/curriculum/${C.baselineid}/getstudentresult`)
      .set('Authorization', t.config.serverSyncKey);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body[0]).toMatchObject({
      studentid: amina.studentid,
      totalquestions: 2,
      curriculumbaseline: { baselinename: 'Start of year check' },
      student: { schooluser: { schoolusername: amina.schoolusername } },
    });
  });
});
