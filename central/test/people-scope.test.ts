import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords';
import { makeApp, type TestApp } from './helpers';
import { staffLogin } from './accounts';
import { addLearner, callers, parseCsv, seedWorld, snapshot, type Who, type World } from './people-fixtures';

// The scoping matrix: a staff account limited to school A, and one limited to country X, against every
// list and id route of schools, classes, learners, teachers and fee records, for objects of school B in
// country Y. An object outside the caller's scope is answered as an unknown one is (the area's
// "Invalid … id" 400) and never changed; lists leave it out. The same routes for school A's objects are
// the control: they must work, or the refusals prove nothing.

let t: TestApp;
let w: World;
let as: Record<Who, string>;
const o = {} as Record<
  'learnerA' | 'learnerB' | 'userA' | 'userB' | 'teacherA' | 'teacherB' | 'recordA' | 'recordB',
  string
>;
const TABLES = ['schools', 'standards', 'students', 'schoolusers', 'schoolcontributedata', 'tokens'];

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '1000000' });
  const db = t.tdb.db;
  w = await seedWorld(db);
  as = await callers(t, w);
  const a = await addLearner(db, {
    schoolname: 'Accra Primary',
    standard: w.classA1,
    schoolusername: 'ama1',
    curriculumids: [w.curriculum1],
    studentfirstname: 'Ama',
  });
  const b = await addLearner(db, {
    schoolname: 'Bamako Primary',
    standard: w.classB1,
    schoolusername: 'bintou1',
    curriculumids: [w.curriculum1],
    studentfirstname: 'Bintou',
  });
  Object.assign(o, { learnerA: a.studentid, userA: a.schooluserid, learnerB: b.studentid, userB: b.schooluserid });
  const hash = await hashPassword('teach1');
  for (const [k, schoolname] of [['teacherA', 'Accra Primary'], ['teacherB', 'Bamako Primary']] as const) {
    o[k] = crypto.randomUUID();
    await db('schoolusers').insert({
      schooluserid: o[k],
      schoolusername: k,
      schooluserpasswordhash: hash,
      schooluserrole: 3,
      schoolname,
    });
  }
  for (const [k, school, countryid] of [
    ['recordA', w.schoolA, w.countryX],
    ['recordB', w.schoolB, w.countryY],
  ] as const) {
    o[k] = crypto.randomUUID();
    await db('schoolcontributedata').insert({
      schoolcontributeid: o[k],
      ...school,
      countryid,
      expected: 10,
      actual: 5,
      created_at: '2025-05-05T05:05:05.000Z',
    });
  }
});
afterAll(async () => { await t.tdb.dispose(); });

type Method = 'get' | 'post' | 'put' | 'delete';
const call = (who: Who, method: Method, url: string, body?: object) => {
  const r = request(t.app)[method](url).set('Authorization', as[who]);
  return body === undefined ? r : r.send(body);
};

const editRow = (studentid: string, schooluserid: string, username: string, schoolname: string) => ({
  studentid,
  schooluserid,
  schoolusername: username,
  schoolname,
  curriculums: 'Reading',
  standard: 'Class 1',
  studentfirstname: 'Edited',
  genderid: '1',
  dateofjoin: '05-01-2026',
  city: 'Accra',
  country: 'Ghana',
  state: 'State',
  isactive: 1,
});

