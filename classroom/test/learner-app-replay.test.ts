import jwt from 'jsonwebtoken';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS } from '@lms/shared';
import { seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';

// The learner tablet app (edtech-expo), call by call, on the demo data: the requests it sends, with its headers
// and bodies, and the fields its screens read from the answers. A learner works through a lesson; then the teacher
// opens the dashboard and the score sheet.

/** What the app's `TemplateTypeById` can render. */
const RENDERED_TEMPLATES = [1, 2, 3, 4, 5, 6, 7, 8, 18, 19, 20, 21, 22, 23, 24];

let t: TestApp;

/** A request as the app's API client sends it: JSON content type even on GET, no-cache, the bearer once signed in. */
function call(
  method: 'get' | 'post',
  path: string,
  opts: { token?: string; query?: Record<string, string>; body?: unknown } = {},
) {
  const req = request(t.app)
    [method](path)
    .set('Content-Type', 'application/json')
    .set('Cache-Control', 'no-cache')
    .set('Accept-Language', 'en')
    .set('Accept', '*/*');
  if (opts.token) req.set('Authorization', `Bearer ${opts.token}`);
  if (opts.query) req.query(opts.query);
  return method === 'post' ? req.send(opts.body as object) : req;
}

/** The app's sign-in: `toAuthPayload` adds `logintime`, and the JWT payload becomes the stored profile. */
async function signIn(username: string): Promise<{ token: string; profile: Record<string, unknown> }> {
  const res = await call('post', '/auth/login', {
    body: { logintime: Date.now(), studentpassword: DEMO_IDS.password, studentusername: username },
  });
  expect(res.status).toBe(200);
  const token = res.body.data.accessToken as string;
  return { token, profile: jwt.decode(token) as Record<string, unknown> };
}

/**
 * The quiz and practice screens read every question through `question.questionobject` and `question.templatetypeid`.
 */
function expectRenderable(item: Record<string, any>) {
  const q = item.question;
  expect(RENDERED_TEMPLATES).toContain(q.templatetypeid);
  expect(q.questionobject.questionheading.headingtext).toEqual(expect.stringMatching(/\S/));
  expect(q.questionobject.questiontext).toEqual(expect.any(String));
  expect(q.questionobject.questionfeedback).toEqual({
    correctmessage: expect.stringMatching(/\S/),
    incorrectmessage: expect.stringMatching(/\S/),
  });
  const options = q.questionobject.questionoptions as Array<Record<string, unknown>>;
  expect(options.length).toBeGreaterThan(0);
  for (const o of options) {
    expect(o).toMatchObject({
      questionoptionid: expect.any(String),
      questionoptiontext: expect.any(String),
      questionoptioniscorrect: expect.any(Boolean),
      questionoptionsequence: expect.any(Number),
    });
  }
  expect(options.some((o) => o.questionoptioniscorrect === true)).toBe(true);
}

const learnerName = 'demo.sophea';
const learner = DEMO_IDS.learners.find((l) => l.schoolusername === learnerName)!;
const lesson = DEMO_IDS.lessons[0];

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemo(t.tdb.db);
});
afterAll(async () => { await t.tdb.dispose(); });

