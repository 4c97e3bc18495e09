import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { W, addAttempts, addLearners, addLessonProgress, seedAna, seedWorld, uuid, type Learner } from './report-data';

// The learner and class tables (contract §16.2): shapes, ordering, the best-attempt rule (the earliest
// pass, else the latest failure), the empty page when no learner is chosen (decision 25), and what a
// teacher is not shown (learner identities, spec Teacher rule 8).

let t: TestApp;
const auth: Record<string, string> = {};
let ana: Learner;
let ben: Learner;

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  await seedWorld(db);
  ({ ana } = await seedAna(db));
  [ben] = await addLearners(db, [
    { school: 'sunrise', username: 'ben', created_at: '2026-02-01T00:00:00Z' },
    { school: 'sunrise', username: 'cara', created_at: '2026-03-01T00:00:00Z' },
    { school: 'sunrise', username: 'tacc', teacherAccount: true },
    { school: 'lotus', username: 'dara' },
  ]);
  // Ben: lesson 1 failed once (best: that failure); Cara: no attempt at all.
  await addAttempts(db, [
    { studentid: ben.studentid, reference: W.quiz.ls1, ispass: false, pct: 70, at: '2026-06-01T08:00:00Z' },
  ]);
  await addLessonProgress(db, ben.studentid, ['ls1']);
  await createStaff(db, { lmsusername: 'super@reports.test', roleids: [ROLE_IDS.superadmin] });
  await createStaff(db, { lmsusername: 'teacher@reports.test', roleids: [ROLE_IDS.teacher] });
  auth.super = `Bearer ${(await staffLogin(t.app, 'super@reports.test')).accessToken}`;
  auth.teacher = `Bearer ${(await staffLogin(t.app, 'teacher@reports.test')).accessToken}`;
});
afterAll(async () => {
  await t.tdb.dispose();
});

const post = (url: string, body: object, who = 'super') =>
  request(t.app).post(url).set('Authorization', auth[who]).send(body);
const f = (filters: Record<string, unknown>) => ({
  pageindex: 1,
  pagesize: 10,
  filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
});

