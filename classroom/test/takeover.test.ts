import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classroom, createTestDatabase, takeover } from '@lms/db';
import { makeApp, type TestApp } from './helpers';

const SERVER = takeover.testMysqlUrl();
// CI provides MariaDB (scripts/ci/ensure-mariadb.sh): there a missing server fails the file instead of skipping it.
const available = Boolean(process.env.CI) || (await takeover.mysqlAnswers(SERVER));

const md5hex = (s: string) => crypto.createHash('md5').update(s, 'utf8').digest('hex');
const doubleEncoded = (v: unknown) => JSON.stringify(JSON.stringify(v));
const uuid = () => crypto.randomUUID();

const ids = {
  country: uuid(),
  school: uuid(),
  standard: uuid(),
  subject: uuid(),
  curriculum: uuid(),
  grade: uuid(),
  level: uuid(),
  lesson: uuid(),
  lesson2: uuid(),
  document: uuid(),
  question: uuid(),
  teacher: uuid(),
  learnerMd5: uuid(),
  learnerBcrypt: uuid(),
  removedUser: uuid(),
  student1: uuid(),
  student2: uuid(),
  removed: uuid(),
  keep: '',
  loser: '',
  old: uuid(),
  point: uuid(),
};
// The lowest id of a duplicate group stays (the original's migration keeps MIN(studentprogressid)).
[ids.keep, ids.loser] = [uuid(), uuid()].sort();

/**
 * A box of the existing system: double-encoded content JSON, both password formats, duplicate submissions with their
 * question rows.
 */