describe('the learner app on the demo data', () => {
  let token: string;
  let profile: Record<string, unknown>;
  let curriculumid: string;
  let gradeid: string;
  let levelid: string;
  let lessonBody: Record<string, any>;

  it('signs the learner in; the token is the profile the app keeps (role 4: learner home)', async () => {
    ({ token, profile } = await signIn(learnerName));
    expect(profile).toMatchObject({
      schooluserrole: 4,
      schooluserid: learner.schooluserid,
      schoolusername: learnerName,
      studentid: learner.studentid,
      studentfirstname: 'Sophea',
      studentlastname: 'Chan',
      schoolname: DEMO_IDS.schoolname,
      standard: DEMO_IDS.standardid,
      curriculumid: DEMO_IDS.curriculumid,
      curriculumids: [DEMO_IDS.curriculumid],
      uitheme: 'kids',
      is_teacher_acc: false,
    });
    const access = await t.tdb.db('rpiuseraccess').where({ userid: learner.schooluserid, status: 1 });
    expect(access).toHaveLength(1);
  });

  it('refreshes the branding of the profile school', async () => {
    const res = await call('get', '/school/branding', { query: { schoolname: String(profile.schoolname) } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ error: false, data: { uitheme: 'kids', brandingconfig: null } });
  });

  it('walks subjects → grades → levels → lessons', async () => {
    const subjects = await call('get', '/curriculum/subjects', { token });
    expect(subjects.status).toBe(200);
    expect(subjects.body.data).toEqual([
      expect.objectContaining({
        curriculumid: DEMO_IDS.curriculumid,
        curriculumname: DEMO_IDS.curriculumname,
        subjectid: DEMO_IDS.subjectid,
        progress: 0,
      }),
    ]);
    curriculumid = subjects.body.data[0].curriculumid;

    const courses = await call('get', `/grade/curriculum/${curriculumid}`, { token });
    expect(courses.body.data).toEqual([
      expect.objectContaining({
        gradeid: DEMO_IDS.gradeid,
        gradename: DEMO_IDS.gradename,
        gradeorder: 1,
        number_levels: 2,
        progress: 0,
      }),
    ]);
    gradeid = courses.body.data[0].gradeid;

    const units = await call('get', `/level/grade/${gradeid}`, { token });
    expect(units.body.data).toEqual([
      expect.objectContaining({ levelid: DEMO_IDS.levelid, levelname: DEMO_IDS.levelname, levelorder: 1, progress: 0 }),
      expect.objectContaining({
        levelid: DEMO_IDS.level2.levelid,
        levelname: DEMO_IDS.level2.levelname,
        levelorder: 2,
        progress: 0,
      }),
    ]);
    levelid = units.body.data[0].levelid;

    const levels = await call('get', `/lesson/level/${levelid}`, { token });
    expect(levels.body.data).toMatchObject({
      level_has_quiz: true,
      level: { levelid, levelname: DEMO_IDS.levelname, progress: 0 },
    });
    expect(
      levels.body.data.lesson.map((l: Record<string, unknown>) => [
        l.lessonid,
        l.lessonname,
        l.lessonorder,
        l.progress,
      ]),
    ).toEqual(DEMO_IDS.lessons.map((l) => [l.lessonid, l.lessonname, l.lessonorder, 0]));

    const chapters = await call('get', `/lesson/${lesson.lessonid}/learning`, { token });
    expect(chapters.status).toBe(200);
    lessonBody = chapters.body.data;
    expect(lessonBody).toMatchObject({
      lessonid: lesson.lessonid,
      lessonname: lesson.lessonname,
      lessonlearnings: [
        {
          lessonlearningid: lesson.lessonlearningid,
          lessonlearningname: lesson.lessonlearningname,
          lessonlearningorder: 1,
        },
      ],
      lessonpractices: [
        {
          lessonpracticeid: lesson.lessonpracticeid,
          lessonpracticename: lesson.lessonpracticename,
          lessonpracticeorder: 1,
        },
      ],
      lessonquizzes: [{ lessonquizid: lesson.lessonquizid, lessonquizname: lesson.lessonquizname, lessonquizorder: 1 }],
    });
    expect(lessonBody).not.toHaveProperty('lessonplans');
  });

  it("plays the lesson's video and saves how far it got", async () => {
    const id = lessonBody.lessonlearnings[0].lessonlearningid;
    const before = await call('get', `/lesson/learning/${id}`, { token });
    expect(before.body.data).toMatchObject({
      lessonlearningid: id,
      studentlearningprogress: null,
      lessonlearningfileobject: { filename: lesson.documentname, filetype: 2, fileext: 'mp4' },
    });
    const save = await call('post', `/lesson/learning/${id}/progress`, {
      token,
      body: { content_length: 90, date: Date.now(), ended: false, time: 45 },
    });
    expect(save.body).toEqual({ error: false, data: true });
    const after = await call('get', `/lesson/learning/${id}`, { token });
    expect(after.body.data.studentlearningprogress).toMatchObject({ progress: 45, progress_percentage: 50 });
  });

  it('hands in a practice answered wrong throughout (the app sends result: []), ' +
    'and its queue replays it harmlessly', async () => {
    const id = lessonBody.lessonpractices[0].lessonpracticeid;
    const res = await call('get', `/question/practice/${id}`, { token });
    const items = [...res.body.data].sort((a, b) => a.lessonpracticequestionorder - b.lessonpracticequestionorder);
    expect(items).toHaveLength(lesson.questionids.length);
    // usePractice reads the first item's lessonpracticeid unconditionally.
    expect(items[0].lessonpracticeid).toBe(id);
    for (const item of items) {
      expect(item).toMatchObject({
        lessonpracticeid: id,
        lessonpracticequestionid: expect.any(String),
        questionid: item.question.questionid,
      });
      expectRenderable(item);
    }

    const starttime = Date.now() - 120_000;
    const body = { starttime, result: [], endtime: starttime + 90_000 };
    for (let i = 0; i < 2; i++) {
      const saved = await call('post', `/result/lesson/practice/${id}`, { token, body });
      expect(saved.status).toBe(200);
      expect(saved.body).toEqual({ error: false, data: true });
    }
    const rows = await t.tdb
      .db('studentprogress')
      .where({ studentid: learner.studentid, studentprogressreferenceid: id });
    expect(rows).toHaveLength(1);
    // Nothing right, not passed; the practice's points are earned on this first attempt, as the original server gives
    // them.
    expect(rows[0]).toMatchObject({
      ispass: false,
      resultpercentage: 0,
      marks: 0,
      progresstype: 1,
      points: 40,
      fullpoints: 40,
    });
  });

  it('takes the quiz: three answers of four right', async () => {
    const id = lessonBody.lessonquizzes[0].lessonquizid;
    const res = await call('get', `/question/quiz/${id}`, { token });
    const items = [...res.body.data].sort((a, b) => a.lessonquizquestionorder - b.lessonquizquestionorder);
    expect(items.map((q) => q.questionid)).toEqual([...lesson.questionids]);
    for (const item of items) {
      expect(item).toMatchObject({ lessonquizid: id, lessonquizquestionid: expect.any(String) });
      expectRenderable(item);
    }
    // toQuizQuestionResult, one per question, right or wrong.
    const result = items.map((q, i) => ({
      iscorrect: i !== 1,
      lessonquizid: q.lessonquizid,
      lessonquizquestionid: q.lessonquizquestionid,
      questionid: q.questionid,
    }));
    const starttime = Date.now() - 60_000;
    const saved = await call('post', `/result/lesson/quiz/${id}`, {
      token,
      body: { starttime, result, endtime: starttime + 50_000 },
    });
    expect(saved.body).toEqual({ error: false, data: true });
    const rows = await t.tdb
      .db('studentprogress')
      .where({ studentid: learner.studentid, studentprogressreferenceid: id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ispass: false, resultpercentage: 75, marks: 3, progresstype: 2 });
  });
});