describe('POST /report/studentprogress (one learner, every active lesson)', () => {
  it('answers the empty page until a learner or class is chosen (no fixed test learner)', async () => {
    const res = await post(
      '/report/studentprogress',
      f({ curriculumid: '', gradeid: '', levelid: '', studentid: '', lessonid: '' }),
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ data: [], total: 0, pageindex: 1, pagesize: 10 });
  });

  it('rows of every active lesson, newest best attempt first, with the best-attempt rule', async () => {
    const res = await post('/report/studentprogress', f({ studentid: ana.studentid }));
    expect(res.status).toBe(200);
    const rows = res.body.data.data as Array<Record<string, any>>;
    expect(res.body.data.total).toBe(4);
    // Lesson 2's best (5 May) is newer than lesson 1's (2 May); lessons without a best come last, in curriculum order.
    expect(rows.map((r) => r.lessonname)).toEqual(['Adding', 'Counting', 'Taking away', 'Times tables']);
    const [adding, counting, takingAway] = rows;
    // Earliest pass, not the later better pass nor the first failure.
    expect(counting.laststudentprogress).toEqual({
      studentprogressreferenceid: W.quiz.ls1,
      scores: 9,
      resultpercentage: 85,
      marks: 2,
      ispass: true,
      starttime: '2026-05-02T08:00:00.000Z',
      totalquestions: 2,
    });
    expect(counting.starttime).toBe('2026-05-02T08:00:00.000Z');
    // No pass: the latest failure.
    expect(adding.laststudentprogress).toMatchObject({
      resultpercentage: 60,
      ispass: false,
      starttime: '2026-05-05T08:00:00.000Z',
      marks: 1,
      scores: 6,
    });
    // An attempt without a lesson-progress row is not shown.
    expect(takingAway.laststudentprogress).toBeUndefined();
    expect(takingAway.studentlessonsprogresses).toEqual([]);
    expect(counting.studentlessonsprogresses).toEqual([{ lessonid: W.lesson.ls1 }]);
    expect(counting.level).toEqual({
      levelname: 'Level 1',
      grade: { gradename: 'Grade 1', curriculum: { curriculumname: 'Maths' } },
    });
    expect(counting).toMatchObject({ lessonid: W.lesson.ls1, levelid: W.level.l1, lessonstatus: true, lessonorder: 1 });
    expect(counting.student).toMatchObject({
      studentid: ana.studentid,
      schoolname: W.schoolname.sunrise,
      schooluser: { schoolusername: 'ana' },
      class: { standardname: 'Class A' },
      school: { schoolname: W.schoolname.sunrise, countries: { countryname: 'Cambodia' } },
    });
    // The learner's identity only for a caller who may read learners: not for a teacher.
    expect(counting.student).toMatchObject({ studentfirstname: 'First ana', contact: '+855 12 345 678' });
    const asTeacher = await post('/report/studentprogress', f({ studentid: ana.studentid }), 'teacher');
    expect(asTeacher.body.data.data[1].student).toMatchObject({
      studentid: ana.studentid,
      schooluser: { schoolusername: 'ana' },
    });
    for (const k of ['studentfirstname', 'studentlastname', 'mothername', 'contact', 'wg_seeing'])
      expect(asTeacher.body.data.data[1].student).not.toHaveProperty(k);
  });

  it('narrows by grade, level and lesson; a class alone means its first learner', async () => {
    const byGrade = await post('/report/studentprogress', f({ studentid: ana.studentid, gradeid: W.grade.g2 }));
    expect(byGrade.body.data.data.map((r: any) => r.lessonname)).toEqual(['Times tables']);
    const byLesson = await post(
      '/report/studentprogress',
      f({ studentid: ana.studentid, lessonid: [W.lesson.ls1, W.lesson.ls2] }),
    );
    expect(byLesson.body.data.total).toBe(2);
    const byClass = await post('/report/studentprogress', f({ standard: W.class.sunrise }));
    // Ana is the class's first learner (created first); the teacher's own account is never one.
    expect(byClass.body.data.data[0].student.studentid).toBe(ana.studentid);
  });

  it('refuses what is not an IMultiPaging body', async () => {
    expect((await post('/report/studentprogress', { pagesize: 5000 })).status).toBe(400);
    expect((await post('/report/studentprogress', { other: 1 })).body.errormessage).toBe('"other" is not allowed');
    expect(
      (await post('/report/studentprogress', { filter: Array.from({ length: 21 }, () => ({ key: 'a', value: '' })) }))
        .body.errormessage,
    ).toBe('Invalid filter');
  });
});

describe('POST /report/studentlevelquiz (one learner, every active level)', () => {
  it('rows of every level with the level quiz best attempt and its question count', async () => {
    const res = await post('/report/studentlevelquiz', f({ studentid: ana.studentid }));
    expect(res.status).toBe(200);
    const rows = res.body.data.data as Array<Record<string, any>>;
    expect(rows.map((r) => r.levelname)).toEqual(['Level 1', 'Level 2', 'Level 3']);
    expect(rows[0].laststudentprogress).toEqual({
      studentprogressreferenceid: W.level.l1,
      scores: 8,
      resultpercentage: 90,
      marks: 3,
      ispass: true,
      starttime: '2026-05-08T08:00:00.000Z',
      totalquestions: 3,
    });
    expect(rows[0].grade).toEqual({ gradename: 'Grade 1', curriculum: { curriculumname: 'Maths' } });
    expect(rows[0].studentlevelsprogresses).toEqual([{ levelid: W.level.l1 }]);
    expect(rows[1].laststudentprogress).toBeUndefined();
    expect(rows[0].student.schooluser).toEqual({ schoolusername: 'ana' });
    expect((await post('/report/studentlevelquiz', f({}))).body.data).toEqual({
      data: [],
      total: 0,
      pageindex: 1,
      pagesize: 10,
    });
  });
});

