import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '@lms/db';
import { streamToBuffer, writeContentZip, writeStudentsZip, writeTeachersZip, type ContentKey } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { syncKeyOf, tokenFor, type TestUser } from './auth-helpers';
import { rawZip } from '../../shared/test/raw-zip';

const SECRETS = { SERVER_SYNC_KEY: 'sk_import_0123456789', JWT_SECRET: 'jwt_import_0123456789' };
const id = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A curriculum package as central's GET /sync/content builds it (full rows, audit columns, JSON columns as text). */
function content(): Record<ContentKey, Array<Record<string, unknown>>> {
  const audit = {
    created_at: '2026-01-01T00:00:00.000Z',
    created_by: null,
    updated_at: null,
    updated_by: null,
    deleted_at: null,
    deleted_by: null,
  };
  return {
    curriculums: [
      {
        curriculumid: DEMO.curriculumid,
        curriculumname: 'Mathematics (central)',
        curriculumstatus: 1,
        curriculumdescription: null,
        isdeleted: 0,
        subjectid: DEMO.subjectid,
        ...audit,
      },
    ],
    curriculumbaselines: [
      {
        curriculumbaselineid: id(20),
        curriculumid: DEMO.curriculumid,
        baselineid: id(21),
        baselinename: 'Start',
        baselinetype: 1,
        baselinestatus: true,
        schoolid: `["${DEMO.schoolid}"]`,
        isdeleted: false,
      },
    ],
    baselinequestion: [
      {
        baselinequestionid: id(22),
        curriculumbaselineid: id(20),
        questionid: id(10),
        baselinequestionstatus: true,
        isdeleted: false,
      },
    ],
    grades: [
      {
        gradeid: DEMO.gradeid,
        curriculumid: DEMO.curriculumid,
        gradestatus: true,
        gradename: 'Grade 1',
        gradeorder: 1,
        isdeleted: false,
        points: 100,
        ...audit,
      },
    ],
    levels: [
      {
        levelid: DEMO.levelid,
        gradeid: DEMO.gradeid,
        levelname: 'Level 1',
        levelorder: 1,
        levelstatus: true,
        isdeleted: false,
        quiz_points: 10,
        points: 50,
      },
    ],
    lessons: [
      {
        lessonid: DEMO.lessonid,
        levelid: DEMO.levelid,
        lessonname: '1 Counting',
        lessonorder: 1,
        lessonstatus: true,
        isdeleted: false,
        practicecount: 1,
        quizcount: 1,
      },
      {
        lessonid: id(1),
        levelid: DEMO.levelid,
        lessonname: '2 Adding',
        lessonorder: 2,
        lessonstatus: true,
        isdeleted: false,
      },
    ],
    lessonlearnings: [
      {
        lessonlearningid: id(2),
        lessonlearningname: 'Video',
        lessonlearningdescription: 'Watch',
        lessonlearningstatus: true,
        lessonid: DEMO.lessonid,
        documentid: id(30),
        lessonlearningorder: 1,
        points: 5,
      },
    ],
    lessonpractices: [
      {
        lessonpracticeid: id(3),
        lessonid: DEMO.lessonid,
        lessonpracticeorder: 1,
        lessonpracticestatus: true,
        lessonpracticename: 'Practice',
        lessonpracticedescription: '',
        points: 5,
      },
    ],
    lessonpracticequestions: [
      {
        lessonpracticequestionid: id(4),
        lessonpracticeid: id(3),
        lessonpracticequestionstatus: true,
        questionid: id(10),
        lessonpracticequestionorder: 1,
      },
    ],
    lessonquizzes: [
      {
        lessonquizid: id(5),
        lessonid: DEMO.lessonid,
        lessonquizorder: 1,
        lessonquizname: 'Quiz',
        lessonquizstatus: true,
        lessonquizdescription: '',
        points: 10,
      },
    ],
    lessonquizquestions: [
      {
        lessonquizquestionid: id(6),
        lessonquizid: id(5),
        questionid: id(10),
        lessonquizquestionstatus: true,
        lessonquizquestionorder: 1,
      },
    ],
    levelquizquestions: [
      {
        levelquizquestionid: id(7),
        levelid: DEMO.levelid,
        questionid: id(10),
        levelquizquestionstatus: true,
        levelquizquestionorder: 1,
        lessonid: DEMO.lessonid,
      },
    ],
    questions: [
      {
        questionid: id(10),
        questionheading: '{"text":"How many?"}',
        questionoptions: [{ value: 3 }],
        questiontext: 'Count',
        questiondistractors: null,
        questionfile: null,
        templatetypeid: 1,
        isdeleted: 0,
        questionstatus: 1,
        questionidentifier: 'Q-1',
        questiontags: [],
        lastupdated: '2026-01-02T00:00:00.000Z',
        questioncorrectvalue: 3,
        questionobject: { ignored: true },
      },
    ],
    documents: [
      {
        documentid: id(30),
        documenttypeid: 2,
        documentname: 'counting.mp4',
        documents3meta: '{"Key":"counting.mp4"}',
        isdeleted: false,
        documenttags: null,
        lastupdated: '2026-01-02T00:00:00.000Z',
      },
    ],
    standards: [
      {
        standardid: DEMO.standardid,
        standardname: DEMO.standardname,
        schoolname: DEMO.schoolname,
        schoolid: DEMO.schoolid,
        isdeleted: false,
        ...audit,
      },
    ],
    schools: [
      {
        schoolid: DEMO.schoolid,
        schoolname: DEMO.schoolname,
        countryid: DEMO.countryid,
        curriculums: `["${DEMO.curriculumid}"]`,
        isdeleted: false,
        uitheme: 'corporate',
        brandingconfig: null,
      },
    ],
    countries: [{ countryid: DEMO.countryid, countryname: DEMO.countryname, expectedusage: '12.5', isdeleted: false }],
    lessonplans: [
      {
        lessonplanid: id(40),
        lessonplanname: 'Plan',
        lessonplandescription: '',
        lessonplanstatus: true,
        lessonid: DEMO.lessonid,
        documentid: id(30),
        lessonplanorder: 1,
      },
    ],
    subjects: [
      { subjectid: DEMO.subjectid, subjectname: 'Mathematics', subjectstatus: true, isdeleted: false, ...audit },
    ],
  };
}

