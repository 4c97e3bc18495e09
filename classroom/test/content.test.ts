import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_QUESTIONS } from '@lms/shared';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';
import { tokenFor } from './auth-helpers';

let t: TestApp;
let auth: string;
let studentid: string;
const get = (path: string, query: Record<string, string> = {}) =>
  request(t.app).get(path).query(query).set('Authorization', auth);
const post = (path: string, body: unknown) => request(t.app).post(path).set('Authorization', auth).send(body as object);

beforeAll(async () => {
  t = await makeApp();
  await seedDemo(t.tdb.db);
  const u = await tokenFor(t, 4);
  auth = u.auth;
  studentid = u.studentid!;
  // Passing practice and quiz of lesson 1, the video watched, and the level quiz passed: lesson 1 and the level quiz
  // are done.
  const start = Date.parse('2026-11-20T08:00:00Z');
  expect(
    (
      await post(`/result/lesson/practice/${C.practiceid}`, {
        starttime: start,
        result: C.practicequestions.map((q, i) => ({
          iscorrect: true,
          lessonpracticeid: C.practiceid,
          lessonpracticequestionid: q,
          questionid: C.questions[i],
          tries: 1,
        })),
      })
    ).status,
  ).toBe(200);
  expect(
    (
      await post(`/result/lesson/quiz/${C.quizid}`, {
        starttime: start + 1000,
        result: C.quizquestions.map((q, i) => ({
          iscorrect: true,
          lessonquizid: C.quizid,
          lessonquizquestionid: q,
          questionid: C.questions[i],
        })),
      })
    ).status,
  ).toBe(200);
  expect(
    (await post(`/lesson/learning/${C.learningid}/progress`, { ended: true, time: 60, content_length: 60 })).status,
  ).toBe(200);
  expect(
    (
      await post(`/result/level/quiz/${C.levelid}`, {
        starttime: start + 2000,
        result: C.levelquizquestions.map((q, i) => ({
          iscorrect: true,
          levelid: C.levelid,
          levelquizquestionid: q,
          questionid: C.questions[2 + i],
        })),
      })
    ).status,
  ).toBe(200);
});
afterAll(async () => { await t.tdb.dispose(); });

describe('listing routes', () => {
  it('filters curriculums, grades, levels and lessons by name and parent', async () => {
    expect(
      (await get('/curriculum/all', { cur: 'CURRIC' })).body.data.map((c: { curriculumid: string }) => c.curriculumid),
    ).toEqual([C.curriculumid]);
    expect((await get('/curriculum/all', { cur: 'history' })).body.data).toEqual([]);
    expect((await get('/curriculum/all', { studentid })).body.data).toHaveLength(1);
    expect((await get('/curriculum/all', { standardid: C.standardid })).body.data).toHaveLength(1);
    expect(
      (await get('/grade/all', { curid: C.curriculumid })).body.data.map((g: { gradeid: string }) => g.gradeid),
    ).toEqual([C.gradeid]);
    expect((await get('/grade/all', { grade: 'zzz' })).body.data).toEqual([]);
    expect(
      (await get('/level/all', { gradeid: C.gradeid, level: 'level' })).body.data.map(
        (l: { levelid: string }) => l.levelid,
      ),
    ).toEqual([C.levelid, C.level2id]);
    expect(
      (await get('/level/all', { gradeid: C.gradeid, level: 'level 2' })).body.data.map(
        (l: { levelid: string }) => l.levelid,
      ),
    ).toEqual([C.level2id]);
    expect(
      (await get('/lesson/all', { levelid: C.levelid, lesson: 'reading' })).body.data.map(
        (l: { lessonid: string }) => l.lessonid,
      ),
    ).toEqual([C.lesson2id]);
    // A LIKE wildcard in the search text is matched literally.
    expect((await get('/lesson/all', { lesson: '%' })).body.data).toEqual([]);
    const all = await get('/curriculum');
    expect(all.body.data.map((c: { curriculumid: string }) => c.curriculumid)).toEqual([C.curriculumid]);
    const one = await get(`/curriculum/${C.curriculumid}`);
    expect(one.body.data.curriculumname).toBe(C.curriculumname);
  });

  it('lists up to 20 learners by handle with their account name, to staff only', async () => {
    // A learner may not read other learners' records (parents, contact, disability answers).
    const asLearner = await get('/student/all', { userid: 'user4', schoolname: C.schoolname });
    expect(asLearner.status).toBe(403);
    expect(JSON.stringify(asLearner.body)).not.toContain(studentid);
    const teacher = await tokenFor(t, 3);
    const res = await request(t.app)
      .get('/student/all')
      .query({ userid: 'user4', schoolname: C.schoolname })
      .set('Authorization', `Bearer ${teacher.token}`);
    expect(res.body.data).toEqual([
      expect.objectContaining({ studentid, schooluser: { schoolusername: expect.stringMatching(/^user4/) } }),
    ]);
  });
});