describe('POST /report/studentprogress/class (one lesson x the learners of a class)', () => {
  it("pages the class learners (not the teacher account) with each one's best " +
      "attempt at the first lesson", async () => {
    const res = await post('/report/studentprogress/class', f({ standard: W.class.sunrise, lessonid: '' }));
    expect(res.status).toBe(200);
    expect(res.body.data.total).toBe(3);
    const rows = res.body.data.data as Array<Record<string, any>>;
    expect(rows.map((r) => r.schooluser.schoolusername)).toEqual(['ana', 'ben', 'cara']);
    expect(rows[0].lesson).toEqual({
      lessonname: 'Counting',
      level: { levelname: 'Level 1', grade: { gradename: 'Grade 1', curriculum: { curriculumname: 'Maths' } } },
    });
    expect(rows[0].laststudentprogress).toMatchObject({ resultpercentage: 85, ispass: true, totalquestions: 2 });
    expect(rows[1].laststudentprogress).toMatchObject({ resultpercentage: 70, ispass: false });
    expect(rows[2].laststudentprogress).toBeUndefined();
    expect(rows[2].studentlessonsprogresses).toEqual([]);
    expect(rows[0]).toMatchObject({
      class: { standardname: 'Class A' },
      school: { schoolname: W.schoolname.sunrise, countries: { countryname: 'Cambodia' } },
    });
    // The learner row: its own columns (identity for a caller who may read learners).
    expect(rows[0]).toMatchObject({
      studentid: ana.studentid,
      studentfirstname: 'First ana',
      standard: W.class.sunrise,
    });
  });

  it('shows the lesson named, and pages', async () => {
    const res = await post('/report/studentprogress/class', {
      pageindex: 2,
      pagesize: 2,
      filter: [
        { key: 'standard', value: W.class.sunrise },
        { key: 'lessonid', value: W.lesson.ls2 },
      ],
    });
    expect(res.body.data).toMatchObject({ total: 3, pageindex: 2, pagesize: 2 });
    expect(res.body.data.data).toHaveLength(1);
    expect(res.body.data.data[0].lesson.lessonname).toBe('Adding');
  });

  it('answers the empty page without a class', async () => {
    expect((await post('/report/studentprogress/class', f({ standard: '', lessonid: '' }))).body.data).toEqual({
      data: [],
      total: 0,
      pageindex: 1,
      pagesize: 10,
    });
  });

  it('gives a teacher no learner identity', async () => {
    const res = await post('/report/studentprogress/class', f({ standard: W.class.sunrise }), 'teacher');
    expect(res.status).toBe(200);
    const [first] = res.body.data.data;
    expect(first.schooluser.schoolusername).toBe('ana');
    for (const k of ['studentfirstname', 'studentlastname', 'mothername', 'contact', 'dateofbirth', 'wg_seeing'])
      expect(first).not.toHaveProperty(k);
  });
});

describe('POST /report/studentlevelquiz/class', () => {
  it('one level (the first of the class curriculum) x the class', async () => {
    const res = await post('/report/studentlevelquiz/class', f({ standard: W.class.sunrise }));
    const rows = res.body.data.data as Array<Record<string, any>>;
    expect(rows[0].level).toEqual({
      levelname: 'Level 1',
      grade: { gradename: 'Grade 1', curriculum: { curriculumname: 'Maths' } },
    });
    expect(rows[0].laststudentprogress).toMatchObject({
      resultpercentage: 90,
      totalquestions: 3,
      starttime: '2026-05-08T08:00:00.000Z',
    });
    expect(rows[0].studentlevelsprogresses).toEqual([{ levelid: W.level.l1 }]);
    expect(rows[1].laststudentprogress).toBeUndefined();
  });
});

