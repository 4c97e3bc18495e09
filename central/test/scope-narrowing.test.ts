import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS, readPackageJson } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { narrowedCallers, seedSides, type Narrowed, type Sides } from './scope-fixtures';
import { snapshot } from './people-fixtures';
import { createRole, createStaff, staffLogin } from './accounts';

// What a staff account narrowed to school A (or country X), a Teacher-role account narrowed to school A
// and a teacher of school A signed in on central may reach of side B (school B in country Y, the
// curriculum offered in Y and everything below it): nothing, while side A works.

let t: TestApp;
let s: Sides;
let as: Record<Narrowed | 'superadmin', string>;
/** A stand-in classroom server that counts what it is sent. */
let classroom: http.Server;
const received: string[] = [];

const CONTENT = [
  'grades',
  'levels',
  'lessons',
  'lessonlearnings',
  'lessonplans',
  'lessonpractices',
  'lessonquizzes',
  'lessonpracticequestions',
  'lessonquizquestions',
  'levelquizquestions',
];

beforeAll(async () => {
  classroom = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: false, data: true }));
    });
  });
  await new Promise<void>((resolve) => classroom.listen(0, '127.0.0.1', resolve));
  t = await makeApp({
    RATE_LIMIT_MAX: '1000000',
    RPI_CLOUD: `http://127.0.0.1:${(classroom.address() as AddressInfo).port}`,
  });
  s = await seedSides(t.tdb.db);
  as = await narrowedCallers(t, s);
});
afterAll(async () => {
  await t.tdb.dispose();
  await new Promise<void>((resolve) => classroom.close(() => resolve()));
});

const call = (who: Narrowed | 'superadmin', method: 'get' | 'post' | 'put' | 'delete', url: string, body?: object) => {
  const r = request(t.app)[method](url).set('Authorization', as[who]);
  return body === undefined ? r : r.send(body);
};
const refused = (message: string) => ({ error: true, errormessage: message, data: false });

function binary(res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

describe('roster push and exports are checked against the caller\'s schools', () => {
  it('POST /sync/cloud/:schoolname/students: another school\'s roster is not pushed; the own one is', async () => {
    for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
      received.length = 0;
      const other = await call(who, 'post', `/sync/cloud/${encodeURIComponent(s.B.schoolname)}/students`);
      expect([other.status, other.body]).toEqual([400, refused('Invalid School Name')]);
      expect(received).toEqual([]);
      const own = await call(who, 'post', `/sync/cloud/${encodeURIComponent(s.A.schoolname)}/students`);
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect(received).toEqual(['PUT /import/students', 'PUT /import/teachers']);
    }
  });

  it('GET /export/:schoolname/students|teachers: another school is unknown; the own one is a ZIP', async () => {
    for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
      for (const what of ['students', 'teachers']) {
        const other = await call(who, 'get', `/export/${encodeURIComponent(s.B.schoolname)}/${what}`);
        expect([other.status, other.body]).toEqual([400, refused('Invalid School Name')]);
        const own = await call(who, 'get', `/export/${encodeURIComponent(s.A.schoolname)}/${what}`)
          .buffer(true)
          .parse(binary);
        expect(own.status).toBe(200);
        expect(own.headers['content-type']).toMatch(/zip/);
      }
    }
  });
});