async function seedBox(conn: takeover.ScratchMysql['conn']): Promise<void> {
  await takeover.createOriginalSchema(conn, { service: 'classroom', withoutSubmissionKey: true });
  const put = (table: string, rows: Array<Record<string, unknown>>) => takeover.insertOriginalRows(conn, table, rows);
  await put('countries', [{ countryid: ids.country, countryname: 'Ghana', isdeleted: 0 }]);
  await put('schools', [
    {
      schoolid: ids.school,
      schoolname: 'Accra Primary',
      curriculums: doubleEncoded([ids.curriculum]),
      countryid: ids.country,
      isdeleted: 0,
    },
  ]);
  await put('standards', [
    {
      standardid: ids.standard,
      standardname: 'Class 1',
      schoolname: 'Accra Primary',
      schoolid: ids.school,
      isdeleted: 0,
    },
  ]);
  await put('subjects', [{ subjectid: ids.subject, subjectname: 'Maths', subjectstatus: 1, isdeleted: 0 }]);
  await put('curriculums', [
    {
      curriculumid: ids.curriculum,
      curriculumname: 'Numbers',
      curriculumstatus: 1,
      isdeleted: 0,
      subjectid: ids.subject,
    },
  ]);
  await put('grades', [
    {
      gradeid: ids.grade,
      curriculumid: ids.curriculum,
      gradename: 'Grade 1',
      gradeorder: 1,
      gradestatus: 1,
      isdeleted: 0,
    },
  ]);
  await put('levels', [
    { levelid: ids.level, gradeid: ids.grade, levelname: 'Level 1', levelstatus: 1, levelorder: 1, isdeleted: 0 },
  ]);
  await put('lessons', [
    { lessonid: ids.lesson, levelid: ids.level, lessonname: 'Counting', lessonorder: 1, lessonstatus: 1, isdeleted: 0 },
    { lessonid: ids.lesson2, levelid: ids.level, lessonname: 'Adding', lessonorder: 2, lessonstatus: 1, isdeleted: 0 },
  ]);
  await put('documents', [
    {
      documentid: ids.document,
      documenttypeid: 2,
      documentname: 'counting.mp4',
      documents3meta: doubleEncoded({ Key: 'counting.mp4' }),
      documenttags: doubleEncoded(['video']),
      isdeleted: 0,
    },
  ]);
  await put('questions', [
    {
      questionid: ids.question,
      templatetypeid: 1,
      questionidentifier: 'Q1',
      questiontext: 'How many?',
      questionstatus: 1,
      isdeleted: 0,
      questionheading: doubleEncoded({ heading: 'Count' }),
      questionoptions: doubleEncoded([{ option: '3' }]),
      questiondistractors: doubleEncoded([]),
      questiontags: doubleEncoded(['count']),
    },
  ]);
  await put('schoolusers', [
    {
      schooluserid: ids.teacher,
      schoolusername: 'boxteacher',
      schooluserpasswordhash: bcrypt.hashSync(md5hex('Teach1'), 10),
      schooluserrole: 3,
      schooluserstatus: 1,
      schoolname: 'Accra Primary',
      isdisabled: 0,
      isdeleted: 0,
    },
    {
      schooluserid: ids.learnerMd5,
      schoolusername: 'kofi',
      schooluserpasswordhash: md5hex('kofi123'),
      schooluserrole: 4,
      schooluserstatus: 1,
      schoolname: 'Accra Primary',
      isdisabled: 0,
      isdeleted: 0,
    },
    {
      schooluserid: ids.learnerBcrypt,
      schoolusername: 'ama',
      schooluserpasswordhash: bcrypt.hashSync(md5hex('ama456'), 10),
      schooluserrole: 4,
      schooluserstatus: 1,
      schoolname: 'Accra Primary',
      isdisabled: 0,
      isdeleted: 0,
    },
    {
      schooluserid: ids.removedUser,
      schoolusername: 'yaw',
      schooluserpasswordhash: md5hex('yaw789'),
      schooluserrole: 4,
      schooluserstatus: 1,
      schoolname: 'Old Name School',
      isdisabled: 0,
      isdeleted: 0,
    },
  ]);
  const learner = {
    studentfirstname: 'L',
    genderid: 1,
    city: 'Accra',
    country: 'Ghana',
    state: 'GA',
    curriculumid: ids.curriculum,
    schoolname: 'Accra Primary',
    standard: 'Class 1',
    is_teacher_acc: 0,
    gradeid: ids.grade,
    studentcurrentlevelid: ids.level,
    studentcurrentlessonid: ids.lesson,
  };
  await put('students', [
    {
      ...learner,
      studentid: ids.student1,
      schooluserid: ids.learnerMd5,
      curriculumids: doubleEncoded([ids.curriculum]),
      isactive: 1,
    },
    {
      ...learner,
      studentid: ids.student2,
      schooluserid: ids.learnerBcrypt,
      curriculumids: JSON.stringify([ids.curriculum]),
      isactive: 1,
    },
    {
      ...learner,
      studentid: ids.removed,
      schooluserid: ids.removedUser,
      curriculumids: JSON.stringify([ids.curriculum]),
      isactive: 0,
    },
  ]);
  const submission = {
    studentid: ids.student1,
    studentprogressreferenceid: ids.lesson,
    progresstype: 2,
    ispass: 1,
    starttime: '2026-06-01 08:00:00',
    endtime: '2026-06-01 08:05:00',
    resultpercentage: 100,
    points: 10,
    fullpoints: 10,
    marks: 10,
    scores: 3,
  };
  await put('studentprogress', [
    { ...submission, studentprogressid: ids.keep },
    { ...submission, studentprogressid: ids.loser },
    // Older than the six months a box exports: only a copy of its database carries it.
    {
      ...submission,
      studentprogressid: ids.old,
      studentprogressreferenceid: ids.lesson2,
      starttime: '2025-09-01 08:00:00',
      endtime: '2025-09-01 08:06:00',
    },
  ]);
  await put('studentprogressquestions', [
    {
      studentprogressquestionid: uuid(),
      studentprogressid: ids.keep,
      tries: 1,
      iscorrect: 1,
      referencequestionid: ids.question,
    },
    {
      studentprogressquestionid: uuid(),
      studentprogressid: ids.loser,
      tries: 1,
      iscorrect: 1,
      referencequestionid: ids.question,
    },
    {
      studentprogressquestionid: uuid(),
      studentprogressid: ids.old,
      tries: 2,
      iscorrect: 0,
      referencequestionid: ids.question,
    },
  ]);
  await put('studentpoints', [
    {
      studentpointid: ids.point,
      studentid: ids.student1,
      levelid: ids.level,
      lessonid: ids.lesson,
      gradepoints: 10,
      levelpoints: 10,
      levelquizscores: 0,
      lessonpoints: 10,
      learningpoints: 0,
      practicepoints: 0,
      quizpoints: 10,
      scores: 3,
    },
  ]);
}