describe('POST /report/studentlastcompletedquiz', () => {
  it('each learner with the furthest quiz reached and the latest attempt there', async () => {
    await addAttempts(t.tdb.db, [
      { studentid: ben.studentid, reference: W.quiz.ls4, ispass: true, pct: 88, at: '2026-04-01T08:00:00Z' },
    ]);
    const res = await post('/report/studentlastcompletedquiz', f({ standard: W.class.sunrise }));
    expect(res.status).toBe(200);
    expect(res.body.data.total).toBe(3);
    const rows = res.body.data.data as Array<Record<string, any>>;
    // Newest learner first.
    expect(rows.map((r) => r.schooluser.schoolusername)).toEqual(['cara', 'ben', 'ana']);
    const [c, b, a] = rows;
    expect(c.laststudentprogress).toBeUndefined();
    // Ben reached grade 2, though earlier in time.
    expect(b.laststudentprogress).toMatchObject({ resultpercentage: 88, studentprogressreferenceid: W.quiz.ls4 });
    expect(b.laststudentprogress.lessonquiz).toEqual({
      lessonquizid: W.quiz.ls4,
      lessonquizorder: 1,
      lesson: {
        lessonname: 'Times tables',
        lessonorder: 1,
        level: {
          levelname: 'Level 3',
          levelorder: 1,
          grade: { gradename: 'Grade 2', gradeorder: 2, curriculum: { curriculumname: 'Maths' } },
        },
      },
    });
    // Ana: the highest level of grade 1 she attempted (level 2's lesson), not the latest in time.
    expect(a.laststudentprogress).toMatchObject({ studentprogressreferenceid: W.quiz.ls3, resultpercentage: 90 });
    expect(a).toMatchObject({
      studentfirstname: 'First ana',
      country: 'Cambodia',
      standard: W.class.sunrise,
      curriculumid: W.curriculum,
      studentprogresses: [],
      schooluser: { schoolusername: 'ana' },
      class: { standardname: 'Class A' },
      curriculum: { curriculumname: 'Maths' },
      school: {
        schoolid: W.school.sunrise,
        schoolname: W.schoolname.sunrise,
        countryid: W.country.kh,
        countries: { countryname: 'Cambodia' },
      },
    });
  });

  it('narrows by content: only learners with an attempt there, and their attempts there', async () => {
    const res = await post('/report/studentlastcompletedquiz', f({ standard: W.class.sunrise, gradeid: W.grade.g1 }));
    expect(
      res.body.data.data.map((r: any) => [
        r.schooluser.schoolusername,
        r.laststudentprogress?.studentprogressreferenceid,
      ]),
    ).toEqual([
      ['ben', W.quiz.ls1],
      ['ana', W.quiz.ls3],
    ]);
  });

  it('a teacher sees no first name; no learner chosen is the empty page', async () => {
    const res = await post('/report/studentlastcompletedquiz', f({ studentid: ana.studentid }), 'teacher');
    expect(res.body.data.data[0]).not.toHaveProperty('studentfirstname');
    const none = await post(
      '/report/studentlastcompletedquiz',
      f({ countryid: W.country.kh, schoolname: W.schoolname.sunrise, studentid: '', standard: '' }),
    );
    expect(none.body.data).toEqual({ data: [], total: 0, pageindex: 1, pagesize: 10 });
  });
});

describe('POST /report/student-grade-progress, /student-level-progress, /student-lesson-progress', () => {
  it('grade progress: the class learners with their progress in the lowest grade', async () => {
    await t.tdb
      .db('studentgradesprogress')
      .insert({
        studentgradeprogressid: uuid(),
        studentid: ana.studentid,
        curriculumid: W.curriculum,
        gradeid: W.grade.g1,
        progress: 42.5,
        scores: 7,
      });
    const res = await post('/report/student-grade-progress', f({ standard: W.class.sunrise, gradeid: '' }));
    expect(res.body.data.total).toBe(3);
    const [a, b] = res.body.data.data;
    expect(a.studentgradesprogresses).toEqual([{ gradeid: W.grade.g1, progress: 42.5, scores: 7 }]);
    expect(b.studentgradesprogresses).toEqual([]);
    expect(a.grade).toEqual({ gradename: 'Grade 1', curriculum: { curriculumname: 'Maths' } });
    expect(a.class).toEqual({ standardname: 'Class A' });
    expect((await post('/report/student-grade-progress', f({ standard: '' }))).body.data.total).toBe(0);
  });

  it("level progress: active levels by name, paged, the learner's row when there is one, and `student`", async () => {
    const res = await post('/report/student-level-progress', {
      pageindex: 1,
      pagesize: 2,
      filter: [{ key: 'studentid', value: ana.studentid }],
    });
    expect(res.body.data.total).toBe(3);
    expect(res.body.data.student).toEqual({
      studentfirstname: 'First ana',
      curriculum: { curriculumid: W.curriculum },
    });
    const [l1, l2] = res.body.data.data;
    expect(l1).toMatchObject({
      levelid: W.level.l1,
      levelname: 'Level 1',
      grade: {
        gradeid: W.grade.g1,
        gradename: 'Grade 1',
        curriculum: { curriculumid: W.curriculum, curriculumname: 'Maths' },
      },
    });
    expect(l1.studentlevelprogress).toMatchObject({ studentid: ana.studentid, levelid: W.level.l1, progress: 40 });
    expect(l2).not.toHaveProperty('studentlevelprogress');
    const teacher = await post('/report/student-level-progress', f({ studentid: ana.studentid }), 'teacher');
    expect(teacher.body.data.student).toEqual({ curriculum: { curriculumid: W.curriculum } });
    expect((await post('/report/student-level-progress', f({ studentid: '' }))).body.data).toEqual({
      data: [],
      total: 0,
      pageindex: 1,
      pagesize: 10,
      student: null,
    });
  });

  it('lesson progress: active lessons by name, narrowed by level', async () => {
    const res = await post('/report/student-lesson-progress', f({ studentid: ana.studentid, levelid: W.level.l1 }));
    expect(res.body.data.data.map((r: any) => r.lessonname)).toEqual(['Adding', 'Counting']);
    expect(res.body.data.data[1].studentlessonprogress).toMatchObject({ lessonid: W.lesson.ls1, progress: 50 });
    expect(res.body.data.data[1].level).toMatchObject({
      levelid: W.level.l1,
      levelname: 'Level 1',
      grade: { gradeid: W.grade.g1 },
    });
  });
});