describe('levels, lessons and lesson items are narrowed by curriculum, as grades are', () => {
  it('another country\'s level, lesson and items are refused as unknown ids and never changed', async () => {
    const before = await snapshot(t.tdb.db, CONTENT);
    const B = s.B;
    const cases: Array<['get' | 'put' | 'delete' | 'post', string, object | undefined, string]> = [
      ['get', `/level/${B.levelid}`, undefined, 'Invalid Level id'],
      [
        'put',
        `/level/${B.levelid}`,
        { levelname: 'Taken over', levelorder: 1, gradeid: B.gradeid, quiz_points: 1, passing_points: 1 },
        'Invalid Level id',
      ],
      ['put', `/level/deactivate/${B.levelid}`, undefined, 'Invalid Level id'],
      ['delete', `/level/${B.levelid}`, undefined, 'Invalid Level id'],
      [
        'post',
        '/level/create',
        { levelname: 'Planted', levelorder: 2, gradeid: B.gradeid, quiz_points: 1, passing_points: 1 },
        'Invalid Grade id',
      ],
      ['get', `/lesson/${B.lessonid}`, undefined, 'Invalid Lesson id'],
      [
        'put',
        `/lesson/${B.lessonid}`,
        { lessonname: 'Taken over', lessonorder: 1, total_points: 1, levelid: B.levelid, passing_points: 0 },
        'Invalid Lesson id',
      ],
      ['put', `/lesson/activate/${B.lessonid}`, undefined, 'Invalid Lesson id'],
      ['delete', `/lesson/${B.lessonid}`, undefined, 'Invalid Lesson id'],
      [
        'post',
        '/lesson/create',
        { lessonname: 'Planted', lessonorder: 2, total_points: 1, levelid: B.levelid, passing_points: 0 },
        'Invalid Level id',
      ],
      ['get', `/lesson/learning/${B.lessonid}`, undefined, 'Invalid Lesson id'],
      ['put', `/lesson/plan/deactivate/${B.lessonplanid}`, undefined, 'Invalid lesson plan id'],
      ['delete', `/lesson/practice/${B.lessonpracticeid}`, undefined, 'Invalid lesson practice id'],
      ['put', `/lesson/quiz/order/${B.lessonquizid}/3`, undefined, 'Invalid lesson quiz id'],
      ['post', `/lesson/quiz/question/${B.lessonquizid}/${s.questionid}/2`, undefined, 'Invalid lesson quiz id'],
      [
        'delete',
        `/lesson/practice/question/${B.lessonpracticequestionid}`,
        undefined,
        'Invalid Lesson practice question id',
      ],
      ['get', `/level/quiz/question/${B.levelid}`, undefined, 'Invalid Level id'],
      ['put', `/level/quiz/question/deactivate/${B.levelquizquestionid}`, undefined, 'Invalid Level quiz question id'],
      // Moving an own quiz under another country's lesson.
      [
        'put',
        `/lesson/quiz/${s.A.lessonquizid}`,
        { lessonid: B.lessonid, lessonquizname: 'Moved', lessonquizdescription: 'd', points: 1 },
        'Invalid Lesson id',
      ],
    ];
    for (const who of ['adminOfCountryX', 'adminOfSchoolA'] as const) {
      for (const [method, url, body, message] of cases) {
        const res = await call(who, method, url, body);
        expect([who, method, url, res.status, res.body]).toEqual([who, method, url, 400, refused(message)]);
      }
    }
    expect(await snapshot(t.tdb.db, CONTENT)).toEqual(before);
    // The control: side A's level and lesson answer.
    expect((await call('adminOfCountryX', 'get', `/level/${s.A.levelid}`)).body.data.levelid).toBe(s.A.levelid);
    expect((await call('adminOfCountryX', 'get', `/lesson/learning/${s.A.lessonid}`)).body.data).toHaveLength(1);
  });

  it('lists and feeds leave the other country\'s curriculum, grades, levels and lessons out', async () => {
    const text = async (who: Narrowed, method: 'get' | 'post', url: string, body?: object) => {
      const res = await call(who, method, url, body);
      expect(res.status, `${who} ${url} ${JSON.stringify(res.body)}`).toBe(200);
      return JSON.stringify(res.body.data);
    };
    const page = { pageindex: 0, pagesize: 100 };
    for (const who of ['adminOfCountryX', 'adminOfSchoolA'] as const) {
      const levels = await text(who, 'post', '/level', page);
      expect(levels).toContain(s.A.levelid);
      expect(levels).not.toContain(s.B.levelid);
      const lessons = await text(who, 'post', '/lesson', page);
      expect(lessons).toContain(s.A.lessonid);
      expect(lessons).not.toContain(s.B.lessonid);
      expect(await text(who, 'get', '/level/all')).not.toContain(s.B.levelid);
      expect(await text(who, 'get', '/lesson/all')).not.toContain(s.B.lessonid);
      const curricula = await text(who, 'get', '/curriculum/all');
      expect(curricula).toContain(s.A.curriculumid);
      expect(curricula).not.toContain(s.B.curriculumid);
      expect(await text(who, 'get', `/curriculum/country/${s.B.countryid}`)).toBe('[]');
      expect((await call(who, 'get', `/grade/curriculum/${s.B.curriculumid}`)).body).toEqual(
        refused('Invalid Curriculum id'),
      );
      expect(await text(who, 'get', `/grade/curriculum/${s.A.curriculumid}`)).toContain(s.A.gradeid);
    }
    const grades = await text('schoolTeacherA', 'get', '/grade/all');
    expect(grades).toContain(s.A.gradeid);
    expect(grades).not.toContain(s.B.gradeid);
  });
});

