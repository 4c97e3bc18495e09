import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';
import { tokenFor } from './auth-helpers';

// The learner app's lesson and question screens read fields the existing classroom server adds to these
// answers; they are checked here with their meaning, for a learner, and for a caller without a learner record.

let t: TestApp;
let learner: string;
let teacher: string;
let studentid: string;
const db = () => t.tdb.db;
const get = (path: string, auth = learner) => request(t.app).get(path).set('Authorization', auth);
const post = (path: string, body: unknown) =>
  request(t.app).post(path).set('Authorization', learner).send(body as object);
const start = Date.parse('2026-11-20T08:00:00Z');
const levelQuiz = (at: number, correct: boolean) =>
  post(`/result/level/quiz/${C.levelid}`, {
    starttime: at,
    result: C.levelquizquestions.map((q, i) => ({
      iscorrect: correct,
      levelid: C.levelid,
      levelquizquestionid: q,
      questionid: C.questions[2 + i],
    })),
  });

beforeAll(async () => {
  t = await makeApp();
  await seedDemo(db());
  const u = await tokenFor(t, 4);
  learner = u.auth;
  studentid = u.studentid!;
  teacher = (await tokenFor(t, 3)).auth;
  const practice = await post(`/result/lesson/practice/${C.practiceid}`, {
    starttime: start,
    result: C.practicequestions.map((q, i) => ({
      iscorrect: true,
      lessonpracticeid: C.practiceid,
      lessonpracticequestionid: q,
      questionid: C.questions[i],
      tries: 1,
    })),
  });
  expect(practice.status).toBe(200);
  expect((await post(`/lesson/learning/${C.learningid}/progress`, { ended: true, time: 60, content_length: 60 }))
    .status).toBe(200);
});
afterAll(async () => { await t.tdb.dispose(); });

describe('GET /Lesson/progress/level/:levelid', () => {
  const progress = async (auth = learner) => {
    const res = await get(`/Lesson/progress/level/${C.levelid}`, auth);
    expect(res.status).toBe(200);
    return res.body.data;
  };

  it('counts per lesson what the learner completed, with the latest attempt\'s points', async () => {
    const data = await progress();
    expect(data.lessonsresult.map((l: { lessonid: string }) => l.lessonid)).toEqual([C.lessonid, C.lesson2id]);
    expect(data.lessonsresult[0]).toMatchObject({
      number_learnings: 1,
      number_practices: 1,
      number_quizzes: 1,
      number_completed_learnings: 1,
      number_completed_practices: 1,
      number_completed_quizzes: 0,
      student_learning_points: 20,
      student_practice_points: 40,
      student_quiz_points: 0,
    });
    expect(data.lessonsresult[1]).toMatchObject({ number_completed_learnings: 0, student_scores: 0, quiz_scores: 0 });
    // Not taken yet: the level part is there (the level has a quiz) with nothing earned.
    expect(data.level).toMatchObject({
      levelid: C.levelid,
      studentprogresses: [],
      level_quiz_total_scores: 0,
      level_quiz_reward: 0,
      level_quiz_scores: 0,
      progress: 0,
    });
  });

  it('scores the level quiz by its latest attempt, plus one star for taking it', async () => {
    expect((await levelQuiz(start + 10_000, false)).status).toBe(200);
    const failed = await progress();
    const stars = failed.lessonsresult.reduce((n: number, l: { student_scores: number }) => n + l.student_scores, 0);
    // A failed attempt earns the star for taking it, and no quiz stars.
    expect(failed.level).toMatchObject({
      level_quiz_reward: 1,
      level_quiz_scores: 0,
      level_quiz_total_scores: 1,
      progress: 0,
    });
    expect(failed.total_points).toBe(stars + 1);
    expect((await levelQuiz(start + 20_000, true)).status).toBe(200);
    const passed = await progress();
    expect(passed.level.studentprogresses).toHaveLength(2);
    expect(passed.level).toMatchObject({
      level_quiz_reward: 1,
      level_quiz_scores: 3,
      level_quiz_total_scores: 4,
      progress: 100,
    });
    expect(passed.total_points).toBe(stars + 4);
  });

  it('takes the completion star out of quiz_scores when the lesson earned it', async () => {
    await db()('studentlessonsprogress').where({ studentid, lessonid: C.lessonid })
      .update({ scores: 3, added_completed_scores: true });
    const data = await progress();
    expect(data.lessonsresult[0]).toMatchObject({ student_scores: 3, added_completed_scores: 1, quiz_scores: 2 });
  });

  it('gives a caller without a learner record the counts and nothing completed', async () => {
    const data = await progress(teacher);
    expect(data.lessonsresult[0]).toMatchObject({
      number_learnings: 1,
      number_completed_learnings: 0,
      number_completed_practices: 0,
      student_learning_points: 0,
      student_scores: 0,
      studentlessonsprogresses: [],
    });
    expect(data.total_points).toBe(0);
    expect(data.level).toMatchObject({ studentprogresses: [], level_quiz_reward: 0 });
  });

  it('has no level part for a level without an active level-quiz question', async () => {
    await db()('levelquizquestions').where({ levelid: C.levelid }).update({ levelquizquestionstatus: false });
    try {
      expect((await progress()).level).toBeNull();
    } finally {
      await db()('levelquizquestions').where({ levelid: C.levelid }).update({ levelquizquestionstatus: true });
    }
  });
});