/** Every id route of the five areas, for an object of school `s` (A or B). */
function idRoutes(s: 'A' | 'B'): Array<[Method, string, object | undefined, string]> {
  const school = s === 'A' ? w.schoolA : w.schoolB;
  const klass = s === 'A' ? w.classA1 : w.classB1;
  const country = s === 'A' ? w.countryX : w.countryY;
  const learner = s === 'A' ? o.learnerA : o.learnerB;
  const user = s === 'A' ? o.userA : o.userB;
  const teacher = s === 'A' ? o.teacherA : o.teacherB;
  const record = s === 'A' ? o.recordA : o.recordB;
  return [
    ['get', `/school/${school.schoolid}`, undefined, 'Invalid school id'],
    ['get', `/school/${school.schoolid}/curriculums`, undefined, 'Invalid school id'],
    [
      'put',
      `/school/update/${school.schoolid}`,
      { schoolname: school.schoolname, countryid: country, curriculums: [w.curriculum1] },
      'Invalid school id',
    ],
    ['post', '/school/create', { schoolname: `New ${s}`, countryid: country, curriculums: [] }, 'Invalid country id'],
    ['get', `/standard/${klass}`, undefined, 'Invalid standard id'],
    ['put', `/standard/${klass}`, { standardname: 'Class 1', schoolid: school.schoolid }, 'Invalid standard id'],
    ['get', `/standard/school/${school.schoolid}`, undefined, 'Invalid school id'],
    ['post', '/standard/create', { standardname: `Class ${s}9`, schoolid: school.schoolid }, 'no school found'],
    ['get', `/student/${learner}`, undefined, 'Invalid student id'],
    ['get', `/student/stats/${learner}`, undefined, 'Invalid student id'],
    ['get', `/student/stats/${learner}/practice`, undefined, 'Invalid student id'],
    ['get', `/student/stats/${learner}/quiz`, undefined, 'Invalid student id'],
    ['get', `/student/stats/${learner}/level`, undefined, 'Invalid student id'],
    [
      'put',
      '/student/update',
      { students: [editRow(learner, user, s === 'A' ? 'ama1' : 'bintou1', school.schoolname)] },
      'Student not found!',
    ],
    [
      'post',
      '/student/create',
      {
        curriculumid: [w.curriculum1],
        schoolid: school.schoolid,
        standard: klass,
        students: [
          {
            studentfirstname: 'New',
            dateofjoin: '05-01-2026',
            genderid: '1',
            city: 'Accra',
            country: 'Ghana',
            state: 'S',
            schoolusername: `new${s}1`,
            schooluserpasswordhash: 'p1',
          },
        ],
      },
      'Invalid School Name',
    ],
    [
      'post',
      '/teacher/create',
      { schoolname: school.schoolname, teachers: [{ schoolusername: `newt${s}`, schooluserpasswordhash: 'p1' }] },
      'Invalid School Name',
    ],
    [
      'post',
      '/school-contribute/create',
      { schoolname: school.schoolname, schoolid: school.schoolid, countryid: country, expected: 1, actual: 1 },
      'Invalid schoolid',
    ],
    ['post', `/school-contribute/getallschoolcontribute/${school.schoolid}`, {}, 'Invalid schoolid'],
    [
      'put',
      `/school-contribute/updateschoolname/${school.schoolid}`,
      { schoolname: school.schoolname, countryid: country },
      'School Contribute not create yet',
    ],
    [
      'put',
      `/school-contribute/updateschooldashboard/${record}`,
      { expected: 10, actual: 5 },
      'School Contribute not create yet',
    ],
    [
      'get',
      `/school-contribute/getschooldashboard/schoolcontributeid/${record}`,
      undefined,
      'Invalid schoolcontributeid',
    ],
    ['get', `/school-contribute/getschooldashboardid/${school.schoolid}`, undefined, 'Invalid schoolid'],
    ['get', `/school-contribute/getschoolcontribute/${school.schoolid}`, undefined, 'Invalid schoolid'],
    // The deletes go last: the control run really deletes school A's objects.
    ['delete', `/school-contribute/deleteschoolcontributeid/${record}`, undefined, 'Invalid schoolcontributeid'],
    ['delete', `/school-contribute/deleteschoolcontribute/${school.schoolid}`, undefined, 'Invalid schoolid'],
    ['delete', `/teacher/${teacher}`, undefined, 'Invalid teacher user id'],
    ['delete', `/student/${user}`, undefined, 'Invalid school user id'],
    ['delete', `/standard/${s === 'A' ? w.classA2 : klass}`, undefined, 'Invalid standard id'],
  ];
}