describe('the content package, the country list and enrolment', () => {
  it('GET /sync/content and GET /sync carry the caller\'s schools, classes and countries only', async () => {
    for (const url of ['/sync/content', '/sync']) {
      for (const who of ['schoolTeacherA', 'adminOfSchoolA', 'adminOfCountryX'] as const) {
        const res = await call(who, 'get', url).buffer(true).parse(binary);
        expect(res.status).toBe(200);
        const doc = (await readPackageJson({ buffer: res.body as Buffer })).json as Record<
          string,
          Array<Record<string, unknown>>
        >;
        expect([url, who, doc.schools.map((r) => r.schoolid)]).toEqual([url, who, [s.A.schoolid]]);
        expect(doc.standards.map((r) => r.schoolid)).not.toContain(s.B.schoolid);
        expect(doc.standards.map((r) => r.standardid)).toContain(s.A.standardid);
        expect(doc.countries.map((r) => r.countryid)).toEqual([s.A.countryid]);
      }
    }
    // An unnarrowed caller still gets every school.
    const all = await call('superadmin', 'get', '/sync/content').buffer(true).parse(binary);
    const doc = (await readPackageJson({ buffer: all.body as Buffer })).json as Record<
      string,
      Array<Record<string, unknown>>
    >;
    expect(doc.schools.map((r) => r.schoolid).sort()).toEqual([s.A.schoolid, s.B.schoolid].sort());
  });

  it("GET /sync/content and GET /sync carry the curricula offered in the caller's countries, " +
      "and assessments name its schools only", async () => {
    const db = t.tdb.db;
    // Side A's assessment is given to school B as well (an unnarrowed
    // account may): a narrowed caller of A sees only A in it.
    await db('curriculumbaseline')
      .where({ curriculumbaselineid: s.A.curriculumbaselineid })
      .update({ schoolid: JSON.stringify([s.A.schoolid, s.B.schoolid]) });
    const offered = (await db('curriculumcountry')
      .where({ countryid: s.A.countryid })
      .pluck('curriculumid')) as string[];
    const B = [
      s.B.curriculumid,
      s.B.gradeid,
      s.B.levelid,
      s.B.lessonid,
      s.B.lessonlearningid,
      s.B.lessonplanid,
      s.B.lessonpracticeid,
      s.B.lessonquizid,
      s.B.lessonpracticequestionid,
      s.B.lessonquizquestionid,
      s.B.levelquizquestionid,
      s.B.curriculumbaselineid,
      s.B.baselinequestionid,
      s.B.schoolid,
    ];
    try {
      for (const url of ['/sync/content', '/sync']) {
        for (const who of ['schoolTeacherA', 'adminOfSchoolA', 'adminOfCountryX', 'teacherOfSchoolA'] as const) {
          const res = await call(who, 'get', url).buffer(true).parse(binary);
          expect(res.status).toBe(200);
          const doc = (await readPackageJson({ buffer: res.body as Buffer })).json as Record<
            string,
            Array<Record<string, unknown>>
          >;
          const text = JSON.stringify(doc);
          expect([url, who, B.filter((id) => text.includes(id))]).toEqual([url, who, []]);
          expect(doc.curriculums.map((r) => r.curriculumid).every((id) => offered.includes(id as string))).toBe(true);
          expect(doc.curriculums.map((r) => r.curriculumid)).toContain(s.A.curriculumid);
          for (const k of ['grades', 'levels', 'lessons', 'lessonquizzes', 'levelquizquestions'] as const)
            expect(doc[k].length).toBeGreaterThan(0);
          expect(text).toContain(s.A.lessonquizquestionid);
          const baseline = doc.curriculumbaselines.find((r) => r.curriculumbaselineid === s.A.curriculumbaselineid);
          expect(baseline).toBeDefined();
          if (url === '/sync/content') {
            const list = typeof baseline!.schoolid === 'string' ? JSON.parse(baseline!.schoolid) : baseline!.schoolid;
            expect(list).toEqual([s.A.schoolid]);
            expect(doc.baselinequestion.map((r) => r.baselinequestionid)).toEqual([s.A.baselinequestionid]);
          }
        }
      }
      // An unnarrowed account still gets every curriculum, and assessments whole (the classroom server gets the
      // package by POST /sync/cloud, built for every school).
      for (const auth of [as.superadmin]) {
        const all = await request(t.app).get('/sync/content').set('Authorization', auth).buffer(true).parse(binary);
        expect(all.status).toBe(200);
        const doc = (await readPackageJson({ buffer: all.body as Buffer })).json as Record<
          string,
          Array<Record<string, unknown>>
        >;
        expect(doc.curriculums.map((r) => r.curriculumid)).toEqual(
          expect.arrayContaining([s.A.curriculumid, s.B.curriculumid]),
        );
        const baseline = doc.curriculumbaselines.find((r) => r.curriculumbaselineid === s.A.curriculumbaselineid)!;
        const list = typeof baseline.schoolid === 'string' ? JSON.parse(baseline.schoolid) : baseline.schoolid;
        expect(list).toEqual([s.A.schoolid, s.B.schoolid]);
      }
    } finally {
      await db('curriculumbaseline')
        .where({ curriculumbaselineid: s.A.curriculumbaselineid })
        .update({ schoolid: JSON.stringify([s.A.schoolid]) });
    }
  });

  it('GET /country lists the caller\'s countries only', async () => {
    for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
      const res = await call(who, 'get', '/country');
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: { countryid: string }) => c.countryid)).toEqual([s.A.countryid]);
    }
  });

  it('POST /student/create refuses a curriculum not offered in the school\'s country, writing nothing', async () => {
    const body = (curriculumid: string, username: string) => ({
      curriculumid: [curriculumid],
      schoolid: s.A.schoolid,
      standard: s.A.standardid,
      students: [
        {
          studentfirstname: 'New',
          dateofjoin: '05-01-2026',
          genderid: '1',
          city: 'Accra',
          country: 'Ghana',
          state: 'S',
          schoolusername: username,
          schooluserpasswordhash: 'p1',
        },
      ],
    });
    const before = await snapshot(t.tdb.db, ['students', 'schoolusers']);
    const other = await call('adminOfSchoolA', 'post', '/student/create', body(s.B.curriculumid, 'enrolled1'));
    expect(other.status).toBe(400);
    expect(JSON.stringify(other.body)).toContain('Invalid curriculum id');
    expect(await snapshot(t.tdb.db, ['students', 'schoolusers'])).toEqual(before);
    const own = await call('adminOfSchoolA', 'post', '/student/create', body(s.A.curriculumid, 'enrolled2'));
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(
      await t.tdb
        .db('students')
        .where({ curriculumid: s.A.curriculumid, schoolname: s.A.schoolname })
        .count({ n: '*' })
        .first(),
    ).toMatchObject({ n: expect.anything() });
    expect((await t.tdb.db('schoolusers').where({ schoolusername: 'enrolled2' })).length).toBe(1);
  });
});