describe('POST /report/studentstatus', () => {
  it('accepts the six filter entries the Student Activity page always sends, empty values included', async () => {
    const res = await post('/report/studentstatus', {
      pageindex: 1, pagesize: 10,
      filter: [
        { key: 'countryid', value: '' }, { key: 'schoolname', value: null }, { key: 'standard', value: '' },
        { key: 'studentid', value: '' }, { key: 'startDate', value: '' }, { key: 'endDate', value: '' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.total).toBe(4);
  });

  it('minutes of use in the window, last sign-in, active within the last month', async () => {
    const db = t.tdb.db;
    const recent = new Date(Date.now() - 3 * 86_400_000);
    await db('rpiuseraccess').insert([
      {
        rpiuseraccessid: uuid(),
        userid: ana.schooluserid,
        logintime: new Date('2026-01-05T10:00:00Z'),
        ipaddress: '1',
      },
      { rpiuseraccessid: uuid(), userid: ana.schooluserid, logintime: recent, ipaddress: '1' },
      {
        rpiuseraccessid: uuid(),
        userid: ben.schooluserid,
        logintime: new Date('2020-01-05T10:00:00Z'),
        ipaddress: '1',
      },
    ]);
    await db('studentappusages').insert([
      {
        studentappusageid: uuid(),
        schooluserid: ana.schooluserid,
        time_spent: 61,
        created_at: new Date('2026-03-02T00:00:00Z'),
      },
      {
        studentappusageid: uuid(),
        schooluserid: ana.schooluserid,
        time_spent: 600,
        created_at: new Date('2026-05-02T00:00:00Z'),
      },
    ]);
    const res = await post(
      '/report/studentstatus',
      f({ standard: W.class.sunrise, startDate: '2026-03-01T00:00:00.000Z', endDate: '2026-04-01T00:00:00.000Z' }),
    );
    const rows = res.body.data.data as Array<Record<string, any>>;
    expect(rows.map((r) => r.schooluser.schoolusername)).toEqual(['ana', 'ben', 'cara']);
    expect(rows[0]).toMatchObject({
      status: true,
      lastLogin: recent.toISOString(),
      totalusages: 2,
      curriculum: { curriculumname: 'Maths' },
    });
    expect(rows[1]).toMatchObject({ status: false, lastLogin: '2020-01-05T10:00:00.000Z', totalusages: 0 });
    expect(rows[2]).not.toHaveProperty('lastLogin');
    expect(rows[0]).not.toHaveProperty('studentfirstname');
    const all = await post('/report/studentstatus', f({ studentid: ana.studentid }));
    expect(all.body.data.data[0].totalusages).toBe(12);
    expect((await post('/report/studentstatus', f({ startDate: 'yesterday' }))).body.errormessage).toBe(
      'Invalid startDate',
    );
  });
});