describe('progress routes', () => {
  it('shows lesson 1 complete with its points, lesson 2 untouched, and the level quiz passed', async () => {
    // lesson 1: learning 20 + practice 40 + quiz 40; the level quiz is worth 20; lesson 2 has 100 more to earn, and
    // level 2 (one lesson and its level quiz) 120 more: 120 of 340.
    const lessons = await get(`/lesson/progress/level/${C.levelid}`);
    // Stars, as the existing server counts them: lesson 1's three, and the level quiz's three plus one for taking it.
    expect(lessons.body.data.total_points).toBe(7);
    expect(lessons.body.data.lessonsresult[0].studentlessonsprogresses[0]).toMatchObject({
      points: 100,
      completed: true,
      progress: 100,
    });
    expect(lessons.body.data.lessonsresult[0]).toMatchObject({
      student_learning_points: 20,
      student_practice_points: 40,
      student_quiz_points: 40,
      number_learnings: 1,
      number_practices: 1,
      number_quizzes: 1,
      number_completed_learnings: 1,
      number_completed_practices: 1,
      number_completed_quizzes: 1,
      student_scores: 3,
      added_completed_scores: 0,
      quiz_scores: 3,
    });
    expect(lessons.body.data.lessonsresult[1].studentlessonsprogresses).toEqual([]);
    expect(lessons.body.data.lessonsresult[1]).toMatchObject({
      number_learnings: 1,
      number_completed_learnings: 0,
      number_completed_practices: 0,
      number_completed_quizzes: 0,
      student_scores: 0,
      quiz_scores: 0,
    });
    expect(lessons.body.data.level).toMatchObject({
      levelid: C.levelid,
      level_quiz_reward: 1,
      level_quiz_scores: 3,
      level_quiz_total_scores: 4,
      progress: 100,
      studentprogresses: [{ points: 20, scores: 3, ispass: true }],
    });

    const summary = await get(`/lesson/${C.lessonid}/progress`);
    expect(summary.body.data.lesson).toMatchObject({
      student_learning_points: 20,
      student_practice_points: 40,
      student_quiz_points: 40,
      number_learnings: 1,
      number_practices: 1,
      number_quizzes: 1,
      level: { levelid: C.levelid, grade: { gradeid: C.gradeid } },
    });

    const levels = await get(`/level/progress/grade/${C.gradeid}`);
    expect(levels.body.data.levelsresult[0]).toMatchObject({
      number_completed_lessons: 1,
      studentlevelsprogresses: [{ points: 120, completed: false, progress: 54.55 }],
    });
    expect(levels.body.data.total_points).toBe(120);

    const grades = await get(`/grade/progress/curriculum/${C.curriculumid}`);
    expect(grades.body.data).toEqual({
      gradesresult: [
        {
          gradeid: C.gradeid,
          gradename: C.gradename,
          gradeorder: 1,
          number_levels: 2,
          number_completed_levels: 0,
          studentgradesprogresses: [{ points: 120, completed: false, scores: 3 }],
        },
      ],
      total_points: 120,
    });
    expect((await get('/student/progress')).body.data).toBe(35.29);
    const map = await get(`/curriculum/${C.curriculumid}/map`);
    expect(map.body.data.grades[0]).toMatchObject({ gradepoints: 120 });
    expect(map.body.data.grades[0].levels[0].lessons[0].lessonpoints).toBe(100);
  });

  it('grants the grade reward once, when the grade is complete', async () => {
    let res = await get(`/grade/totalgradeprogress/${C.gradeid}`);
    expect(res.body.data).toEqual({ gradeprogress: 35.29, totalgradeprogress: 35.29, show: false, trashtype: null });
    const start = Date.parse('2026-11-20T09:00:00Z');
    expect(
      (await post(`/lesson/learning/${C.learning2id}/progress`, { ended: true, time: 30, content_length: 30 })).status,
    ).toBe(200);
    expect(
      (
        await post(`/result/lesson/practice/${C.practice2id}`, {
          starttime: start,
          result: C.practice2questions.map((q, i) => ({
            iscorrect: true,
            lessonpracticeid: C.practice2id,
            lessonpracticequestionid: q,
            questionid: C.questions[4 + i],
            tries: 1,
          })),
        })
      ).status,
    ).toBe(200);
    res = await get(`/grade/totalgradeprogress/${C.gradeid}`);
    expect(res.body.data).toMatchObject({ gradeprogress: 52.94, show: false });
    expect(
      (
        await post(`/result/lesson/quiz/${C.quiz2id}`, {
          starttime: start + 1000,
          result: C.quiz2questions.map((q, i) => ({
            iscorrect: true,
            lessonquizid: C.quiz2id,
            lessonquizquestionid: q,
            questionid: C.questions[4 + i],
          })),
        })
      ).status,
    ).toBe(200);
    res = await get(`/grade/totalgradeprogress/${C.gradeid}`);
    expect(res.body.data).toMatchObject({ gradeprogress: 64.71, show: false });
    // Level 2: its lesson and its level quiz.
    expect(
      (await post(`/lesson/learning/${C.learning3id}/progress`, { ended: true, time: 30, content_length: 30 })).status,
    ).toBe(200);
    expect(
      (
        await post(`/result/lesson/practice/${C.practice3id}`, {
          starttime: start + 2000,
          result: C.practice3questions.map((q, i) => ({
            iscorrect: true,
            lessonpracticeid: C.practice3id,
            lessonpracticequestionid: q,
            questionid: C.lesson3questions[i],
            tries: 1,
          })),
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await post(`/result/lesson/quiz/${C.quiz3id}`, {
          starttime: start + 3000,
          result: C.quiz3questions.map((q, i) => ({
            iscorrect: true,
            lessonquizid: C.quiz3id,
            lessonquizquestionid: q,
            questionid: C.lesson3questions[i],
          })),
        })
      ).status,
    ).toBe(200);
    res = await get(`/grade/totalgradeprogress/${C.gradeid}`);
    expect(res.body.data).toMatchObject({ gradeprogress: 94.12, show: false });
    expect(
      (
        await post(`/result/level/quiz/${C.level2id}`, {
          starttime: start + 4000,
          result: C.level2quizquestions.map((q, i) => ({
            iscorrect: true,
            levelid: C.level2id,
            levelquizquestionid: q,
            questionid: C.lesson3questions[i],
          })),
        })
      ).status,
    ).toBe(200);
    res = await get(`/grade/totalgradeprogress/${C.gradeid}`);
    expect(res.body.data).toEqual({ gradeprogress: 100, totalgradeprogress: 100, show: true, trashtype: 1 });
    res = await get(`/grade/totalgradeprogress/${C.gradeid}`);
    expect(res.body.data.show).toBe(false);
    expect(await t.tdb.db('studenttrash').where({ studentid }).count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it("lists the caller's learning progress of a lesson", async () => {
    const res = await get(`/lesson/${C.lessonid}/learning/progress`);
    expect(res.body.data).toEqual([
      expect.objectContaining({ lessonlearningid: C.learningid, progress_percentage: 100, points: 20 }),
    ]);
  });
});

describe('question routes', () => {
  it('serves practice, lesson, level and baseline questions with their questionobject', async () => {
    const practice = await get(`/question/practice/${C.practiceid}`);
    expect(practice.body.data.map((p: { lessonpracticequestionid: string }) => p.lessonpracticequestionid)).toEqual(
      C.practicequestions,
    );
    expect(practice.body.data[0].question.questionobject.questionfeedback).toEqual(DEMO_QUESTIONS[0].questionfeedback);
    expect(practice.body.data[0].question.questionobject.questionfeedback).toHaveProperty('correctmessage');
    const lesson = await get(`/question/lesson/${C.lessonid}`);
    expect(lesson.body.data.lessonpractices[0].lessonpracticequestions).toHaveLength(4);
    expect(lesson.body.data.lessonquizzes[0].lessonquizquestions).toHaveLength(4);
    const level = await get(`/question/level/${C.levelid}`);
    expect(level.body.data.levelquizquestions.map((q: { questionid: string }) => q.questionid)).toEqual([
      C.questions[0],
      C.questions[4],
    ]);
    const baseline = await get(`/question/baseline/${C.baselineid}`);
    expect(baseline.body.data.baselinequestion).toHaveLength(2);
    expect((await get(`/question/practice/${C.lessonid}`)).body.data).toEqual([]);
    expect((await get(`/question/baseline/${C.lessonid}`)).status).toBe(404);
    expect((await get(`/question/level/${C.quizid}/answers`)).body).toEqual({
      error: true,
      errormessage: 'No level-quiz result is found',
      data: false,
    });
  });
});

describe('sign-in rate limit', () => {
  it('answers 429 once failed sign-ins pass the limit, even with the right password', async () => {
    const limited = await makeApp({ LOGIN_RATE_LIMIT_MAX: '3' }, t.tdb);
    const attempt = (password: string) =>
      request(limited.app).post('/auth/login').send({ studentusername: 'demo.student', studentpassword: password });
    for (let i = 0; i < 3; i++) expect((await attempt('wrong')).status).toBe(400);
    const res = await attempt('demo');
    expect(res.status).toBe(429);
    expect(res.body.error).toBe(true);
  });

  it('counts failures only: a class signing in at once behind one address with the right ' +
    'passwords gets no 429', async () => {
    const limited = await makeApp({ LOGIN_RATE_LIMIT_MAX: '3' }, t.tdb);
    const attempt = (password: string) =>
      request(limited.app)
        .post('/auth/login')
        .send({ studentusername: 'demo.student', studentpassword: password, logintime: Date.now() });
    const together = await Promise.all(Array.from({ length: 12 }, () => attempt('demo')));
    expect(together.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect((await attempt('wrong')).status).toBe(400);
    expect((await attempt('demo')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await attempt('wrong')).status).toBe(400);
    expect((await attempt('demo')).status).toBe(429);
  });
});