describe('schools and assessments are given only what the caller may give', () => {
  it("POST /school/create and PUT /school/update refuse a curriculum not offered in the school's country to a " +
      "narrowed caller, writing nothing", async () => {
    const before = await snapshot(t.tdb.db, ['schools']);
    for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
      const created = await call(who, 'post', '/school/create', {
        schoolname: `Planted ${who}`,
        countryid: s.A.countryid,
        curriculums: [s.B.curriculumid],
      });
      // An account narrowed to schools creates none at all (see narrowed-staff.test.ts).
      expect([who, created.status, created.body]).toEqual([
        who,
        400,
        refused(who === 'adminOfSchoolA' ? 'Invalid country id' : 'Invalid curriculum id'),
      ]);
      const updated = await call(who, 'put', `/school/update/${s.A.schoolid}`, {
        schoolname: s.A.schoolname,
        countryid: s.A.countryid,
        curriculums: [s.A.curriculumid, s.B.curriculumid],
      });
      expect([who, updated.status, updated.body]).toEqual([who, 400, refused('Invalid curriculum id')]);
    }
    expect(await snapshot(t.tdb.db, ['schools'])).toEqual(before);
    // The curricula offered in the country work; an unnarrowed caller places any live curriculum, as before.
    const own = await call('adminOfSchoolA', 'put', `/school/update/${s.A.schoolid}`, {
      schoolname: s.A.schoolname,
      countryid: s.A.countryid,
      curriculums: [s.A.curriculumid],
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const made = await call('adminOfCountryX', 'post', '/school/create', {
      schoolname: 'Offered School',
      countryid: s.A.countryid,
      curriculums: [s.A.curriculumid],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const wide = await call('superadmin', 'post', '/school/create', {
      schoolname: 'Wide School',
      countryid: s.A.countryid,
      curriculums: [s.B.curriculumid],
    });
    expect(wide.status, JSON.stringify(wide.body)).toBe(200);
  });

  it("an assessment's schools: a narrowed caller attaches only its own, and keeps the ones it cannot see", async () => {
    const id = s.A.curriculumbaselineid;
    await t.tdb
      .db('curriculumbaseline')
      .where({ curriculumbaselineid: id })
      .update({ schoolid: JSON.stringify([s.A.schoolid, s.B.schoolid]) });
    const schoolsOf = async (cid: string) => {
      const row = (await t.tdb.db('curriculumbaseline').where({ curriculumbaselineid: cid }).first('schoolid')) as {
        schoolid: unknown;
      };
      const v = typeof row.schoolid === 'string' ? JSON.parse(row.schoolid) : row.schoolid;
      return [...(v as string[])].sort();
    };
    const before = await snapshot(t.tdb.db, ['curriculumbaseline']);
    for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
      const created = await call(who, 'post', '/curriculumbaseline/create', {
        baselineid: s.A.curriculumid,
        curriculumid: s.A.curriculumid,
        baselinename: `Planted ${who.slice(0, 20)}`,
        baselinetype: 3,
        startdate: '2026-01-10',
        enddate: '2026-03-01',
        schoolid: [s.A.schoolid, s.B.schoolid],
      });
      expect([who, created.status, created.body]).toEqual([who, 400, refused('Invalid school id')]);
      // A school the caller cannot see, not already on the assessment, is refused too.
      await t.tdb
        .db('curriculumbaseline')
        .where({ curriculumbaselineid: id })
        .update({ schoolid: JSON.stringify([s.A.schoolid]) });
      const updated = await call(who, 'put', `/curriculumbaseline/update/${id}`, {
        schoolid: [s.A.schoolid, s.B.schoolid],
      });
      expect([who, updated.status, updated.body]).toEqual([who, 400, refused('Invalid school id')]);
      await t.tdb
        .db('curriculumbaseline')
        .where({ curriculumbaselineid: id })
        .update({ schoolid: JSON.stringify([s.A.schoolid, s.B.schoolid]) });
    }
    expect(await snapshot(t.tdb.db, ['curriculumbaseline'])).toEqual(before);
    // The caller's own list replaces its part only: school B, which it cannot see, stays.
    const own = await call('adminOfSchoolA', 'put', `/curriculumbaseline/update/${id}`, { schoolid: [] });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(await schoolsOf(id)).toEqual([s.B.schoolid]);
    const back = await call('adminOfSchoolA', 'put', `/curriculumbaseline/update/${id}`, { schoolid: [s.A.schoolid] });
    expect(back.status).toBe(200);
    expect(await schoolsOf(id)).toEqual([s.A.schoolid, s.B.schoolid].sort());
    // An unnarrowed caller's list is stored as sent.
    const all = await call('superadmin', 'put', `/curriculumbaseline/update/${id}`, { schoolid: [s.B.schoolid] });
    expect(all.status).toBe(200);
    expect(await schoolsOf(id)).toEqual([s.B.schoolid]);
  });
});

describe('staff accounts are managed within the caller\'s own narrowing', () => {
  it('a narrowed Admin cannot see, edit, delete, re-role or create an account broader than itself; ' +
      'unnarrowed callers manage all', async () => {
    const db = t.tdb.db;
    const wide = (await db('lmsusers').where('lmsusername', 'like', 'super-%@scope.test').first('lmsuserid')) as {
      lmsuserid: string;
    };
    const countryWide = (await db('lmsusers')
      .where('lmsusername', 'like', 'admin-country-%@scope.test')
      .first('lmsuserid')) as { lmsuserid: string };
    const TABLES = ['lmsusers', 'lmsusers_roles'];
    const before = await snapshot(db, TABLES);
    const teacherRole = { roleid: ROLE_IDS.teacher };
    const cases: Array<[Narrowed, 'get' | 'put' | 'delete' | 'post', string, object | undefined, string]> = [];
    for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
      for (const other of [wide.lmsuserid, s.B.lmsuserid]) {
        cases.push(
          [who, 'get', `/user/${other}`, undefined, 'Invalid user id'],
          [
            who,
            'put',
            `/user/${other}`,
            { lmsuserroles: [teacherRole.roleid], schoolids: [s.A.schoolid] },
            'Invalid user id',
          ],
          [who, 'delete', `/user/${other}`, undefined, 'Invalid user id'],
          [
            who,
            'post',
            '/roles/user-bind-role',
            { lmsuserid: other, rolesid: [teacherRole.roleid] },
            'Invalid user id',
          ],
        );
      }
      const account = (extra: object) => ({
        lmsusername: `made-${who}-${Object.keys(extra).join('')}@scope.test`,
        lmsuserpasswordhash: 'Passw0rd!x',
        lmsuserroles: [teacherRole.roleid],
        ...extra,
      });
      cases.push(
        [who, 'post', '/user/create', account({}), 'The user must have at least 1 school or country'],
        [
          who,
          'post',
          '/user/create',
          account({ schoolids: [], countryids: [] }),
          'The user must have at least 1 school or country',
        ],
        [who, 'post', '/user/create', account({ schoolids: [s.A.schoolid, s.B.schoolid] }), 'Invalid school id'],
        [who, 'post', '/user/create', account({ countryids: [s.B.countryid] }), 'Invalid country id'],
        // Widening an account it manages: dropping its school list, or adding another school.
        [who, 'put', `/user/${s.A.lmsuserid}`, { schoolids: null }, 'The user must have at least 1 school or country'],
        [who, 'put', `/user/${s.A.lmsuserid}`, { schoolids: [s.A.schoolid, s.B.schoolid] }, 'Invalid school id'],
      );
    }
    // A school-narrowed Admin holds no country whole: neither a country-wide account nor a country-wide new one.
    cases.push(
      [
        'adminOfSchoolA',
        'post',
        '/user/create',
        {
          lmsusername: 'made-countrywide@scope.test',
          lmsuserpasswordhash: 'Passw0rd!x',
          lmsuserroles: [teacherRole.roleid],
          countryids: [s.A.countryid],
        },
        'Invalid country id',
      ],
      [
        'adminOfSchoolA',
        'put',
        `/user/${countryWide.lmsuserid}`,
        { lmsuserroles: [teacherRole.roleid] },
        'Invalid user id',
      ],
    );
    for (const [who, method, url, body, message] of cases) {
      const res = await call(who, method, url, body);
      expect([who, method, url, res.status, res.body]).toEqual([who, method, url, 400, refused(message)]);
    }
    expect(await snapshot(db, TABLES)).toEqual(before);

    // The list holds the accounts within the caller's narrowing only.
    const listed = async (who: Narrowed | 'superadmin') => {
      const res = await call(who, 'post', '/user', { pageindex: 1, pagesize: 100 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.data.data as Array<{ lmsuserid: string }>).map((u) => u.lmsuserid);
    };
    const ofSchool = await listed('adminOfSchoolA');
    expect(ofSchool).toContain(s.A.lmsuserid);
    expect(ofSchool).not.toContain(s.B.lmsuserid);
    expect(ofSchool).not.toContain(wide.lmsuserid);
    expect(ofSchool).not.toContain(countryWide.lmsuserid);
    const ofCountry = await listed('adminOfCountryX');
    expect(ofCountry).toEqual(expect.arrayContaining([s.A.lmsuserid, countryWide.lmsuserid]));
    expect(ofCountry).not.toContain(s.B.lmsuserid);
    expect(await listed('superadmin')).toEqual(expect.arrayContaining([s.A.lmsuserid, s.B.lmsuserid, wide.lmsuserid]));

    // Within the narrowing, the same caller works.
    expect((await call('adminOfSchoolA', 'get', `/user/${s.A.lmsuserid}`)).body.data.user.lmsuserid).toBe(
      s.A.lmsuserid,
    );
    const edited = await call('adminOfSchoolA', 'put', `/user/${s.A.lmsuserid}`, {
      lmsuserroles: [teacherRole.roleid],
      schoolids: [s.A.schoolid],
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const made = await call('adminOfCountryX', 'post', '/user/create', {
      lmsusername: 'made-in-x@scope.test',
      lmsuserpasswordhash: 'Passw0rd!x',
      lmsuserroles: [teacherRole.roleid],
      countryids: [s.A.countryid],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const madeA = await call('adminOfSchoolA', 'post', '/user/create', {
      lmsusername: 'made-in-a@scope.test',
      lmsuserpasswordhash: 'Passw0rd!x',
      lmsuserroles: [teacherRole.roleid],
      schoolids: [s.A.schoolid],
    });
    expect(madeA.status, JSON.stringify(madeA.body)).toBe(200);
    const gone = await call('adminOfSchoolA', 'delete', `/user/${s.A.lmsuserid}`);
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    // An unnarrowed caller still edits any account.
    const any = await call('superadmin', 'put', `/user/${s.B.lmsuserid}`, { schoolids: null, countryids: null });
    expect(any.status, JSON.stringify(any.body)).toBe(200);
  });
});

describe('roles reach the whole organisation, so only callers that nothing narrows change them', () => {
  it('a narrowed account holding every role permission is refused 403 and changes no role; ' +
      'an unnarrowed one changes them', async () => {
    const db = t.tdb.db;
    const tag = crypto.randomBytes(3).toString('hex');
    const roleAdmin = await createRole(db, `Role admin ${tag}`, [
      'create_role',
      'view_role',
      'update_role',
      'delete_role',
    ]);
    const token = async (name: string, o: { schools?: string[]; countries?: string[] }) => {
      const lmsusername = `${name}-${tag}@scope.test`;
      await createStaff(db, { lmsusername, roleids: [roleAdmin], ...o });
      return `Bearer ${(await staffLogin(t.app, lmsusername)).accessToken}`;
    };
    const bySchool = await token('roles-school', { schools: [s.A.schoolid] });
    const byCountry = await token('roles-country', { countries: [s.A.countryid] });
    const whole = await token('roles-whole', {});
    const allPerms = (await db('permissions').pluck('permissionid')) as string[];
    const send = (auth: string, method: 'post' | 'put' | 'delete', url: string, body?: object) => {
      const r = request(t.app)[method](url).set('Authorization', auth);
      return body === undefined ? r : r.send(body);
    };
    const TABLES = ['roles', 'roles_permissions'];
    const before = await snapshot(db, TABLES);
    for (const auth of [bySchool, byCountry]) {
      // Widening the Admin role every school's admins hold, making a role of every permission, deleting one.
      for (const [method, url, body] of [
        ['put', `/roles/${ROLE_IDS.admin}`, { rolename: 'Admin', permissionsid: allPerms }],
        ['post', '/roles/create', { rolename: `Everything ${tag}`, permissionsid: allPerms }],
        ['delete', `/roles/${ROLE_IDS.teacher}`, undefined],
      ] as const) {
        const res = await send(auth, method, url, body);
        expect([method, url, res.status, res.body]).toEqual([method, url, 403, refused('Forbidden resource')]);
      }
      // Reading stays open to the permission's holders.
      expect((await request(t.app).get(`/roles/${ROLE_IDS.admin}`).set('Authorization', auth)).status).toBe(200);
    }
    expect(await snapshot(db, TABLES)).toEqual(before);
    const made = await send(whole, 'post', '/roles/create', { rolename: `Made ${tag}`, permissionsid: [allPerms[0]] });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(await db('roles').where({ rolename: `Made ${tag}` }).first()).toBeDefined();
  });
});
