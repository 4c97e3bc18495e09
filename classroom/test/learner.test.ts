import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';
import { tokenFor } from './auth-helpers';

let t: TestApp;
const db = () => t.tdb.db;
const learner = C.students[0];

async function login(username: string, password = 'demo', extra: Record<string, unknown> = {}) {
  return request(t.app).post('/auth/login').send({ studentusername: username, studentpassword: password, ...extra });
}
async function signIn(username: string = learner.schoolusername): Promise<string> {
  const res = await login(username);
  expect(res.status).toBe(200);
  return `Bearer ${res.body.data.accessToken}`;
}
const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await db()(table).where(where).count({ n: '*' }).first())?.n);

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemo(db());
});
afterAll(async () => { await t.tdb.dispose(); });

describe('POST /auth/login', () => {
  it('signs a learner in with the profile claims, stores the jti and opens an access row', async () => {
    const logintime = Date.now() - 2 * 60 * 60 * 1000;
    const res = await login('Demo.Student', 'demo', { logintime });
    expect(res.status).toBe(200);
    const claims = jwt.verify(res.body.data.accessToken, t.config.jwtSecret, { algorithms: ['HS256'] }) as
      Record<string, unknown>;
    expect(claims).toMatchObject({
      sub: learner.schooluserid,
      schooluserid: learner.schooluserid,
      schoolusername: 'demo.student',
      schooluserrole: 4,
      claims: 'wUKhn97t',
      studentid: learner.studentid,
      curriculumids: [C.curriculumid],
      schoolname: C.schoolname,
      schoolid: C.schoolid,
      uitheme: 'kids',
      standard: C.standardid,
      baselineid: null,
      baselinepassed: false,
      is_teacher_acc: false,
      dateofjoin: '2026/01/05',
      genderid: 2,
    });
    expect(await count('tokens', { token: claims.jti as string, lmsuserid: learner.schooluserid })).toBe(1);
    const access = await db()('rpiuseraccess').where({ userid: learner.schooluserid, status: 1 });
    expect(access).toHaveLength(1);
    expect(access[0].logintime).toBe(new Date(logintime).toISOString());
  });

  it('keeps several sessions alive: a second sign-in does not revoke the first token', async () => {
    const a = await signIn();
    const b = await signIn();
    expect((await request(t.app).get('/curriculum').set('Authorization', a)).status).toBe(200);
    expect((await request(t.app).get('/curriculum').set('Authorization', b)).status).toBe(200);
  });

  it('signs a class in at once: each sign-in its own token and access row, a wrong password among them ' +
    'writes nothing', async () => {
    const tokensBefore = await count('tokens');
    const accessBefore = await count('rpiuseraccess');
    const attempts = [...C.students, ...C.students].map((s, i) => login(s.schoolusername, i === 1 ? 'wrong' : 'demo'));
    const answers = await Promise.all(attempts);
    expect(answers.map((a) => a.status)).toEqual(answers.map((_, i) => (i === 1 ? 400 : 200)));
    const signedIn = answers.filter((a) => a.status === 200);
    const jtis = signedIn.map((a) => (jwt.decode(a.body.data.accessToken) as { jti: string }).jti);
    expect(new Set(jtis).size).toBe(signedIn.length);
    expect(await count('tokens')).toBe(tokensBefore + signedIn.length);
    expect(await count('rpiuseraccess')).toBe(accessBefore + signedIn.length);
    for (const a of signedIn)
      expect((await request(t.app).get('/curriculum').set('Authorization', `Bearer ${a.body.data.accessToken}`)).status)
        .toBe(200);
  });

  it('gives a teacher without a students row only the account claims', async () => {
    const res = await login('demo.teacher');
    const claims = jwt.decode(res.body.data.accessToken) as Record<string, unknown>;
    expect(claims.schooluserrole).toBe(3);
    expect(claims).not.toHaveProperty('studentid');
    expect(claims.is_teacher_acc).toBe(false);
  });

  it('refuses a wrong password, an unknown user, a disabled, deleted or inactive account, ' +
    'and writes nothing', async () => {
    const tokensBefore = await count('tokens');
    const accessBefore = await count('rpiuseraccess');
    expect((await login('demo.student', 'wrong')).body).toEqual({
      error: true,
      errormessage: 'User/Password not matching',
      data: false,
    });
    expect((await login('nobody')).status).toBe(400);
    const u = C.students[1];
    await db()('schoolusers').where('schooluserid', u.schooluserid).update({ isdisabled: true });
    expect((await login(u.schoolusername)).status).toBe(400);
    await db()('schoolusers').where('schooluserid', u.schooluserid).update({ isdisabled: false, isdeleted: true });
    expect((await login(u.schoolusername)).status).toBe(400);
    await db()('schoolusers').where('schooluserid', u.schooluserid).update({ isdeleted: false });
    await db()('students').where('studentid', u.studentid).update({ isactive: false });
    expect((await login(u.schoolusername)).body.errormessage).toBe('Student is removed!');
    await db()('students').where('studentid', u.studentid).update({ isactive: true });
    expect(await count('tokens')).toBe(tokensBefore);
    expect(await count('rpiuseraccess')).toBe(accessBefore);
  });

  it('refuses unknown body keys and a non-numeric logintime', async () => {
    expect((await login('demo.student', 'demo', { extra: 1 })).status).toBe(400);
    expect((await login('demo.student', 'demo', { logintime: 'soon' })).status).toBe(400);
  });

  it('accepts legacy bcrypt(md5) and md5 hashes once and replaces them with argon2id', async () => {
    const md5 = crypto.createHash('md5').update('legacy1').digest('hex');
    const a = await tokenFor(t, 4, { passwordhash: await bcrypt.hash(md5, 4) });
    expect((await login(a.schoolusername, 'legacy1')).status).toBe(200);
    expect((await db()('schoolusers').where('schooluserid', a.schooluserid).first()).schooluserpasswordhash).toMatch(
      /^\$argon2id\$/,
    );
    expect((await login(a.schoolusername, 'legacy1')).status).toBe(200);
    const b = await tokenFor(t, 3, { passwordhash: md5 });
    expect((await login(b.schoolusername, 'nope')).status).toBe(400);
    expect((await db()('schoolusers').where('schooluserid', b.schooluserid).first()).schooluserpasswordhash).toBe(md5);
    expect((await login(b.schoolusername, 'legacy1')).status).toBe(200);
    expect((await db()('schoolusers').where('schooluserid', b.schooluserid).first()).schooluserpasswordhash).toMatch(
      /^\$argon2id\$/,
    );
  });
});