describe('GET /question/lesson/:lessonid', () => {
  it('has the lesson heading, the learning path in order and the learner\'s learning progress', async () => {
    const res = await get(`/question/lesson/${C.lessonid}`);
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.lessonheading).toBe(C.lessonname);
    expect(data.lessonlearnings[0].lessonlearningfileobject).toEqual(
      expect.objectContaining({ filename: expect.any(String), fileext: expect.any(String) }),
    );
    expect(data.learningpath.map((p: { learningpathtype: number; learningpathid: string }) =>
      [p.learningpathtype, p.learningpathid])).toEqual([
      [1, C.learningid],
      [2, C.practiceid],
      [3, C.quizid],
    ]);
    const [learning, practice, quiz] = data.learningpath;
    expect(learning).toMatchObject({ learningpathname: data.lessonlearnings[0].lessonlearningname });
    expect(practice).toMatchObject({
      learningpathname: data.lessonpractices[0].lessonpracticename,
      learningpathorder: data.lessonpractices[0].lessonpracticeorder,
      learningpathdescription: data.lessonpractices[0].lessonpracticeorder,
    });
    expect(practice.lessonpracticequestions).toHaveLength(4);
    expect(quiz.lessonquizquestions).toHaveLength(4);
    expect(data.lessonlearningprogress).toEqual([
      expect.objectContaining({ studentid, lessonlearningid: C.learningid, progress_percentage: 100 }),
    ]);
  });

  it('gives a caller without a learner record an empty learning progress, and an unknown lesson 404', async () => {
    const res = await get(`/question/lesson/${C.lessonid}`, teacher);
    expect(res.status).toBe(200);
    expect(res.body.data.lessonlearningprogress).toEqual([]);
    expect(res.body.data.learningpath).toHaveLength(3);
    expect((await get(`/question/lesson/${C.levelid}`)).status).toBe(404);
  });
});

describe('GET /question/level/:levelid', () => {
  it('has the level quiz as a learning path, each question named and described by its order', async () => {
    const res = await get(`/question/level/${C.levelid}`);
    expect(res.status).toBe(200);
    const { levelquizquestions, learningpath } = res.body.data;
    expect(learningpath).toHaveLength(levelquizquestions.length);
    expect(learningpath.length).toBeGreaterThan(0);
    learningpath.forEach((p: Record<string, unknown>, i: number) => {
      expect(p).toMatchObject({
        learningpathtype: 3,
        learningpathid: levelquizquestions[i].levelquizquestionid,
        learningpathname: levelquizquestions[i].levelquizquestionorder,
        learningpathorder: levelquizquestions[i].levelquizquestionorder,
        learningpathdescription: levelquizquestions[i].levelquizquestionorder,
        question: expect.objectContaining({ questionid: levelquizquestions[i].questionid }),
      });
    });
  });
});