describe('the teacher screens on the demo data', () => {
  let token: string;
  let profile: Record<string, unknown>;
  let standardid: string;

  it('signs the teacher in (role 3: teacher dashboard)', async () => {
    await signIn(DEMO_IDS.teacher.schoolusername);
    ({ token, profile } = await signIn(DEMO_IDS.teacher.schoolusername));
    expect(profile).toMatchObject({
      schooluserrole: 3,
      schoolusername: 'demo.teacher',
      schoolname: DEMO_IDS.schoolname,
    });
    // CustomDrawer shows `${studentfirstname} ${studentlastname}` for every role.
    expect(`${profile.studentfirstname} ${profile.studentlastname}`.trim()).toBe('demo.teacher');
  });

  it('fills the class picker and shows the class on the dashboard', async () => {
    const standards = await call('get', '/teacher/standard/all', {
      token,
      query: { schoolname: String(profile.schoolname) },
    });
    expect(standards.body.data).toEqual([{ standardid: DEMO_IDS.standardid, standardname: DEMO_IDS.standardname }]);
    standardid = standards.body.data[0].standardid;

    const res = await call('get', '/teacher/profile', { token, query: { standard: standardid } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      numberofstudents: DEMO_IDS.learners.length,
      averagestudentusage: expect.any(Number),
      // TeacherDashboardScreen labels teacher.schoolname "Class name".
      teacher: {
        schoolname: DEMO_IDS.standardname,
        standardname: DEMO_IDS.standardname,
        schoolusername: 'demo.teacher',
        schooluserid: DEMO_IDS.teacher.schooluserid,
        logintime: expect.stringMatching(/\d{4}/),
      },
    });
    expect(res.body.data.teacher.rpiuseraccesses).toEqual([
      { logintime: expect.any(String) },
      { logintime: expect.any(String) },
    ]);
  });

  it('picks curriculum, course, level and lesson, and reads the score sheet', async () => {
    const curriculums = await call('get', '/curriculum/all', {
      token,
      query: { schoolname: String(profile.schoolname) },
    });
    expect(curriculums.body.data.map((c: Record<string, unknown>) => [c.curriculumid, c.curriculumname])).toEqual([
      [DEMO_IDS.curriculumid, DEMO_IDS.curriculumname],
    ]);
    const courses = await call('get', '/grade/all', { token, query: { curid: DEMO_IDS.curriculumid } });
    expect(courses.body.data.map((g: Record<string, unknown>) => [g.gradeid, g.gradename])).toEqual([
      [DEMO_IDS.gradeid, DEMO_IDS.gradename],
    ]);
    const levels = await call('get', '/level/all', { token, query: { gradeid: DEMO_IDS.gradeid } });
    expect(levels.body.data.map((l: Record<string, unknown>) => [l.levelid, l.levelname])).toEqual([
      [DEMO_IDS.levelid, DEMO_IDS.levelname],
      [DEMO_IDS.level2.levelid, DEMO_IDS.level2.levelname],
    ]);
    const lessons = await call('get', '/lesson/all', { token, query: { levelid: DEMO_IDS.levelid } });
    expect(lessons.body.data.map((l: Record<string, unknown>) => [l.lessonid, l.lessonname])).toEqual(
      DEMO_IDS.lessons.map((l) => [l.lessonid, l.lessonname]),
    );

    const sheet = await call('post', '/teacher/studentprogress', {
      token,
      body: {
        pageindex: 1,
        pagesize: 100,
        filter: [
          { key: 'standard', value: standardid },
          { key: 'lessonid', value: lesson.lessonid },
        ],
      },
    });
    expect(sheet.status).toBe(200);
    expect(sheet.body.data).toMatchObject({ total: DEMO_IDS.learners.length, pageindex: 1, pagesize: 100 });
    const rows = sheet.body.data.data as Array<Record<string, any>>;
    expect(rows.map((r) => r.index)).toEqual(rows.map((_, i) => i + 1));
    // What each row shows: handle, "<last> <first>", "<mark>/<totalquestions>", percentage, quiz score,
    // Passed/Redo/N/A.
    const shown = Object.fromEntries(
      rows.map((r) => [
        r.schooluser.schoolusername,
        {
          name: `${r.studentlastname} ${r.studentfirstname}`,
          mark:
            r.studentprogress.totalquestions > 0
              ? `${r.studentprogress.mark}/${r.studentprogress.totalquestions}`
              : 'N/A',
          percentage: r.studentprogress.resultpercentage,
          result: r.studentprogress.ispass === 1 ? 'Passed' : r.studentprogress.totalquestions > 0 ? 'Redo' : 'N/A',
        },
      ]),
    );
    expect(Object.keys(shown).sort()).toEqual(DEMO_IDS.learners.map((l) => l.schoolusername).sort());
    expect(shown[learnerName]).toEqual({ name: 'Chan Sophea', mark: '3/4', percentage: 75, result: 'Redo' });
    expect(shown['demo.dara']).toEqual({ name: 'Sok Dara', mark: 'N/A', percentage: 0, result: 'N/A' });
  });

  it('downloads the activity log', async () => {
    const res = await call('get', '/export/log', { token });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
  });
});
