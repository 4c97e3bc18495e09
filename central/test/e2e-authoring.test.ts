import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers';
import { setStaffPassword } from '../src/auth/set-password';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';

// From two empty databases to a learner's quiz result on central: a superadmin authors a curriculum
// through the central API alone, central pushes it to the classroom server, a learner of the roster takes
// the lesson's quiz there, and the teacher's log export brings the result back to central.

const SYNC_KEY = 'e2e-authoring-sync-key';
const PASSWORD = 'Author-Passw0rd';
const SCHOOL = 'Riverside Primary';
const TEACHER = { schoolusername: 'msamina', password: 'Teach1' };
const LEARNER = { schoolusername: 'kofi1', password: 'pass1' };

let central: TestApp;
let room: ClassroomTestApp;
const servers: http.Server[] = [];
let token = '';

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Method = 'get' | 'post' | 'put';

/** A central call as the superadmin; answers the envelope's data, after checking it is a success. */
async function author(method: Method, path: string, body?: object): Promise<any> {
  const res = await request(central.app)
    [method](path)
    .set('Authorization', `Bearer ${token}`)
    .send(body ?? {});
  expect([res.status, res.body.error], `${method.toUpperCase()} ${path}: ${JSON.stringify(res.body)}`).toEqual([
    200,
    false,
  ]);
  return res.body.data;
}