describe('GET /Lesson/:lessonid/activities/progress', () => {
  const url = `/Lesson/${C.lessonid}/activities/progress`;

  it('gives the state of each learning, practice and quiz of the lesson for the learner', async () => {
    const res = await get(url);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      lessonid: C.lessonid,
      pass_percentage: 80,
      learnings: [{ lessonlearningid: C.learningid, status: 'done', progress_percentage: 100 }],
      practices: [
        { lessonpracticeid: C.practiceid, status: 'done', attempts: 1, best_percentage: 100, question_count: 4 },
      ],
      quizzes: [{ lessonquizid: C.quizid, status: 'todo', attempts: 0, best_percentage: null, question_count: 4 }],
    });
  });

  it('shows a learning started but not finished as in progress', async () => {
    const where = { studentid, lessonlearningid: C.learningid };
    const before = await db()('studentlearningsprogress').where(where).first();
    await db()('studentlearningsprogress').where(where).update({ viewed: 0, progress_percentage: 40 });
    try {
      expect((await get(url)).body.data.learnings).toEqual([
        { lessonlearningid: C.learningid, status: 'inProgress', progress_percentage: 40 },
      ]);
    } finally {
      await db()('studentlearningsprogress').where(where)
        .update({ viewed: before.viewed, progress_percentage: before.progress_percentage });
    }
  });

  it('shows every item still to do to a caller without a learner record, and an unknown lesson 404', async () => {
    const res = await get(url, teacher);
    expect(res.status).toBe(200);
    expect(res.body.data.learnings.map((l: { status: string }) => l.status)).toEqual(['todo']);
    expect(res.body.data.practices).toEqual([
      { lessonpracticeid: C.practiceid, status: 'todo', attempts: 0, best_percentage: null, question_count: 4 },
    ]);
    expect((await get(`/Lesson/${C.levelid}/activities/progress`)).status).toBe(404);
  });
});

describe('GET /Lesson/level/:levelid/steps', () => {
  it('gives the steps of every lesson of the level, each as the lesson screen reads it', async () => {
    const res = await get(`/Lesson/level/${C.levelid}/steps`);
    expect(res.status).toBe(200);
    const { levelid, pass_percentage: pass, lessons } = res.body.data;
    expect([levelid, pass]).toEqual([C.levelid, 80]);
    expect(lessons.map((l: { lessonid: string }) => l.lessonid)).toEqual([C.lessonid, C.lesson2id]);
    const one = (await get(`/Lesson/${C.lessonid}/activities/progress`)).body.data;
    expect(lessons[0]).toEqual({
      lessonid: C.lessonid,
      lessonorder: 1,
      learnings: one.learnings,
      practices: one.practices,
      quizzes: one.quizzes,
    });
    expect(lessons[0].practices[0].status).toBe('done');
    expect(lessons[1].learnings.map((l: { status: string }) => l.status)).toEqual(['todo']);
  });

  it('answers a caller without a learner record with every step to do, and an unknown level 404', async () => {
    const res = await get(`/Lesson/level/${C.levelid}/steps`, teacher);
    expect(res.status).toBe(200);
    expect(res.body.data.lessons[0].practices[0]).toMatchObject({ status: 'todo', attempts: 0 });
    expect((await get(`/Lesson/level/${C.lessonid}/steps`)).status).toBe(404);
  });
});