describe('scoping matrix', () => {
  it('refuses every id route for school B and country Y objects to an account of school A and to one of ' +
      'country X, changing nothing', async () => {
    const before = await snapshot(t.tdb.db, TABLES);
    const wrong: string[] = [];
    for (const who of ['scopedSchool', 'scopedCountry'] as const) {
      for (const [method, url, body, message] of idRoutes('B')) {
        const res = await call(who, method, url, body);
        if (res.status !== 400 || res.body.errormessage !== message)
          wrong.push(`${who} ${method} ${url}: ${res.status} ${res.body.errormessage}`);
      }
      // A school with learners cannot be deleted anyway; B's must be refused for its scope first.
      const del = await call(who, 'delete', `/school/${w.schoolB.schoolid}`);
      if (del.body.errormessage !== 'Invalid school id') wrong.push(`${who} delete school B: ${del.body.errormessage}`);
    }
    expect(wrong).toEqual([]);
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });

  it('leaves school B out of every list of those accounts', async () => {
    const bNames = /Bamako|bintou|teacherB|Mali/;
    for (const who of ['scopedSchool', 'scopedCountry'] as const) {
      const lists: Array<[Method, string, object | undefined]> = [
        ['get', '/school/all', undefined],
        ['get', '/school', undefined],
        ['post', '/school', { pagesize: 200 }],
        ['get', `/school/curriculumid?curriculumid=${w.curriculum1}`, undefined],
        ['get', `/school/country/${w.countryY}`, undefined],
        ['get', `/school/country/${w.countryY}/curriculum/${w.curriculum1}`, undefined],
        ['post', '/standard', { pagesize: 200 }],
        ['get', '/standard/all', undefined],
        ['post', '/student', { pagesize: 200 }],
        ['get', '/student/all?teacher=true', undefined],
        ['get', '/student/download-students', undefined],
        ['get', `/student/download-students?studentid=${o.learnerB}`, undefined],
        ['post', '/teacher', { pagesize: 200 }],
        ['get', '/school-contribute/getallschooldashboard', undefined],
        ['get', '/school-contribute/getallschoolcontribute', undefined],
        ['get', `/school-contribute/all?countryid=${w.countryY}`, undefined],
        ['post', '/school-contribute/report/download', {}],
      ];
      for (const [method, url, body] of lists) {
        const res = await call(who, method, url, body);
        expect([who, url, res.status]).toEqual([who, url, 200]);
        const text = res.headers['content-type']?.startsWith('application/csv') ? res.text : JSON.stringify(res.body);
        expect([who, url, bNames.test(text)]).toEqual([who, url, false]);
      }
      // School A's objects are there.
      expect(
        (await call(who, 'post', '/student', {})).body.data.data.map(
          (r: { studentfirstname: string }) => r.studentfirstname,
        ),
      ).toEqual(['Ama']);
      expect(
        parseCsv((await call(who, 'get', '/student/download-students')).text).map((r) => r.schoolusername),
      ).toEqual(['ama1']);
    }
  });

  it('the same routes for school A objects work for both accounts (the control)', async () => {
    for (const [method, url, body, message] of idRoutes('A')) {
      if (method === 'delete') continue;
      for (const who of ['scopedSchool', 'scopedCountry'] as const) {
        // An account narrowed to schools creates no school: it could not see it (narrowed-staff.test.ts).
        if (who === 'scopedSchool' && url === '/school/create') continue;
        const res = await call(who, method, url, body);
        // Creating the same thing twice is refused by its own rule, not by the scope.
        const ok = res.status === 200 || (res.status === 400 && res.body.errormessage !== message);
        expect([who, method, url, ok ? 'ok' : `${res.status} ${res.body.errormessage}`]).toEqual([
          who,
          method,
          url,
          'ok',
        ]);
      }
    }
    for (const [method, url] of idRoutes('A').filter(([m]) => m === 'delete')) {
      const res = await call('scopedSchool', method, url);
      expect([url, res.status, res.body]).toEqual([url, 200, { error: false, data: true }]);
    }
  });

  it('every area refuses a token of the wrong type, ' +
      'a malformed body and an oversize one, writing nothing', async () => {
    const account = (await t.tdb.db('lmsusers').where('lmsusername', 'like', 'admin-%').first()).lmsusername;
    const refresh = `Bearer ${(await staffLogin(t.app, account)).refreshToken}`;
    const before = await snapshot(t.tdb.db, TABLES);
    const writes: Array<[Method, string]> = [
      ['post', '/school/create'],
      ['put', `/school/update/${w.schoolA.schoolid}`],
      ['post', '/standard/create'],
      ['put', `/standard/${w.classA1}`],
      ['post', '/student/create'],
      ['put', '/student/update'],
      ['post', '/teacher/create'],
      ['post', '/school-contribute/create'],
      ['put', `/school-contribute/updateschooldashboard/${o.recordA}`],
      ['post', '/school'],
      ['post', '/student'],
      ['post', '/teacher'],
    ];
    for (const [method, url] of writes) {
      const wrongType = await request(t.app)[method](url).set('Authorization', refresh).send({});
      expect([url, wrongType.status]).toEqual([url, 401]);
      const malformed = await request(t.app)
        [method](url)
        .set('Authorization', as.admin)
        .set('Content-Type', 'application/json')
        .send('{"schoolname": ');
      expect([url, malformed.status, malformed.body.errormessage]).toEqual([
        url,
        400,
        'Request body is not valid JSON',
      ]);
      // 1 MB for every route but the two bulk learner routes, which take 5 MB.
      const size = url.startsWith('/student/create') || url.startsWith('/student/update') ? 5.5 : 1.2;
      const oversize = await request(t.app)
        [method](url)
        .set('Authorization', as.admin)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ pad: 'x'.repeat(size * 1024 * 1024) }));
      expect([url, oversize.status, oversize.body.errormessage]).toEqual([url, 413, 'Request body is too large']);
    }
    expect(await snapshot(t.tdb.db, TABLES)).toEqual(before);
  });
});