describe('POST /auth/logout', () => {
  it('revokes the token and closes the access row; a second logout answers data:false', async () => {
    const auth = await signIn('demo.student2');
    const res = await request(t.app).post('/auth/logout').set('Authorization', auth).send({ timespent: 42 });
    expect(res.body).toEqual({ error: false, data: true });
    expect((await request(t.app).get('/curriculum').set('Authorization', auth)).status).toBe(401);
    const closed = await db()('rpiuseraccess').where({ userid: C.students[1].schooluserid, status: 2 });
    expect(closed.map((r) => r.timespent)).toContain(42);
    const again = await request(t.app).post('/auth/logout').set('Authorization', auth).send({});
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ error: true, data: false });
  });
});

describe('learner content', () => {
  it('walks curriculum → grade → level → lesson → learning and questions', async () => {
    const auth = await signIn();
    const subjects = await request(t.app).get('/curriculum/subjects').set('Authorization', auth);
    expect(subjects.body.data).toEqual([expect.objectContaining({ curriculumid: C.curriculumid, progress: 0 })]);
    const grades = await request(t.app).get(`/grade/curriculum/${C.curriculumid}`).set('Authorization', auth);
    expect(grades.body.data).toEqual([
      expect.objectContaining({ gradeid: C.gradeid, number_levels: 2, progress: 0, studentgradesprogresses: [] }),
    ]);
    const levels = await request(t.app).get(`/level/grade/${C.gradeid}`).set('Authorization', auth);
    expect(levels.body.data.map((l: { levelid: string }) => l.levelid)).toEqual([C.levelid, C.level2id]);
    expect(levels.body.data[0]).toMatchObject({ levelid: C.levelid, progress: 0 });
    const lessons = await request(t.app).get(`/lesson/level/${C.levelid}`).set('Authorization', auth);
    expect(lessons.body.data.level_has_quiz).toBe(true);
    expect(lessons.body.data.lesson.map((l: { lessonid: string }) => l.lessonid)).toEqual([C.lessonid, C.lesson2id]);
    const lesson = await request(t.app).get(`/lesson/${C.lessonid}/learning`).set('Authorization', auth);
    expect(lesson.status).toBe(200);
    expect(lesson.body.data.lessonlearnings).toEqual([
      { lessonlearningid: C.learningid, lessonlearningname: 'Counting to ten video', lessonlearningorder: 1 },
    ]);
    expect(lesson.body.data.lessonquizzes[0].lessonquizid).toBe(C.quizid);
    expect(lesson.body.data).not.toHaveProperty('lessonplans');
    const learning = await request(t.app).get(`/lesson/learning/${C.learningid}`).set('Authorization', auth);
    expect(learning.body.data).toMatchObject({
      studentlearningprogress: null,
      lessonlearningfileobject: { filename: 'demo/counting-to-ten.mp4', filetype: 2, fileext: 'mp4' },
    });
    const quiz = await request(t.app).get(`/question/quiz/${C.quizid}`).set('Authorization', auth);
    expect(quiz.body.data).toHaveLength(4);
    expect(quiz.body.data[0].question.questionobject).toMatchObject({
      questiontext: 'Which number is larger?',
      questionheading: { headingtext: 'Which number is larger?' },
      questionoptions: [
        expect.objectContaining({ questionoptiontext: '7', questionoptioniscorrect: false }),
        expect.objectContaining({ questionoptiontext: '12', questionoptioniscorrect: true }),
        expect.objectContaining({ questionoptiontext: '3' }),
      ],
    });
    const map = await request(t.app).get(`/curriculum/${C.curriculumid}/map`).set('Authorization', auth);
    expect(map.body.data.grades[0].levels[0]).toMatchObject({ hasquiz: true, levelpoints: 0 });
    expect(map.body.data.grades[0].levels[0].lessons.map((l: { lessonid: string }) => l.lessonid)).toEqual([
      C.lessonid,
      C.lesson2id,
    ]);
  });

  it('shows lesson plans to teacher accounts only', async () => {
    const teacher = await signIn('demo.teacher');
    const lesson = await request(t.app).get(`/lesson/${C.lessonid}/learning`).set('Authorization', teacher);
    expect(lesson.body.data.lessonplans).toEqual([
      { lessonplanid: C.planid, lessonplanname: 'Teaching counting', lessonplanorder: 1 },
    ]);
    expect(
      (await request(t.app).get(`/lesson/plan/${C.planid}`).set('Authorization', teacher)).body.data
        .lessonplanfileobject.fileext,
    ).toBe('pdf');
    expect(
      (
        await request(t.app)
          .get(`/lesson/plan/${C.planid}`)
          .set('Authorization', await signIn())
      ).status,
    ).toBe(403);
  });

  it("leaves a practice or quiz without an active question out of a learner's lesson, " +
    "and shows staff every one", async () => {
    const extra = {
      practice: crypto.randomUUID(),
      quiz: crypto.randomUUID(),
      inactiveQuiz: crypto.randomUUID(),
      question: crypto.randomUUID(),
      link: crypto.randomUUID(),
      inactiveLink: crypto.randomUUID(),
    };
    const lessonid = C.lesson2id;
    await db()('lessonpractices').insert({
      lessonpracticeid: extra.practice,
      lessonid,
      lessonpracticeorder: 2,
      lessonpracticename: 'Empty practice',
      lessonpracticedescription: '',
      points: 10,
    });
    await db()('lessonquizzes').insert([
      {
        lessonquizid: extra.quiz,
        lessonid,
        lessonquizorder: 2,
        lessonquizname: 'Quiz of a deleted question',
        lessonquizdescription: '',
        points: 10,
      },
      {
        lessonquizid: extra.inactiveQuiz,
        lessonid,
        lessonquizorder: 3,
        lessonquizname: 'Quiz of an inactive link',
        lessonquizdescription: '',
        points: 10,
      },
    ]);
    await db()('questions').insert({
      questionid: extra.question,
      templatetypeid: 1,
      questionidentifier: 'DELETED-1',
      isdeleted: true,
    });
    await db()('lessonquizquestions').insert([
      {
        lessonquizquestionid: extra.link,
        lessonquizid: extra.quiz,
        questionid: extra.question,
        lessonquizquestionorder: 1,
        lessonquizquestionstatus: true,
      },
      {
        lessonquizquestionid: extra.inactiveLink,
        lessonquizid: extra.inactiveQuiz,
        questionid: C.questions[4],
        lessonquizquestionorder: 1,
        lessonquizquestionstatus: false,
      },
    ]);
    try {
      const ids = (body: {
        lessonpractices: Array<{ lessonpracticeid: string }>;
        lessonquizzes: Array<{ lessonquizid: string }>;
      }) => [body.lessonpractices.map((p) => p.lessonpracticeid), body.lessonquizzes.map((q) => q.lessonquizid)];
      const asLearner = await request(t.app)
        .get(`/lesson/${lessonid}/learning`)
        .set('Authorization', await signIn());
      expect(ids(asLearner.body.data)).toEqual([[C.practice2id], [C.quiz2id]]);
      const asTeacher = await request(t.app)
        .get(`/lesson/${lessonid}/learning`)
        .set('Authorization', await signIn('demo.teacher'));
      expect(ids(asTeacher.body.data)).toEqual([
        [C.practice2id, extra.practice],
        [C.quiz2id, extra.quiz, extra.inactiveQuiz],
      ]);
      // What the learner is no longer offered is exactly what has no question to serve.
      for (const id of [extra.quiz, extra.inactiveQuiz]) {
        expect(
          (
            await request(t.app)
              .get(`/question/quiz/${id}`)
              .set('Authorization', await signIn())
          ).body.data,
        ).toEqual([]);
      }
    } finally {
      await db()('lessonquizquestions').whereIn('lessonquizquestionid', [extra.link, extra.inactiveLink]).del();
      await db()('lessonquizzes').whereIn('lessonquizid', [extra.quiz, extra.inactiveQuiz]).del();
      await db()('lessonpractices').where('lessonpracticeid', extra.practice).del();
      await db()('questions').where('questionid', extra.question).del();
    }
  });

  it('answers 400 for a malformed id and 404 for an unknown lesson', async () => {
    const auth = await signIn();
    expect((await request(t.app).get('/curriculum/not-a-uuid').set('Authorization', auth)).body).toEqual({
      error: true,
      errormessage: '"curriculumid" Invalid Curriculum id',
      data: false,
    });
    expect(
      (await request(t.app).get(`/lesson/${crypto.randomUUID()}/learning`).set('Authorization', auth)).status,
    ).toBe(404);
  });
});