describe('GET /level/library', () => {
  it('lists the learner\'s curricula, grades and levels with the progress the per-tier routes show', async () => {
    const res = await get('/level/library');
    expect(res.status).toBe(200);
    const { generated_at: at, curricula } = res.body.data;
    expect(Number.isNaN(Date.parse(at))).toBe(false);
    expect(curricula.map((c: { curriculumid: string }) => c.curriculumid)).toEqual([C.curriculumid]);
    const grade = curricula[0].grades.find((g: { gradeid: string }) => g.gradeid === C.gradeid);
    const level = grade.levels.find((l: { levelid: string }) => l.levelid === C.levelid);
    const perTier = (await get(`/level/grade/${C.gradeid}`)).body.data
      .find((l: { levelid: string }) => l.levelid === C.levelid);
    expect(level).toMatchObject({ levelname: perTier.levelname, progress: perTier.progress, number_lessons: 2 });
    expect(level.progress).toBeGreaterThan(0);
    const completedBefore = level.number_completed_lessons;
    await db()('studentlessonsprogress').where({ studentid, lessonid: C.lesson2id }).del();
    await db()('studentlessonsprogress').insert({
      studentlessonprogressid: crypto.randomUUID(), studentid, lessonid: C.lesson2id, levelid: C.levelid,
      gradeid: C.gradeid, curid: C.curriculumid, points: 100, progress: 100, completed: true, scores: 3,
    });
    const after = (await get('/level/library')).body.data.curricula[0].grades
      .find((g: { gradeid: string }) => g.gradeid === C.gradeid).levels
      .find((l: { levelid: string }) => l.levelid === C.levelid);
    expect(after.number_completed_lessons).toBe(completedBefore + 1);
  });

  it('is empty for a caller without a learner record', async () => {
    const res = await get('/level/library', teacher);
    expect(res.status).toBe(200);
    expect(res.body.data.curricula).toEqual([]);
  });
});

describe('GET /student/progress/summary', () => {
  it('counts lessons and levels completed per curriculum and names the level to go on with', async () => {
    // Level 1's two lessons: the first completed by its flag (progress below 100), the second not at all.
    await db()('studentlessonsprogress').where({ studentid }).del();
    await db()('studentlessonsprogress').insert({
      studentlessonprogressid: crypto.randomUUID(), studentid, lessonid: C.lessonid, levelid: C.levelid,
      gradeid: C.gradeid, curid: C.curriculumid, points: 60, progress: 60, completed: true, scores: 1,
    });
    const res = await get('/student/progress/summary');
    expect(res.status).toBe(200);
    const { curricula, totals } = res.body.data;
    const lessons = await db()('lessons').join('levels', 'levels.levelid', 'lessons.levelid')
      .join('grades', 'grades.gradeid', 'levels.gradeid')
      .where({ 'grades.curriculumid': C.curriculumid, 'lessons.lessonstatus': true, 'lessons.isdeleted': false })
      .count({ n: '*' }).first();
    expect(curricula).toHaveLength(1);
    expect(curricula[0]).toMatchObject({
      curriculumid: C.curriculumid,
      lessonsCompleted: 1,
      lessonsTotal: Number(lessons?.n),
      levelsCompleted: 0,
      currentLevel: { levelid: C.levelid, gradeid: C.gradeid, lessonsCompleted: 1, lessonsTotal: 2 },
    });
    expect(totals).toEqual({
      lessonsCompleted: 1,
      lessonsTotal: Number(lessons?.n),
      levelsCompleted: 0,
      levelsTotal: curricula[0].levelsTotal,
    });
    // The second lesson done by its progress alone completes level 1: the next level is the one to go on with.
    await db()('studentlessonsprogress').insert({
      studentlessonprogressid: crypto.randomUUID(), studentid, lessonid: C.lesson2id, levelid: C.levelid,
      gradeid: C.gradeid, curid: C.curriculumid, points: 100, progress: 100, completed: false, scores: 3,
    });
    const after = (await get('/student/progress/summary')).body.data.curricula[0];
    expect(after).toMatchObject({ lessonsCompleted: 2, levelsCompleted: 1 });
    expect(after.currentLevel?.levelid ?? null).not.toBe(C.levelid);
  });

  it('is empty for a caller without a learner record', async () => {
    const res = await get('/student/progress/summary', teacher);
    expect(res.body.data).toEqual({
      curricula: [],
      totals: { lessonsCompleted: 0, lessonsTotal: 0, levelsCompleted: 0, levelsTotal: 0 },
    });
  });
});

describe('CORS', () => {
  it('lets a browser send the learner app\'s X-Learning-Item-Types header', async () => {
    const res = await request(t.app)
      .options('/curriculum/subjects')
      .set('Origin', 'http://localhost:8081')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'authorization,x-learning-item-types');
    expect(res.status).toBeLessThan(300);
    const allowed = String(res.headers['access-control-allow-headers'] ?? '').toLowerCase().split(',')
      .map((h) => h.trim());
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'x-learning-item-types']));
  });
});