let src: takeover.ScratchMysql;
let t: TestApp;
let report: takeover.TakeoverReport;
const out: string[] = [];

describe.skipIf(!available)('npm run migrate-from-mysql -w classroom', () => {
  beforeAll(async () => {
    src = await takeover.createScratchMysql(SERVER, 'lms_box');
    await seedBox(src.conn);
    t = await makeApp({ JWT_SECRET: 'box-takeover-secret' });
    // Chunks of two rows: the key ranges that --again reads back are many and small.
    report = await takeover.runTakeover({
      db: t.tdb.db,
      sourceUrl: src.url,
      profile: takeover.classroomProfile(),
      chunkRows: 2,
    });
    out.push(...takeover.formatReport(report));
  }, 60_000);
  afterAll(async () => {
    await t?.tdb.dispose();
    await src?.drop();
  });

  const table = (name: string) => report.tables.find((x) => x.table === name)!;

  it('collapses duplicate submissions the way the original\'s own migration does, and says so', () => {
    expect(table('studentprogress')).toMatchObject({ read: 3, copied: 2, refused: 1, resolved: 1 });
    expect(table('studentprogressquestions')).toMatchObject({ read: 3, copied: 2, refused: 1, resolved: 1 });
    expect(report.refusedRows).toEqual([
      {
        table: 'studentprogress',
        id: ids.loser,
        reason: `duplicate submission of ${ids.keep} (same studentid, studentprogressreferenceid, starttime)`,
        resolved: expect.stringContaining('lowest studentprogressid'),
      },
      {
        table: 'studentprogressquestions',
        id: expect.any(String),
        reason: `belongs to duplicate submission ${ids.loser}`,
        resolved: expect.stringContaining('question rows dropped'),
      },
    ]);
    expect(out.join('\n')).toContain(`studentprogress ${ids.loser}: duplicate submission of ${ids.keep}`);
  });

  it('unwraps the box\'s double-encoded JSON', async () => {
    expect(table('questions')).toMatchObject({
      copied: 1,
      transformed: 1,
      changes: { 'double-encoded JSON unwrapped': 1 },
    });
    const q = await t.tdb.db('questions').first();
    expect([q.questionheading, q.questionoptions, q.questiondistractors, q.questiontags]).toEqual([
      { heading: 'Count' },
      [{ option: '3' }],
      [],
      ['count'],
    ]);
    expect((await t.tdb.db('schools').first()).curriculums).toEqual([ids.curriculum]);
    expect((await t.tdb.db('students').where({ studentid: ids.student1 }).first()).curriculumids).toEqual([
      ids.curriculum,
    ]);
  });

  it('keeps learners\' progress that was never exported, older than six months included', async () => {
    const rows = await t.tdb.db('studentprogress').orderBy('starttime').select('studentprogressid', 'starttime');
    expect(rows).toEqual([
      { studentprogressid: ids.old, starttime: '2025-09-01T08:00:00.000Z' },
      { studentprogressid: ids.keep, starttime: '2026-06-01T08:00:00.000Z' },
    ]);
    expect((await t.tdb.db('studentpoints').first()).quizpoints).toBe(10);
  });

  it('lets learners and the teacher sign in with the passwords they had, in both formats', async () => {
    const login = (studentusername: string, studentpassword: string) =>
      request(t.app).post('/auth/login').send({ studentusername, studentpassword });
    const kofi = await login('kofi', 'kofi123');
    expect([kofi.status, typeof kofi.body.data?.accessToken]).toEqual([200, 'string']);
    expect((await login('ama', 'ama456')).status).toBe(200);
    expect((await login('ama', 'wrong')).status).toBe(400);
    expect((await login('yaw', 'yaw789')).body.errormessage).toBe('Student is removed!');
    const teacher = await login('boxteacher', 'Teach1');
    expect(teacher.status).toBe(200);
    const list = await request(t.app)
      .get('/student/all')
      .set('Authorization', `Bearer ${teacher.body.data.accessToken}`);
    expect(list.status).toBe(200);
    const [[{ n }]] = (await src.conn.query('SELECT COUNT(*) AS n FROM students')) as unknown as [[{ n: number }]];
    expect(list.body.data).toHaveLength(Number(n));
  });

  it('--again after a learner\'s new result copies that result alone', async () => {
    const fresh = uuid();
    await src.conn.query(
      'INSERT INTO studentprogress (studentprogressid, studentid, studentprogressreferenceid, progresstype, ispass, ' +
        'starttime) VALUES (?, ?, ?, 2, 0, ?)',
      [fresh, ids.student2, ids.lesson, '2026-06-02 09:00:00'],
    );
    await src.conn.query('DELETE FROM studentprogressquestions WHERE studentprogressid = ?', [ids.old]);
    await src.conn.query('UPDATE studentpoints SET quizpoints = 20 WHERE studentpointid = ?', [ids.point]);
    const again = await takeover.runTakeover({
      db: t.tdb.db,
      sourceUrl: src.url,
      profile: takeover.classroomProfile(),
      chunkRows: 2,
      again: true,
    });
    expect(again.tables.filter((x) => x.copied || x.deleted).map((x) => [x.table, x.copied, x.deleted])).toEqual([
      ['studentprogress', 1, 0],
      ['studentprogressquestions', 0, 1],
      ['studentpoints', 1, 0],
    ]);
    expect(again.tables.find((x) => x.table === 'studentprogress')).toMatchObject({
      read: 4,
      unchanged: 3,
      refused: 0,
    });
    expect(await t.tdb.db('studentprogressquestions').where({ studentprogressid: ids.old }).first()).toBeUndefined();
    expect((await t.tdb.db('studentpoints').first()).quizpoints).toBe(20);
    expect((await t.tdb.db('studentprogress').where({ studentprogressid: fresh }).first())?.ispass).toBe(false);
  });

  it('refuses a central database, naming the table it lacks, and writes nothing', async () => {
    const central = await takeover.createScratchMysql(SERVER, 'lms_src');
    const fresh = await makeApp();
    try {
      await takeover.createOriginalSchema(central.conn, { service: 'central' });
      await expect(
        takeover.runTakeover({ db: fresh.tdb.db, sourceUrl: central.url, profile: takeover.classroomProfile() }),
      ).rejects.toThrow(
        /is not a classroom database of the existing system: it lacks studenttrash \(a central database/,
      );
      expect(await fresh.tdb.db.schema.hasTable('takeover_runs')).toBe(false);
    } finally {
      await fresh.tdb.dispose();
      await central.drop();
    }
  });

  it('refuses a target that `npm run migrate` has not prepared, and a bad source URL, writing nothing', async () => {
    const bare = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations, migrate: false });
    try {
      await expect(
        takeover.runTakeover({ db: bare.db, sourceUrl: src.url, profile: takeover.classroomProfile() }),
      ).rejects.toThrow(/run `npm run migrate -w classroom` first/);
      expect(await bare.db.schema.hasTable('takeover_runs')).toBe(false);
    } finally {
      await bare.dispose();
    }
    expect(() => takeover.parseTakeoverArgs(['--source', 'postgres://x/y'], false)).not.toThrow();
    await expect(
      takeover.runTakeover({
        db: t.tdb.db,
        sourceUrl: 'postgres://x/y',
        profile: takeover.classroomProfile(),
        again: true,
      }),
    ).rejects.toThrow(/must start with mysql:\/\//);
    expect(() => takeover.parseTakeoverArgs(['--objects-from', '/tmp', '--source', src.url], false)).toThrow(
      /unknown argument --objects-from/,
    );
    expect(() => takeover.parseTakeoverArgs([], false)).toThrow(/--source is required/);
  });
});