describe('result submission', () => {
  const quizBody = (starttime: number, correct: boolean[]) => ({
    starttime,
    endtime: starttime + 60_000,
    result: C.quizquestions.map((q, i) => ({
      iscorrect: correct[i],
      lessonquizid: C.quizid,
      lessonquizquestionid: q,
      questionid: C.questions[i],
    })),
  });

  it('saves a passing quiz with its answers and aggregates, and a replay writes nothing', async () => {
    const auth = await signIn();
    const body = quizBody(Date.parse('2026-11-20T09:00:00Z'), [true, true, true, true]);
    const first = await request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', auth).send(body);
    expect(first.body).toEqual({ error: false, data: true });
    const rows = await db()('studentprogress').where({
      studentid: learner.studentid,
      studentprogressreferenceid: C.quizid,
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      ispass: true,
      progresstype: 2,
      resultpercentage: 100,
      points: 40,
      fullpoints: 40,
      marks: 4,
      scores: 3,
      starttime: '2026-11-20T09:00:00.000Z',
    });
    expect(await count('studentprogressquestions', { studentprogressid: rows[0].studentprogressid })).toBe(4);
    const lessonRow = await db()('studentlessonsprogress')
      .where({ studentid: learner.studentid, lessonid: C.lessonid })
      .first();
    expect(lessonRow).toMatchObject({ points: 40, completed: true, scores: 3 });

    const snapshot = async () =>
      Promise.all(
        [
          'studentprogress',
          'studentprogressquestions',
          'studentactives',
          'studentpoints',
          'studentlessonsprogress',
        ].map((x) => count(x)),
      );
    const before = await snapshot();
    const replay = await request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', auth).send(body);
    expect(replay.body).toEqual({ error: false, data: true });
    expect(await snapshot()).toEqual(before);
  });

  it('answers concurrent duplicates 200 and keeps one attempt', async () => {
    const bopha = C.students[4];
    const auth = await signIn(bopha.schoolusername);
    const body = quizBody(Date.parse('2026-11-20T09:30:00Z'), [true, false, true, true]);
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', auth).send(body),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const rows = await db()('studentprogress').where({
      studentid: bopha.studentid,
      studentprogressreferenceid: C.quizid,
      starttime: '2026-11-20T09:30:00.000Z',
    });
    expect(rows).toHaveLength(1);
    expect(await count('studentprogressquestions', { studentprogressid: rows[0].studentprogressid })).toBe(4);
  });

  it("scores a practice against its active questions: a failing one is not passed but earns " +
    "the practice's points", async () => {
    const auth = await signIn('demo.student2');
    const res = await request(t.app)
      .post(`/result/lesson/practice/${C.practiceid}`)
      .set('Authorization', auth)
      .send({
        starttime: Date.parse('2026-11-20T10:00:00Z'),
        result: [
          {
            iscorrect: true,
            lessonpracticeid: C.practiceid,
            lessonpracticequestionid: C.practicequestions[0],
            questionid: C.questions[0],
            tries: 1,
          },
          {
            iscorrect: false,
            lessonpracticeid: C.practiceid,
            lessonpracticequestionid: C.practicequestions[1],
            questionid: C.questions[1],
            tries: 3,
          },
        ],
      });
    expect(res.status).toBe(200);
    const row = await db()('studentprogress')
      .where({ studentid: C.students[1].studentid, studentprogressreferenceid: C.practiceid })
      .first();
    // One right answer of the practice's four questions: 25 %, not passed; the practice's 40 points for doing it.
    expect(row).toMatchObject({
      ispass: false,
      resultpercentage: 25,
      marks: 1,
      points: 40,
      fullpoints: 40,
      scores: 0,
      progresstype: 1,
    });
    const answers = await db()('studentprogressquestions')
      .where('studentprogressid', row.studentprogressid)
      .orderBy('tries');
    expect(answers.map((a) => [a.referencequestionid, a.tries])).toEqual([
      [C.practicequestions[0], 1],
      [C.practicequestions[1], 3],
    ]);
  });

  it('refuses a missing field, an unknown key or a question of another quiz, and writes nothing', async () => {
    const auth = await signIn(C.students[4].schoolusername);
    const before = await count('studentprogress');
    const base = quizBody(Date.parse('2026-11-20T11:00:00Z'), [false, false, true, true]);
    const missing = await request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', auth)
      .send({ ...base, result: [{ iscorrect: true, lessonquizid: C.quizid, questionid: C.questions[0] }] });
    expect(missing.status).toBe(400);
    expect(missing.body.errormessage).toContain('lessonquizquestionid');
    expect(
      (
        await request(t.app)
          .post(`/result/lesson/quiz/${C.quizid}`)
          .set('Authorization', auth)
          .send({ ...base, extra: 1 })
      ).status,
    ).toBe(400);
    const foreign = {
      ...base,
      result: [
        {
          iscorrect: true,
          lessonquizid: C.quizid,
          lessonquizquestionid: C.practicequestions[0],
          questionid: C.questions[0],
        },
      ],
    };
    expect(
      (await request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', auth).send(foreign)).status,
    ).toBe(400);
    expect(
      (await request(t.app).post(`/result/lesson/quiz/${crypto.randomUUID()}`).set('Authorization', auth).send(base))
        .status,
    ).toBe(400);
    expect(await count('studentprogress')).toBe(before);
    // Newer app builds add the chosen answer to each item: kept out of the row, never a reason to refuse.
    const withAnswer = { ...base, result: base.result.map((r: Record<string, unknown>) => ({ ...r, answer: '4' })) };
    const accepted = await request(t.app)
      .post(`/result/lesson/quiz/${C.quizid}`)
      .set('Authorization', auth)
      .send(withAnswer);
    expect(accepted.status).toBe(200);
    expect(await count('studentprogress')).toBe(before + 1);
  });

  it('makes level-quiz and baseline submissions idempotent too (the original failed on their replays)', async () => {
    const auth = await signIn();
    const level = {
      starttime: Date.parse('2026-11-20T12:00:00Z'),
      result: C.levelquizquestions.map((q, i) => ({
        iscorrect: true,
        levelid: C.levelid,
        levelquizquestionid: q,
        questionid: C.questions[2 + i],
      })),
    };
    for (let i = 0; i < 2; i++)
      expect(
        (await request(t.app).post(`/result/level/quiz/${C.levelid}`).set('Authorization', auth).send(level)).body,
      ).toEqual({ error: false, data: true });
    expect(
      await count('studentprogress', { studentid: learner.studentid, studentprogressreferenceid: C.levelid }),
    ).toBe(1);
    const baseline = {
      starttime: Date.parse('2026-11-20T12:30:00Z'),
      result: C.baselinequestions.map((q, i) => ({
        iscorrect: i === 0,
        curriculumbaselineid: C.baselineid,
        baselinequestionid: q,
        questionid: C.questions[i * 3],
      })),
    };
    for (let i = 0; i < 2; i++)
      expect(
        (
          await request(t.app)
            .post(`/result/baseline/question/${C.baselineid}`)
            .set('Authorization', auth)
            .send(baseline)
        ).status,
      ).toBe(200);
    expect(
      await count('studentprogress', { studentid: learner.studentid, studentprogressreferenceid: C.baselineid }),
    ).toBe(1);
    const check = await request(t.app)
      .post(`/curriculum/baseline/${C.curriculumid}/${encodeURIComponent(C.schoolname)}/${learner.schooluserid}`)
      .set('Authorization', auth)
      .send({});
    expect(check.body.data).toEqual({
      baselinename: 'Start of year check',
      curriculumbaselineid: C.baselineid,
      baselinepass: true,
    });
    const answers = await request(t.app).get(`/question/level/${C.levelid}/answers`).set('Authorization', auth);
    expect(
      answers.body.data.levelquizquestions.map((q: { answer: { iscorrect: boolean } }) => q.answer.iscorrect),
    ).toEqual([true, true]);
  });

  it('records a practice or quiz handed in with no right answer (result: []) as one failed attempt; the practice ' +
    'earns its points', async () => {
    const dara = C.students[3];
    const auth = await signIn(dara.schoolusername);
    const starttime = Date.parse('2026-11-21T09:00:00Z');
    for (const [url, referenceid, points] of [
      [`/result/lesson/practice/${C.practiceid}`, C.practiceid, 40],
      [`/result/lesson/quiz/${C.quizid}`, C.quizid, 0],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const res = await request(t.app)
          .post(url)
          .set('Authorization', auth)
          .send({ starttime, endtime: starttime + 30_000, result: [] });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ error: false, data: true });
      }
      const rows = await db()('studentprogress').where({
        studentid: dara.studentid,
        studentprogressreferenceid: referenceid,
      });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        ispass: false,
        resultpercentage: 0,
        marks: 0,
        points,
        scores: 0,
        starttime: '2026-11-21T09:00:00.000Z',
      });
      expect(await count('studentprogressquestions', { studentprogressid: rows[0].studentprogressid })).toBe(0);
    }
    const lessonRow = await db()('studentlessonsprogress')
      .where({ studentid: dara.studentid, lessonid: C.lessonid })
      .first();
    // The practice's 40 of the lesson's 100 points (video 20, practice 40, quiz 40); not completed without the quiz.
    expect(lessonRow).toMatchObject({ points: 40, progress: 40, completed: false });
    // A second failed practice (a retake) is a new attempt, and the points stay earned once.
    const retake = Date.parse('2026-11-21T10:00:00Z');
    expect(
      (
        await request(t.app)
          .post(`/result/lesson/practice/${C.practiceid}`)
          .set('Authorization', auth)
          .send({ starttime: retake, result: [] })
      ).status,
    ).toBe(200);
    expect(
      await count('studentprogress', { studentid: dara.studentid, studentprogressreferenceid: C.practiceid }),
    ).toBe(2);
    expect(
      await db()('studentlessonsprogress').where({ studentid: dara.studentid, lessonid: C.lessonid }).first(),
    ).toMatchObject({ points: 40 });
    // A level quiz or baseline check without a single answer is still refused, and writes nothing.
    const before = await count('studentprogress');
    const level = await request(t.app)
      .post(`/result/level/quiz/${C.levelid}`)
      .set('Authorization', auth)
      .send({ starttime, result: [] });
    expect(level.status).toBe(400);
    expect(await count('studentprogress')).toBe(before);
  });

  it("takes no attempt after a pass: the app's practice, " +
    "quiz and level quiz bodies write no row once passed", async () => {
    const dara = C.students[3];
    const auth = await signIn(dara.schoolusername);
    const practice = (starttime: number, right: number) => ({
      starttime,
      endtime: starttime + 40_000,
      // The practice screen's body: only the questions answered right, each with its tries.
      result: C.practicequestions.slice(0, right).map((q, i) => ({
        iscorrect: true,
        lessonpracticeid: C.practiceid,
        lessonpracticequestionid: q,
        questionid: C.questions[i],
        tries: 1,
      })),
    });
    const url = `/result/lesson/practice/${C.practiceid}`;
    expect(
      (
        await request(t.app)
          .post(url)
          .set('Authorization', auth)
          .send(practice(Date.parse('2026-11-22T09:00:00Z'), 4))
      ).status,
    ).toBe(200);
    const passed = await db()('studentprogress').where({
      studentid: dara.studentid,
      studentprogressreferenceid: C.practiceid,
      ispass: true,
    });
    expect(passed).toHaveLength(1);
    expect(passed[0]).toMatchObject({ resultpercentage: 100, marks: 4, points: 40 });
    const rows = await count('studentprogress', { studentid: dara.studentid });
    const questions = await count('studentprogressquestions');
    for (const [n, right] of [
      [1, 0],
      [2, 1],
      [3, 4],
    ]) {
      const res = await request(t.app)
        .post(url)
        .set('Authorization', auth)
        .send(practice(Date.parse(`2026-11-22T1${n}:00:00Z`), right));
      expect(res.body).toEqual({ error: false, data: true });
    }
    const quiz = quizBody(Date.parse('2026-11-22T12:00:00Z'), [true, true, true, true]);
    expect(
      (await request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', auth).send(quiz)).status,
    ).toBe(200);
    const quizRows = await count('studentprogress', { studentid: dara.studentid });
    expect(quizRows).toBe(rows + 1);
    const again = quizBody(Date.parse('2026-11-22T13:00:00Z'), [false, false, false, false]);
    expect(
      (await request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', auth).send(again)).body,
    ).toEqual({ error: false, data: true });
    expect(await count('studentprogress', { studentid: dara.studentid })).toBe(quizRows);
    expect(await count('studentprogressquestions')).toBe(questions + 4);
    expect(
      await db()('studentlessonsprogress').where({ studentid: dara.studentid, lessonid: C.lessonid }).first(),
    ).toMatchObject({ points: 80, completed: true });
  });

  it('a user without a students row cannot submit', async () => {
    const teacher = await signIn('demo.teacher');
    const res = await request(t.app)
      .post(`/result/lesson/quiz/${C.quizid}`)
      .set('Authorization', teacher)
      .send(quizBody(Date.now(), [true, true, true, true]));
    expect(res.body).toEqual({ error: true, errormessage: 'Invalid student id', data: false });
  });
});