function binary(res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

beforeAll(async () => {
  room = await makeClassroomApp({ SERVER_SYNC_KEY: SYNC_KEY, JWT_SECRET: 'classroom-jwt-for-e2e-authoring' });
  const roomUrl = await listen(room.app);
  central = await makeApp({
    SERVER_SYNC_KEY: SYNC_KEY,
    RPI_CLOUD: roomUrl,
    JWT_SECRET: 'central-jwt-for-e2e-authoring',
    LOG_IMPORT_ENABLED: 'true',
    RATE_LIMIT_MAX: '100000',
  });
  await listen(central.app);
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  await central?.tdb.dispose();
  await room?.tdb.dispose();
});

describe('a curriculum from nothing to a learner result, end to end', () => {
  const ids: Record<string, string> = {};

  it('starts from two empty databases', async () => {
    for (const table of ['curriculums', 'lessons', 'questions', 'schools', 'students']) {
      expect(await central.tdb.db(table).count({ n: '*' }).first(), `central ${table}`).toEqual({ n: 0 });
      expect(await room.tdb.db(table).count({ n: '*' }).first(), `classroom ${table}`).toEqual({ n: 0 });
    }
  });

  it('a superadmin authors it through the central API', async () => {
    // The operator's one step: the built-in superadmin gets a password (docs/operations.md, Accounts).
    await setStaffPassword(central.tdb.db, 'superadmin@superadmin.com', PASSWORD);
    const login = await request(central.app)
      .post('/auth/login')
      .send({ lmsusername: 'superadmin@superadmin.com', lmsuserpassword: PASSWORD });
    expect(login.status).toBe(200);
    token = login.body.data.accessToken;

    ids.country = (await author('post', '/country/create', { countryname: 'Ghana', expectedusage: 30 })).countryid;
    ids.subject = (
      await author('post', '/subject/create', { subjectname: 'Numeracy', subjectdescription: '' })
    ).subjectid;
    const curriculum = await author('post', '/curriculum/create', {
      curriculumname: 'Early Numeracy',
      curriculumdescription: 'Counting and adding',
      countryid: [ids.country],
      subjectid: ids.subject,
    });
    expect(curriculum.countryid).toEqual([ids.country]);
    ids.curriculum = curriculum.curriculumid;
    ids.grade = (
      await author('post', '/grade/create', {
        gradename: 'Grade 1',
        gradedescription: '',
        gradeorder: 1,
        curriculumid: ids.curriculum,
        passing_points: 80,
      })
    ).gradeid;
    ids.level = (
      await author('post', '/level/create', {
        levelname: 'Level 1',
        leveldescription: null,
        levelorder: 1,
        gradeid: ids.grade,
        quiz_points: 100,
        passing_points: 0,
      })
    ).levelid;
    ids.lesson = (
      await author('post', '/lesson/create', {
        lessonname: 'Counting to five',
        lessondescription: 'Fingers first',
        lessonorder: 1,
        total_points: 100,
        levelid: ids.level,
        passing_points: 0,
      })
    ).lessonid;

    // The media library is not part of this API yet: the video's document row is put in place as it would leave it.
    ids.document = crypto.randomUUID();
    await central.tdb
      .db('documents')
      .insert({
        documentid: ids.document,
        documenttypeid: 2,
        documentname: 'counting-to-five.mp4',
        documents3meta: JSON.stringify({ Key: 'counting-to-five.mp4' }),
        documenttags: JSON.stringify([]),
      });
    await author('post', `/lesson/learning/${ids.lesson}`, {
      documentid: ids.document,
      lessonlearningname: 'Counting video',
      lessonlearningdescription: 'Watch and count',
      lessonlearningorder: 1,
    });

    // The question bank: three questions of three template types.
    const option = (text: string, correct: boolean, i: number) => ({
      questionoptiontext: text,
      questionoptionvalue: text,
      questionoptioniscorrect: correct,
      questionoptionsequence: i + 1,
      questionoptionistext: true,
    });
    const questions = [
      {
        questionidentifier: 'E2E-count-1',
        templatetypeid: 1,
        questionheading: { headingtext: 'How many fingers on one hand?', headingfile: null },
        questiontext: 'How many fingers on one hand?',
        questionoptions: [option('4', false, 0), option('5', true, 1)],
        questiontags: ['count'],
        questioncorrectvalue: 0,
      },
      {
        questionidentifier: 'E2E-count-2',
        templatetypeid: 3,
        questionheading: { headingtext: 'Select every number below 3.', headingfile: null },
        questiontext: 'Select every number below 3.',
        questionoptions: [option('1', true, 0), option('2', true, 1), option('4', false, 2)],
        questiontags: ['count'],
        questioncorrectvalue: 0,
      },
      {
        questionidentifier: 'E2E-count-3',
        templatetypeid: 8,
        questionheading: { headingtext: 'Fill in the missing number.', headingfile: null },
        questiontext: 'One, two, -----, four.',
        questionoptions: [option('three', true, 0)],
        questiondistractors: [{ questiondistractorid: 'd1', questiondistractortext: 'five' }],
        questiontags: ['count'],
        questioncorrectvalue: 0,
      },
    ];
    for (const q of questions) expect(await author('post', '/question/create', q)).toBe(true);
    const bank = await author('post', '/question', {
      pageindex: 1,
      pagesize: 10,
      filter: [{ key: 'questiontags', value: 'count' }],
    });
    const byIdentifier = new Map<string, string>(
      bank.data.map((q: { questionidentifier: string; questionid: string }) => [q.questionidentifier, q.questionid]),
    );
    const [q1, q2, q3] = questions.map((q) => byIdentifier.get(q.questionidentifier)!);
    expect([q1, q2, q3].every(Boolean)).toBe(true);
    ids.q1 = q1; ids.q2 = q2; ids.q3 = q3;

    await author('post', `/lesson/practice/${ids.lesson}`, {
      lessonpracticename: 'Count along',
      lessonpracticedescription: 'Try as often as you like',
      lessonpracticeorder: 1,
      points: 0,
    });
    ids.practice = (await author('get', `/lesson/practice/${ids.lesson}`))[0].lessonpracticeid;
    await author('post', `/lesson/quiz/${ids.lesson}`, {
      lessonquizname: 'Counting quiz',
      lessonquizdescription: 'Show what you know',
      lessonquizorder: 1,
      points: 0,
    });
    ids.quiz = (await author('get', `/lesson/quiz/${ids.lesson}`))[0].lessonquizid;
    for (const [i, q] of [q1, q2].entries())
      await author('post', `/lesson/practice/question/${ids.practice}/${q}/${i + 1}`);
    for (const [i, q] of [q1, q2, q3].entries())
      await author('post', `/lesson/quiz/question/${ids.quiz}/${q}/${i + 1}`);

    // The level quiz: one question from the bank, reviewing the lesson.
    await author('post', `/level/quiz/question/${ids.level}/${q3}/1`);
    const [levelQuiz] = await author('get', `/level/quiz/question/${ids.level}`);
    await author('put', `/level/quiz/question/setlesson/${levelQuiz.levelquizquestionid}`, { lessonid: ids.lesson });

    // What the admin UI's map shows, with the points spread by the model (learning, practice and quiz: 33, 33, 34).
    const [tree] = await author('get', `/curriculum/tree/${ids.curriculum}`);
    const lesson = tree.grades[0].levels[0].lessons[0];
    expect(lesson).toMatchObject({
      lessonid: ids.lesson,
      total_points: 100,
      learning_points: 33,
      practices_points: 33,
      quizzes_points: 34,
    });
    expect(lesson.quizzes.map((x: { lessonquizid: string }) => x.lessonquizid)).toEqual([ids.quiz]);
    expect(tree.grades[0]).toMatchObject({ gradeid: ids.grade, points: 200 });
  });

  it('central pushes the curriculum, then the school\'s teacher and learner, to the classroom server', async () => {
    // No route creates schools or classes yet: the school and its
    // class are put in place as those routes would leave them.
    ids.school = crypto.randomUUID();
    ids.standard = crypto.randomUUID();
    await central.tdb
      .db('schools')
      .insert({
        schoolid: ids.school,
        schoolname: SCHOOL,
        countryid: ids.country,
        curriculums: JSON.stringify([ids.curriculum]),
      });
    await central.tdb
      .db('standards')
      .insert({ standardid: ids.standard, standardname: 'Class 1', schoolid: ids.school, schoolname: SCHOOL });

    expect(await author('post', '/sync/cloud')).toBe(true);
    expect(await room.tdb.db('lessons').pluck('lessonid')).toEqual([ids.lesson]);
    expect(
      await room.tdb
        .db('lessonquizquestions')
        .where('lessonquizid', ids.quiz)
        .orderBy('lessonquizquestionorder')
        .pluck('questionid'),
    ).toEqual([ids.q1, ids.q2, ids.q3]);
    expect(await room.tdb.db('levelquizquestions').where('levelid', ids.level).first()).toMatchObject({
      questionid: ids.q3,
      lessonid: ids.lesson,
    });

    expect(
      await author('post', '/teacher/create?cloud=true', {
        schoolname: SCHOOL,
        teachers: [{ schoolusername: TEACHER.schoolusername, schooluserpasswordhash: TEACHER.password }],
      }),
    ).toBe(true);
    expect(
      await author('post', '/student/create?cloud=true', {
        curriculumid: [ids.curriculum],
        schoolid: ids.school,
        standard: ids.standard,
        students: [
          {
            studentfirstname: 'Kofi',
            studentlastname: 'Mensah',
            mothername: 'Ama',
            fathername: 'Yaw',
            contact: '',
            dateofbirth: '02-03-2018',
            dateofjoin: '05-01-2026',
            genderid: '1',
            city: 'Accra',
            country: 'Ghana',
            state: 'Greater Accra',
            schoolusername: LEARNER.schoolusername,
            schooluserpasswordhash: LEARNER.password,
          },
        ],
      }),
    ).toBe(true);
    const learner = await central.tdb
      .db('students as s')
      .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .where('u.schoolusername', LEARNER.schoolusername)
      .first('s.studentid');
    ids.learner = learner.studentid;
    expect(await room.tdb.db('students').where('studentid', ids.learner).first()).toMatchObject({
      curriculumids: [ids.curriculum],
      schoolname: SCHOOL,
    });
  });

  it('the learner signs in on the classroom server, opens the lesson and submits its quiz', async () => {
    const login = await request(room.app)
      .post('/auth/login')
      .send({ studentusername: LEARNER.schoolusername, studentpassword: LEARNER.password });
    expect(login.status).toBe(200);
    const auth = `Bearer ${login.body.data.accessToken}`;
    const get = (path: string) => request(room.app).get(path).set('Authorization', auth);

    expect((await get('/curriculum/subjects')).body.data.map((c: { curriculumid: string }) => c.curriculumid)).toEqual([
      ids.curriculum,
    ]);
    const lessons = await get(`/lesson/level/${ids.level}`);
    expect(lessons.body.data).toMatchObject({ level_has_quiz: true });
    expect(lessons.body.data.lesson.map((l: { lessonid: string }) => l.lessonid)).toEqual([ids.lesson]);
    const opened = await get(`/lesson/${ids.lesson}/learning`);
    expect(opened.body.data).toMatchObject({
      lessonid: ids.lesson,
      lessonname: 'Counting to five',
      lessonlearnings: [{ lessonlearningname: 'Counting video' }],
      lessonpractices: [{ lessonpracticeid: ids.practice }],
      lessonquizzes: [{ lessonquizid: ids.quiz }],
    });
    const video = await get(`/lesson/learning/${opened.body.data.lessonlearnings[0].lessonlearningid}`);
    expect(video.body.data).toMatchObject({
      lessonlearningfileobject: { filename: 'counting-to-five.mp4', filetype: 2, fileext: 'mp4' },
    });

    const quiz = await get(`/question/quiz/${ids.quiz}`);
    const items = [...quiz.body.data].sort((a, b) => a.lessonquizquestionorder - b.lessonquizquestionorder);
    expect(items.map((q) => q.questionid)).toEqual([ids.q1, ids.q2, ids.q3]);
    expect(items[0].question.questionobject).toMatchObject({
      questionheading: { headingtext: 'How many fingers on one hand?' },
      questionoptions: [
        expect.objectContaining({ questionoptiontext: '4' }),
        expect.objectContaining({ questionoptiontext: '5', questionoptioniscorrect: true }),
      ],
    });
    const starttime = Date.now() - 60_000;
    const result = items.map((q, i) => ({
      iscorrect: i !== 2,
      lessonquizid: ids.quiz,
      lessonquizquestionid: q.lessonquizquestionid,
      questionid: q.questionid,
    }));
    const saved = await request(room.app)
      .post(`/result/lesson/quiz/${ids.quiz}`)
      .set('Authorization', auth)
      .send({ starttime, endtime: starttime + 45_000, result });
    expect(saved.body).toEqual({ error: false, data: true });
    expect(
      await room.tdb
        .db('studentprogress')
        .where({ studentid: ids.learner, studentprogressreferenceid: ids.quiz })
        .first(),
    ).toMatchObject({ progresstype: 2, marks: 2 });
  });

  it("the teacher's log export, imported on central, brings the result back", async () => {
    expect(await central.tdb.db('studentprogress').count({ n: '*' }).first()).toEqual({ n: 0 });
    const classroomLogin = await request(room.app)
      .post('/auth/login')
      .send({ studentusername: TEACHER.schoolusername, studentpassword: TEACHER.password });
    expect(classroomLogin.status).toBe(200);
    const zip = await request(room.app)
      .get('/export/log')
      .set('Authorization', `Bearer ${classroomLogin.body.data.accessToken}`)
      .buffer(true)
      .parse(binary);
    expect(zip.status).toBe(200);
    expect(zip.headers['content-type']).toMatch(/zip/);

    const centralLogin = await request(central.app)
      .post('/auth/school/login')
      .send({ lmsusername: TEACHER.schoolusername, lmsuserpassword: TEACHER.password });
    expect(centralLogin.status).toBe(200);
    const imported = await request(central.app)
      .put('/log/import?offline=true')
      .set('Authorization', `Bearer ${centralLogin.body.data.accessToken}`)
      .attach('importfile', zip.body as Buffer, { filename: 'studentlog.zip', contentType: 'application/zip' });
    expect([imported.status, imported.body.error], JSON.stringify(imported.body)).toEqual([200, false]);

    const progress = await central.tdb.db('studentprogress').where({ studentid: ids.learner });
    expect(progress).toHaveLength(1);
    expect(progress[0]).toMatchObject({
      studentprogressreferenceid: ids.quiz,
      progresstype: 2,
      marks: 2,
      ispass: false,
    });
    expect(Number(progress[0].resultpercentage)).toBeCloseTo(66.67, 1);
    // Each answer names the quiz's link to its question.
    const links = new Map<string, string>(
      (
        await central.tdb
          .db('lessonquizquestions')
          .where('lessonquizid', ids.quiz)
          .select('questionid', 'lessonquizquestionid')
      ).map((l: { questionid: string; lessonquizquestionid: string }) => [l.lessonquizquestionid, l.questionid]),
    );
    const answers = await central.tdb
      .db('studentprogressquestions')
      .where({ studentprogressid: progress[0].studentprogressid });
    expect(answers.map((a) => [links.get(a.referencequestionid), Boolean(a.iscorrect)]).sort()).toEqual(
      [
        [ids.q1, true],
        [ids.q2, true],
        [ids.q3, false],
      ].sort(),
    );
  });
});