const zipOf = async (c: Record<ContentKey, unknown[]>) => streamToBuffer(writeContentZip(c));

const CONTENT_TABLES = [
  'curriculums',
  'curriculumbaseline',
  'baselinequestion',
  'grades',
  'levels',
  'lessons',
  'lessonlearnings',
  'lessonpractices',
  'lessonpracticequestions',
  'lessonquizzes',
  'lessonquizquestions',
  'levelquizquestions',
  'questions',
  'documents',
  'standards',
  'schools',
  'countries',
  'lessonplans',
  'subjects',
];
const LEARNER_TABLES = ['schoolusers', 'students', 'tokens', 'studentprogress'];

async function snapshot(t: TestApp, tables: string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of tables) {
    const rows = await t.tdb.db(table).select();
    out[table] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

function put(t: TestApp, path: string, auth: string | undefined, body: Buffer, filename = 'importfile.zip') {
  const r = request(t.app).put(path);
  if (auth) r.set('Authorization', auth);
  return r.attach('importfile', body, filename);
}

let t: TestApp;
let key: string;
let teacher: TestUser;
let learner: TestUser;

beforeAll(async () => {
  t = await makeApp(SECRETS);
  key = syncKeyOf(t);
  teacher = await tokenFor(t, 3);
  learner = await tokenFor(t, 4, {
    studentFields: { studentcurrentlessonid: DEMO.lessonid, startinglevelid: DEMO.levelid },
  });
});
afterAll(async () => {
  await t.tdb.dispose();
});

describe('PUT /import/master', () => {
  it('applies a curriculum package with the sync key, keeping only known columns', async () => {
    const learners = await snapshot(t, LEARNER_TABLES);
    const res = await put(t, '/import/master', key, await zipOf(content()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ error: false, data: true });
    const db = t.tdb.db;
    expect(await db('lessons').orderBy('lessonorder').pluck('lessonid')).toEqual([DEMO.lessonid, id(1)]);
    expect(await db('curriculums').where('curriculumid', DEMO.curriculumid).first()).toMatchObject({
      curriculumname: 'Mathematics (central)',
      curriculumstatus: true,
    });
    const q = await db('questions').where('questionid', id(10)).first();
    expect(q).toMatchObject({
      questionheading: { text: 'How many?' },
      questionoptions: [{ value: 3 }],
      questioncorrectvalue: 3,
      isdeleted: false,
    });
    expect(q).not.toHaveProperty('questionobject');
    expect((await db('schools').where('schoolid', DEMO.schoolid).first()).curriculums).toEqual([DEMO.curriculumid]);
    expect((await db('countries').first()).expectedusage).toBe(12.5);
    for (const table of CONTENT_TABLES) expect((await db(table).count({ n: '*' }))[0].n, table).toBeGreaterThan(0);
    // Learner data is never touched by a content sync.
    expect(await snapshot(t, LEARNER_TABLES)).toEqual(learners);
  });

  it('changes nothing when the same package is imported again', async () => {
    const before = await snapshot(t, CONTENT_TABLES);
    const res = await put(t, '/import/master', key, await zipOf(content()));
    expect(res.status).toBe(200);
    expect(await snapshot(t, CONTENT_TABLES)).toEqual(before);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('PostgreSQL: the package\'s tables are analysed once it is applied',
    async () => {
      const db = t.tdb.db;
      const analyses = async () => {
        const { rows } = (await db.raw(
          `select relname, analyze_count::int as n from pg_stat_user_tables where schemaname = current_schema()`,
        )) as { rows: Array<{ relname: string; n: number }> };
        return new Map(rows.map((r) => [r.relname, Number(r.n)]));
      };
      const before = await analyses();
      const res = await put(t, '/import/master', key, await zipOf(content()));
      expect(res.status).toBe(200);
      const after = await analyses();
      for (const table of CONTENT_TABLES) expect(after.get(table), table).toBe((before.get(table) ?? 0) + 1);
      // Learner tables are not the package's.
      for (const table of LEARNER_TABLES) expect(after.get(table), table).toBe(before.get(table));
      const { rows } = (await db.raw(
        `select distinct tablename from pg_stats where schemaname = current_schema() and tablename = 'lessons'`,
      )) as { rows: unknown[] };
      expect(rows).toHaveLength(1);
    });

  it('replaces content: rows missing from the package go, curriculums stay', async () => {
    const c = content();
    c.curriculums = [];
    c.lessons = c.lessons.filter((l) => l.lessonid !== id(1));
    c.lessonquizquestions = [];
    c.levelquizquestions = [];
    const res = await put(t, '/import/master', key, await zipOf(c));
    expect(res.status).toBe(200);
    const db = t.tdb.db;
    expect(await db('lessons').pluck('lessonid')).toEqual([DEMO.lessonid]);
    expect((await db('lessonquizquestions').count({ n: '*' }))[0].n).toBe(0);
    expect(await db('curriculums').where('curriculumid', DEMO.curriculumid).first()).toBeDefined();
    await put(t, '/import/master', key, await zipOf(content())).expect(200);
  });

  it('leaves the previous content intact when the package fails half-way', async () => {
    const before = await snapshot(t, [...CONTENT_TABLES, ...LEARNER_TABLES]);
    const broken = content();
    // Valid up to the practice questions, which point at a question the package does not have.
    broken.lessonpracticequestions = [{ ...broken.lessonpracticequestions[0], questionid: id(999) }];
    broken.documents = [{ ...broken.documents[0], documentname: 'renamed.mp4' }];
    const res = await put(t, '/import/master', key, await zipOf(broken));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: true, errormessage: 'Invalid file', data: false });
    expect(await snapshot(t, [...CONTENT_TABLES, ...LEARNER_TABLES])).toEqual(before);
  });

  it('refuses a package that would leave a learner pointing at a removed lesson, and writes nothing', async () => {
    const before = await snapshot(t, [...CONTENT_TABLES, ...LEARNER_TABLES]);
    const c = content();
    c.lessons = c.lessons.filter((l) => l.lessonid !== DEMO.lessonid);
    for (const k of [
      'lessonlearnings',
      'lessonpractices',
      'lessonpracticequestions',
      'lessonquizzes',
      'lessonquizquestions',
      'lessonplans',
    ] as ContentKey[])
      c[k] = [];
    c.levelquizquestions = [];
    const res = await put(t, '/import/master', key, await zipOf(c));
    // 409 naming the lesson and who is on it, so that the sender knows what stands in the way.
    const username = (await t.tdb.db('schoolusers').where({ schooluserid: learner.schooluserid }).first())
      .schoolusername;
    expect([res.status, res.body]).toEqual([
      409,
      {
        error: true,
        data: false,
        errormessage: `Invalid file: the package removes content that learners are on; move them first: ` +
          `lesson ${DEMO.lessonid} (${username})`,
      },
    ]);
    expect(await snapshot(t, [...CONTENT_TABLES, ...LEARNER_TABLES])).toEqual(before);
  });

  it('refuses the 16-key GET /sync format, bad JSON, an empty ZIP and bytes that are not a ZIP', async () => {
    const before = await snapshot(t, CONTENT_TABLES);
    const old = content() as Record<string, unknown>;
    delete old.subjects;
    delete old.lessonplans;
    delete old.baselinequestion;
    const oldZip = await streamToBuffer(writeStudentsZip(old as never));
    const cases: Buffer[] = [
      oldZip,
      rawZip([{ name: 'syncfile.ini', data: Buffer.from('{"curriculums":[') }]),
      rawZip([]),
      Buffer.from('not a zip at all'),
    ];
    for (const body of cases) {
      const res = await put(t, '/import/master', key, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(true);
      expect(res.body.errormessage).toMatch(/^Invalid file/);
    }
    expect(await snapshot(t, CONTENT_TABLES)).toEqual(before);
  });

  it('refuses unsafe entry names and oversized uploads with a clear 4xx', async () => {
    const evil = rawZip([{ name: '../syncfile.ini', data: Buffer.from('{}') }]);
    const res = await put(t, '/import/master', key, evil);
    expect(res.status).toBe(400);
    expect(res.body.errormessage).toMatch(/Unsafe entry name/);

    const small = await makeApp({ ...SECRETS, MAX_UPLOAD_MB: '1' }, t.tdb);
    const big = await put(small, '/import/master', key, Buffer.alloc(1024 * 1024 + 10, 1));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: true, data: false });

    const bomb = rawZip([{ name: 'syncfile.ini', data: Buffer.alloc(20 * 1024 * 1024, 32), deflate: true }]);
    const refused = await put(t, '/import/master', key, bomb);
    expect(refused.status).toBe(400);
    expect(refused.body.errormessage).toMatch(/compression ratio/);
  });

  it('answers 400 when the request carries no importfile part', async () => {
    const res = await request(t.app)
      .put('/import/master')
      .set('Authorization', key)
      .attach('other', Buffer.from('x'), 'x.zip');
    expect(res.status).toBe(400);
    expect(res.body.errormessage).toMatch(/importfile/);
    const json = await request(t.app).put('/import/master').set('Authorization', key).send({ a: 1 });
    expect(json.status).toBe(400);
  });

  it('online: refuses staff tokens (403) and missing or invalid credentials (401)', async () => {
    const body = await zipOf(content());
    expect((await put(t, '/import/master', teacher.auth, body)).status).toBe(403);
    expect((await put(t, '/import/master', learner.auth, body)).status).toBe(403);
    expect((await put(t, '/import/master', undefined, body)).status).toBe(401);
    expect((await put(t, '/import/master', 'Bearer not-a-token', body)).status).toBe(401);
    expect((await put(t, '/import/master', `${key}x`, body)).status).toBe(401);
  });

  it('offline (RPI_OFFLINE or offline:true in RPI_CONFIG): admits staff tokens, still refuses learners', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rpi-config-'));
    const file = path.join(dir, 'rpi.json');
    fs.writeFileSync(file, JSON.stringify({ offline: true }));
    const body = await zipOf(content());
    for (const env of [{ RPI_OFFLINE: 'true' }, { RPI_OFFLINE: '1' }, { RPI_CONFIG: file }]) {
      const off = await makeApp({ ...SECRETS, ...env }, t.tdb);
      for (const role of [1, 2, 3] as const) {
        const user = role === 3 ? teacher : await tokenFor(off, role);
        const res = await put(off, '/import/master', user.auth, body);
        expect(res.status, `role ${role}`).toBe(200);
      }
      expect((await put(off, '/import/master', learner.auth, body)).status).toBe(403);
      expect((await put(off, '/import/master', key, body)).status).toBe(200);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

const rosterUser = (n: number, extra: Record<string, unknown> = {}) => ({
  schooluserid: id(500 + n),
  schoolusername: `Roster.User${n}`,
  schooluserpasswordhash: '$2b$10$abcdefghijklmnopqrstuu',
  schooluserrole: 4,
  schooluserstatus: 1,
  schoolname: DEMO.schoolname,
  isdisabled: 0,
  isdeleted: 0,
  created_at: '2026-01-01T00:00:00.000Z',
  ...extra,
});
const rosterStudent = (n: number, extra: Record<string, unknown> = {}) => ({
  studentid: id(600 + n),
  studentfirstname: `Learner${n}`,
  studentlastname: 'Roster',
  genderid: 2,
  standard: DEMO.standardname,
  schoolname: DEMO.schoolname,
  city: 'Town',
  country: DEMO.countryname,
  state: null,
  curriculumid: DEMO.curriculumid,
  curriculumids: [DEMO.curriculumid],
  gradeid: DEMO.gradeid,
  isactive: 1,
  type: 'offline',
  is_teacher_acc: 0,
  dateofbirth: '2018-03-04T00:00:00.000Z',
  schooluserid: 'ignored',
  ...extra,
});

describe('PUT /import/students and /import/teachers', () => {
  it('imports learners with the sync key, and a second import changes nothing', async () => {
    const doc = {
      studentusers: [
        { ...rosterUser(1), student: rosterStudent(1) },
        { ...rosterUser(2, { schooluserrole: undefined }), student: rosterStudent(2) },
      ],
    };
    const zip = await streamToBuffer(writeStudentsZip(doc as never));
    const res = await put(t, '/import/students', key, zip);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ error: false, data: true });
    const db = t.tdb.db;
    const users = await db('schoolusers').whereIn('schooluserid', [id(501), id(502)]).orderBy('schooluserid');
    expect(users.map((u) => [u.schoolusername, u.schooluserrole, u.schooluserpasswordhash])).toEqual([
      ['Roster.User1', 4, '$2b$10$abcdefghijklmnopqrstuu'],
      ['Roster.User2', 4, '$2b$10$abcdefghijklmnopqrstuu'],
    ]);
    const student = await db('students').where('studentid', id(601)).first();
    expect(student).toMatchObject({
      schooluserid: id(501),
      curriculumids: [DEMO.curriculumid],
      isactive: true,
      state: '',
      // Sent, but a box keeps no birth date.
      dateofbirth: null,
    });
    const before = await snapshot(t, ['schoolusers', 'students']);
    expect((await put(t, '/import/students', key, zip)).status).toBe(200);
    expect(await snapshot(t, ['schoolusers', 'students'])).toEqual(before);
  });

  it('updates an existing learner (soft delete travels) and imports optional progress', async () => {
    const doc = {
      studentusers: [
        { ...rosterUser(1, { isdeleted: 1 }), student: rosterStudent(1, { studentfirstname: 'Renamed' }) },
      ],
      studentprogresses: {
        studentgradesprogress: [
          {
            studentgradeprogressid: id(700),
            studentid: id(601),
            curriculumid: DEMO.curriculumid,
            gradeid: DEMO.gradeid,
            progress: '25.5',
            points: 3,
            completed: 0,
            lastupdated: 1767225600000,
          },
        ],
      },
    };
    expect((await put(t, '/import/students', key, await streamToBuffer(writeStudentsZip(doc as never)))).status).toBe(
      200,
    );
    const db = t.tdb.db;
    expect(await db('schoolusers').where('schooluserid', id(501)).first()).toMatchObject({ isdeleted: true });
    expect(await db('students').where('studentid', id(601)).first()).toMatchObject({ studentfirstname: 'Renamed' });
    expect(await db('studentgradesprogress').where('studentgradeprogressid', id(700)).first()).toMatchObject({
      progress: 25.5,
      completed: false,
      lastupdated: '2026-01-01T00:00:00.000Z',
    });
  });

  it('keeps an existing password when a roster row carries none, ' +
    'and creates a new account that cannot sign in yet', async () => {
    const db = t.tdb.db;
    const before = (await db('schoolusers').where('schooluserid', id(501)).first()).schooluserpasswordhash;
    expect(before).toBe('$2b$10$abcdefghijklmnopqrstuu');
    const doc = {
      studentusers: [
        { ...rosterUser(1, { schooluserpasswordhash: undefined }), student: rosterStudent(1) },
        { ...rosterUser(7, { schooluserpasswordhash: '' }), student: rosterStudent(7) },
      ],
    };
    expect((await put(t, '/import/students', key, await streamToBuffer(writeStudentsZip(doc as never)))).status).toBe(
      200,
    );
    expect((await db('schoolusers').where('schooluserid', id(501)).first()).schooluserpasswordhash).toBe(before);
    expect((await db('schoolusers').where('schooluserid', id(507)).first()).schooluserpasswordhash).toBe('');
    const login = await request(t.app)
      .post('/auth/login')
      .send({ studentusername: 'Roster.User7', studentpassword: '', logintime: Date.now() });
    expect([400, 401]).toContain(login.status);
  });

  it('refuses an item without its student row and writes nothing', async () => {
    const before = await snapshot(t, ['schoolusers', 'students']);
    const doc = { studentusers: [{ ...rosterUser(3), student: rosterStudent(3) }, rosterUser(4)] };
    const res = await put(t, '/import/students', key, await streamToBuffer(writeStudentsZip(doc as never)));
    expect(res.status).toBe(400);
    expect(res.body.errormessage).toMatch(/^Invalid file/);
    expect(await snapshot(t, ['schoolusers', 'students'])).toEqual(before);
  });

  it('rolls back the whole roster when one learner cannot be written', async () => {
    const before = await snapshot(t, ['schoolusers', 'students']);
    const doc = {
      studentusers: [
        { ...rosterUser(5), student: rosterStudent(5) },
        { ...rosterUser(6), student: rosterStudent(6, { curriculumid: id(999) }) },
      ],
    };
    const res = await put(t, '/import/students', key, await streamToBuffer(writeStudentsZip(doc as never)));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: true,
      errormessage: `This classroom server does not have curriculum ${id(999)}: push the content first`,
      data: false,
    });
    expect(await snapshot(t, ['schoolusers', 'students'])).toEqual(before);
  });

  it('refuses a roster of a school whose content was never pushed here, saying so, and writes nothing', async () => {
    const before = await snapshot(t, ['schoolusers', 'students']);
    const doc = {
      studentusers: [
        {
          ...rosterUser(8, { schoolname: 'Nowhere Primary' }),
          student: rosterStudent(8, { schoolname: 'Nowhere Primary' }),
        },
      ],
    };
    const res = await put(t, '/import/students', key, await streamToBuffer(writeStudentsZip(doc as never)));
    expect([res.status, res.body]).toEqual([
      409,
      {
        error: true,
        errormessage: 'This classroom server does not have school Nowhere Primary: push the content first',
        data: false,
      },
    ]);
    expect(await snapshot(t, ['schoolusers', 'students'])).toEqual(before);
  });

  it('imports teachers with role 3 whatever the row says', async () => {
    const zip = await streamToBuffer(
      writeTeachersZip([rosterUser(10, { schooluserrole: 1, schoolusername: 'teacher.ten' })]),
    );
    expect((await put(t, '/import/teachers', key, zip)).status).toBe(200);
    expect(await t.tdb.db('schoolusers').where('schooluserid', id(510)).first()).toMatchObject({
      schoolusername: 'teacher.ten',
      schooluserrole: 3,
    });
    expect((await put(t, '/import/teachers', key, await streamToBuffer(writeTeachersZip({} as never)))).status).toBe(
      400,
    );
  });

  it('accepts only the sync key, even offline', async () => {
    const students = await streamToBuffer(
      writeStudentsZip({ studentusers: [{ ...rosterUser(20), student: rosterStudent(20) }] } as never),
    );
    const teachers = await streamToBuffer(writeTeachersZip([rosterUser(21)]));
    const off = await makeApp({ ...SECRETS, RPI_OFFLINE: 'true' }, t.tdb);
    const admin = await tokenFor(off, 2);
    for (const app of [t, off]) {
      for (const [route, body] of [['/import/students', students], ['/import/teachers', teachers]] as const) {
        expect((await put(app, route, teacher.auth, body)).status).toBe(403);
        expect((await put(app, route, admin.auth, body)).status).toBe(403);
        expect((await put(app, route, learner.auth, body)).status).toBe(403);
        expect((await put(app, route, undefined, body)).status).toBe(401);
      }
    }
    expect(await t.tdb.db('schoolusers').whereIn('schooluserid', [id(520), id(521)])).toEqual([]);
  });
});