describe('learning progress, usage, profile', () => {
  it('keeps the furthest position of a learning and earns its points at the end', async () => {
    const auth = await signIn('demo.student2');
    const post = (body: Record<string, unknown>) =>
      request(t.app).post(`/lesson/learning/${C.learningid}/progress`).set('Authorization', auth).send(body);
    expect((await post({ ended: false, time: 30, content_length: 0 })).status).toBe(400);
    expect((await post({ ended: false, time: 30, content_length: 60 })).body).toEqual({ error: false, data: true });
    expect((await post({ ended: false, time: 10, content_length: 60 })).status).toBe(200);
    let row = await db()('studentlearningsprogress')
      .where({ studentid: C.students[1].studentid, lessonlearningid: C.learningid })
      .first();
    expect(row).toMatchObject({ progress: 30, progress_percentage: 50, points: 0 });
    await post({ ended: true, time: 60, content_length: 60 });
    row = await db()('studentlearningsprogress')
      .where({ studentid: C.students[1].studentid, lessonlearningid: C.learningid })
      .first();
    expect(row).toMatchObject({ progress_percentage: 100, points: 20, viewed: 1 });
    const mine = await request(t.app).get(`/lesson/learning/${C.learningid}/progress`).set('Authorization', auth);
    expect(mine.body.data.studentlearningprogressid).toBe(row.studentlearningprogressid);
  });

  it('adds app usage to the day and shows a learner only their own rows', async () => {
    const auth = await signIn();
    const start = Date.parse('2026-11-20T13:00:00Z');
    expect(
      (
        await request(t.app)
          .post('/access')
          .set('Authorization', auth)
          .send({ starttime: start, endtime: start + 90_000 })
      ).body.data,
    ).toBe('Update Access successfully');
    await request(t.app)
      .post('/access')
      .set('Authorization', auth)
      .send({ starttime: start + 100_000, endtime: start + 130_000 });
    expect(
      (
        await request(t.app)
          .post('/access')
          .set('Authorization', auth)
          .send({ starttime: start, endtime: start - 1 })
      ).status,
    ).toBe(400);
    const rows = await db()('studentappusages').where('schooluserid', learner.schooluserid);
    expect(rows).toHaveLength(1);
    expect(rows[0].time_spent).toBe(120);
    const other = await signIn('demo.student2');
    await request(t.app).post('/access').set('Authorization', other).send({ starttime: start, endtime: start + 1000 });
    const list = await request(t.app).get('/access').set('Authorization', auth);
    expect(list.body.data.map((r: { schooluserid: string }) => r.schooluserid)).toEqual([learner.schooluserid]);
    const staffList = await request(t.app).get('/access').set('Authorization', await signIn('demo.teacher'));
    expect(staffList.body.data.length).toBe(2);
  });

  it('sets the profile image and reports progress', async () => {
    const auth = await signIn();
    expect(
      (await request(t.app).post('/student/profile').set('Authorization', auth).send({ filename: 'me.png' })).body.data,
    ).toBe('me.png');
    expect((await db()('students').where('studentid', learner.studentid).first()).profileimage).toBe('me.png');
    const progress = await request(t.app).get('/student/progress').set('Authorization', auth);
    expect(typeof progress.body.data).toBe('number');
    expect(progress.body.data).toBeGreaterThan(0);
  });

  it('answers the latest sign-in per user to the sync key', async () => {
    const res = await request(t.app)
      .post('/student/logintime')
      .set('Authorization', t.config.serverSyncKey)
      .send([learner.schooluserid, C.teacher.schooluserid, 'unknown']);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { userid: string }) => r.userid).sort()).toEqual(
      [learner.schooluserid, C.teacher.schooluserid].sort(),
    );
  });
});
