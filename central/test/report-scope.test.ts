import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { W, addAttempts, addLearners, addLessonProgress, seedWorld, uuid, type Learner } from './report-data';

// Staff tokens that name schools or countries see only those, in every report: a filter naming a school
// outside the scope answers the empty result, never another school's rows.

let t: TestApp;
let classroom: Server;
const auth: Record<string, string> = {};
let sun: Learner;
let lot: Learner;
let amm: Learner;
let classroomRows: Array<Record<string, unknown>> = [];
const asked: any[] = [];

beforeAll(async () => {
  const fake = express();
  fake.use(express.json());
  fake.post(/.*/, (req, res) => {
    asked.push(req.body);
    // Downloads are answered with the bare rows (contract §16.3), pages with a page of them.
    if (req.path.endsWith('/download')) res.json({ error: false, data: classroomRows });
    else
      res.json({
        error: false,
        data: { data: classroomRows, total: classroomRows.length, pageindex: 1, pagesize: 10 },
      });
  });
  classroom = fake.listen(0, '127.0.0.1');
  await new Promise((r) => classroom.once('listening', r));
  t = await makeApp({
    RATE_LIMIT_MAX: '100000',
    RPI_CLOUD: `http://127.0.0.1:${(classroom.address() as AddressInfo).port}`,
  });
  const db = t.tdb.db;
  await seedWorld(db);
  [sun, lot, amm] = await addLearners(db, [
    { school: 'sunrise', username: 'sun', genderid: 2, type: 'online' },
    { school: 'lotus', username: 'lot', genderid: 1 },
    { school: 'amman', username: 'amm', genderid: 1 },
  ]);
  for (const l of [sun, lot, amm]) {
    await addAttempts(db, [
      { studentid: l.studentid, reference: W.quiz.ls1, ispass: true, pct: 90, at: '2026-05-01T00:00:00Z' },
    ]);
    await addLessonProgress(db, l.studentid, ['ls1']);
  }
  const lotusTeacher = uuid();
  await db('schoolusers').insert({
    schooluserid: lotusTeacher,
    schoolusername: 'lteacher',
    schooluserpasswordhash: 'x',
    schooluserrole: 3,
    schoolname: W.schoolname.lotus,
    created_at: new Date('2026-02-10T00:00:00Z'),
  });
  await db('syncs').insert([
    {
      syncid: uuid(),
      filename: 'sunrise.zip',
      type: 1,
      offlineonline: false,
      created_by: W.teacher,
      created_at: new Date('2026-05-01T00:00:00Z'),
    },
    {
      syncid: uuid(),
      filename: 'lotus.zip',
      type: 1,
      offlineonline: false,
      created_by: lotusTeacher,
      created_at: new Date('2026-05-02T00:00:00Z'),
    },
  ]);
  const section = (text: string) => ({ feedback: text, images: [], selected_error: [] });
  const feedback = (by: string) => ({
    feedbackid: uuid(),
    teachername: 't',
    curriculumid: W.curriculum,
    image: JSON.stringify([]),
    created_by: by,
    created_at: new Date(Date.now() - 86_400_000),
    feedback: JSON.stringify({
      rpi: section('down'),
      router: section(''),
      content: section(''),
      tablet: section(''),
      app: section(''),
      general: section(''),
    }),
  });
  await db('feedbacks').insert([feedback(W.teacher), feedback(lotusTeacher)]);
  const recent = new Date(Date.now() - 86_400_000);
  await db('studentappusages').insert([
    { studentappusageid: uuid(), schooluserid: sun.schooluserid, time_spent: 3000, created_at: recent },
    { studentappusageid: uuid(), schooluserid: lot.schooluserid, time_spent: 600, created_at: recent },
  ]);

  const staff = async (name: string, o: { schools?: string[]; countries?: string[] }) => {
    await createStaff(db, { lmsusername: `${name}@scope.test`, roleids: [ROLE_IDS.admin], countries: o.countries });
    if (o.schools)
      await db('lmsusers')
        .where({ lmsusername: `${name}@scope.test` })
        .update({ schools: JSON.stringify(o.schools) });
    auth[name] = `Bearer ${(await staffLogin(t.app, `${name}@scope.test`)).accessToken}`;
  };
  await staff('all', {});
  await staff('lotus', { schools: [W.school.lotus] });
  await staff('jordan', { countries: [W.country.jo] });
  await staff('nothing', { schools: [uuid()] });
  await createStaff(db, { lmsusername: 'teacher@scope.test', roleids: [ROLE_IDS.teacher] });
  auth.teacher = `Bearer ${(await staffLogin(t.app, 'teacher@scope.test')).accessToken}`;
});
afterAll(async () => {
  await new Promise((r) => classroom.close(r));
  await t.tdb.dispose();
});

const get = (url: string, who: string) => request(t.app).get(url).set('Authorization', auth[who]);
const post = (url: string, body: object, who: string) =>
  request(t.app).post(url).set('Authorization', auth[who]).send(body);
const f = (filters: Record<string, unknown>) => ({
  pageindex: 1,
  pagesize: 50,
  filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
});
const values = (res: request.Response) => (res.body.data as Array<{ value: number }>).map((d) => d.value);

describe('charts count only the schools of the scope', () => {
  it('gender, disability, online/offline', async () => {
    expect(values(await get('/report/gender?countryid=all', 'all'))).toEqual([1, 2]);
    expect(values(await get('/report/gender?countryid=all', 'lotus'))).toEqual([0, 1]);
    expect(values(await get('/report/gender?countryid=all', 'jordan'))).toEqual([0, 1]);
    expect(values(await get(`/report/gender?schoolname=${encodeURIComponent(W.schoolname.sunrise)}`, 'lotus'))).toEqual(
      [0, 0],
    );
    expect(values(await get('/report/disability?countryid=all', 'lotus'))).toEqual([0, 0, 1]);
    expect(values(await get('/report/offlineonline', 'lotus'))).toEqual([0, 1]);
    expect(values(await get('/report/gender', 'nothing'))).toEqual([0, 0]);
  });

  it('the dashboards', async () => {
    const series = (res: request.Response) =>
      (res.body.data as Array<{ series: Array<{ value: number }> }>).map((s) => s.series.at(-1)!.value);
    expect(series(await get('/report/dashboard?year=2026', 'all'))).toEqual([3, 3, 2]);
    expect(series(await get('/report/dashboard?year=2026', 'lotus'))).toEqual([1, 1, 1]);
    expect(series(await get('/report/dashboard?year=2026', 'jordan'))).toEqual([1, 1, 0]);
    expect(values(await get(`/report/dashboard/country/${W.country.kh}`, 'lotus'))).toEqual([1, 1, 1]);
    expect(values(await get(`/report/dashboard/country/${W.country.kh}`, 'jordan'))).toEqual([0, 0, 0]);
    expect(values(await get(`/report/dashboard/school/${encodeURIComponent(W.schoolname.sunrise)}`, 'lotus'))).toEqual([
      0, 0,
    ]);
    expect(values(await get(`/report/dashboard/school/${encodeURIComponent(W.schoolname.lotus)}`, 'lotus'))).toEqual([
      1, 1,
    ]);
  });

  it('usage and tech downtime', async () => {
    const usage = await get('/report/studentusage', 'lotus');
    // Only Cambodia (Lotus's country), only Lotus's time and learners: 600 s / 30 / 1.
    expect(usage.body.data).toEqual([
      {
        name: 'Cambodia',
        series: [
          { name: 'Expected', value: 20 },
          { name: 'Actual', value: 20 },
        ],
      },
    ]);
    expect((await get('/report/studentusage', 'jordan')).body.data.map((c: { name: string }) => c.name)).toEqual([
      'Jordan',
    ]);
    expect(values(await post('/report/techdowntime', {}, 'all'))[0]).toBe(2);
    expect(values(await post('/report/techdowntime', {}, 'lotus'))[0]).toBe(1);
    expect(values(await post('/report/techdowntime', {}, 'jordan'))[0]).toBe(0);
  });
});

describe('learner tables answer nothing outside the scope', () => {
  it('one-learner reports', async () => {
    for (const url of ['/report/studentprogress', '/report/studentlevelquiz']) {
      expect((await post(url, f({ studentid: sun.studentid }), 'lotus')).body.data.total).toBe(0);
      expect((await post(url, f({ studentid: lot.studentid }), 'lotus')).body.data.total).toBeGreaterThan(0);
      expect((await post(url, f({ standard: W.class.sunrise }), 'lotus')).body.data.total).toBe(0);
    }
    expect(
      (await post('/report/student-level-progress', f({ studentid: sun.studentid }), 'lotus')).body.data,
    ).toMatchObject({ total: 0, student: null });
    expect(
      (await post('/report/student-lesson-progress', f({ studentid: amm.studentid }), 'jordan')).body.data.total,
    ).toBe(4);
  });

  it('class reports, current level, grade progress, activity', async () => {
    for (const url of [
      '/report/studentprogress/class',
      '/report/studentlevelquiz/class',
      '/report/student-grade-progress',
      '/report/studentlastcompletedquiz',
    ]) {
      expect([url, (await post(url, f({ standard: W.class.sunrise }), 'lotus')).body.data.total]).toEqual([url, 0]);
      expect([url, (await post(url, f({ standard: W.class.lotus }), 'lotus')).body.data.total]).toEqual([url, 1]);
    }
    const status = async (who: string, filters: Record<string, unknown>) =>
      (await post('/report/studentstatus', f(filters), who)).body.data.data.map(
        (r: any) => r.schooluser.schoolusername,
      );
    expect(await status('all', {})).toEqual(['amm', 'lot', 'sun']);
    expect(await status('lotus', {})).toEqual(['lot']);
    expect(await status('lotus', { schoolname: W.schoolname.sunrise })).toEqual([]);
    expect(await status('lotus', { schoolid: [W.school.sunrise, W.school.lotus] })).toEqual(['lot']);
    expect(await status('jordan', { countryid: W.country.kh })).toEqual([]);
    expect(await status('nothing', {})).toEqual([]);
  });

  it('downloads: the header line alone outside the scope', async () => {
    const res = await post('/report/studentprogress/class/download', f({ standard: W.class.sunrise }), 'lotus');
    expect(res.text.split('\n')).toHaveLength(1);
    const own = await post('/report/studentprogress/class/download', f({ standard: W.class.lotus }), 'lotus');
    expect(own.text.split('\n')).toHaveLength(2);
    const status = await post('/report/studentstatus/download', f({ schoolname: W.schoolname.sunrise }), 'lotus');
    expect(status.text.split('\n')).toHaveLength(4);
  });
});

describe('sync reports', () => {
  it('list the uploads and the schools of the scope only', async () => {
    const names = async (who: string) =>
      (await post('/report/syncrecords', { pageindex: 1, pagesize: 10 }, who)).body.data.data.map(
        (r: any) => r.filename,
      );
    expect(await names('all')).toEqual(['sunrise.zip', 'lotus.zip']);
    expect(await names('lotus')).toEqual(['lotus.zip']);
    expect(await names('jordan')).toEqual([]);
    const schools = async (who: string, q = '') =>
      (await get(`/report/syncstatus${q}`, who)).body.data.data.map((r: any) => r.schoolname);
    expect(await schools('lotus')).toEqual([W.schoolname.lotus]);
    expect(await schools('jordan')).toEqual([W.schoolname.amman]);
    expect(await schools('lotus', `?schoolid=${W.school.sunrise}`)).toEqual([]);
  });
});

describe('online reports', () => {
  it('ask the classroom for the scope\'s schools and drop any row of another school', async () => {
    classroomRows = [
      { studentid: 'a', school: { schoolid: W.school.sunrise, schoolname: W.schoolname.sunrise } },
      { studentid: 'b', school: { schoolid: W.school.lotus, schoolname: W.schoolname.lotus } },
      { studentid: 'c', schoolname: W.schoolname.lotus },
      { studentid: 'd' },
    ];
    asked.length = 0;
    const res = await post('/report/online/studentprogress/class', f({ standard: 'x' }), 'lotus');
    expect(res.body.data).toEqual({ data: [classroomRows[1], classroomRows[2]], total: 2, pageindex: 1, pagesize: 50 });
    expect(asked[0].filter).toContainEqual({ key: 'schoolid', value: [W.school.lotus] });
    const all = await post('/report/online/studentprogress/class', f({ standard: 'x' }), 'all');
    expect(all.body.data.total).toBe(4);
    expect(asked[1].filter).toEqual([{ key: 'standard', value: 'x' }]);
    // A teacher never sees a learner's identity, however deep the classroom puts it.
    classroomRows = [
      {
        studentid: 'e',
        studentfirstname: 'Sok',
        student: { studentfirstname: 'Sok', studentlastname: 'Dara', schooluser: { schoolusername: 'sok1' } },
        school: { schoolid: W.school.lotus },
      },
    ];
    const teacher = await post('/report/online/studentprogress', f({ studentid: 'e' }), 'teacher');
    expect(teacher.body.data.data).toEqual([
      { studentid: 'e', student: { schooluser: { schoolusername: 'sok1' } }, school: { schoolid: W.school.lotus } },
    ]);
    expect(
      (await post('/report/online/studentprogress', f({ studentid: 'e' }), 'all')).body.data.data[0].student
        .studentfirstname,
    ).toBe('Sok');
    asked.length = 0;
    const none = await post('/report/online/studentlastcompletedquiz', f({}), 'nothing');
    expect(none.body.data).toEqual({ data: [], total: 0, pageindex: 1, pagesize: 50 });
    expect(asked).toHaveLength(0);
  });
});

describe('every online report and every download, as narrowed callers', () => {
  const ONLINE_PAGES = [
    '/report/online/studentprogress',
    '/report/online/studentprogress/class',
    '/report/online/studentlastcompletedquiz',
    '/report/studentlevelquiz/online',
    '/report/online/studentlevelquiz/class',
    '/report/online/studentstatus',
    '/report/online/student-grade-progress',
    '/report/online/student-level-progress',
    '/report/online/student-lesson-progress',
  ];
  const ONLINE_DOWNLOADS = [
    '/report/online/studentprogress/download',
    '/report/online/studentprogress/class/download',
    '/report/online/studentlastcompletedquiz/download',
    '/report/online/studentlevelquiz/download',
    '/report/online/studentlevelquiz/class/download',
    '/report/online/studentstatus/download',
  ];
  /** A classroom row of a school, as the classroom's reports nest it. */
  const rowOf = (school: 'sunrise' | 'lotus' | 'amman') => ({
    studentid: `id-${school}`,
    school: { schoolid: W.school[school], schoolname: W.schoolname[school] },
    schooluser: { schoolusername: `user-${school}` },
    student: { schoolname: W.schoolname[school], schooluser: { schoolusername: `user-${school}` } },
  });
  const OWN: Record<string, 'lotus' | 'amman'> = { lotus: 'lotus', jordan: 'amman' };
  const schoolFilter = (body: any) =>
    (body.filter as Array<{ key: string; value: unknown }>).find((x) => x.key === 'schoolid')?.value;

  it("online pages: the classroom is asked for the caller's schools only, " +
      "and other schools' rows are dropped", async () => {
    classroomRows = [rowOf('sunrise'), rowOf('lotus'), rowOf('amman')];
    for (const url of ONLINE_PAGES) {
      for (const who of ['lotus', 'jordan'] as const) {
        asked.length = 0;
        const res = await post(url, f({ studentid: 'any', standard: 'x' }), who);
        expect([url, who, res.status]).toEqual([url, who, 200]);
        expect([url, who, res.body.data.data.map((r: { studentid: string }) => r.studentid)]).toEqual([
          url,
          who,
          [`id-${OWN[who]}`],
        ]);
        expect([url, who, schoolFilter(asked[0])]).toEqual([url, who, [W.school[OWN[who]]]]);
      }
      asked.length = 0;
      const all = await post(url, f({ studentid: 'any' }), 'all');
      expect([url, all.body.data.data.length, schoolFilter(asked[0])]).toEqual([url, 3, undefined]);
      // A scope that admits no school asks the classroom nothing.
      asked.length = 0;
      expect([url, (await post(url, f({}), 'nothing')).body.data.data]).toEqual([url, []]);
      expect(asked).toHaveLength(0);
    }
  });

  it('online downloads: the CSV carries the caller\'s schools\' rows only', async () => {
    classroomRows = [rowOf('sunrise'), rowOf('lotus'), rowOf('amman')];
    for (const url of ONLINE_DOWNLOADS) {
      for (const who of ['lotus', 'jordan'] as const) {
        asked.length = 0;
        const res = await post(
          url,
          f({ studentid: 'any', standard: 'x', startDate: '2026-01-01', endDate: '2026-12-31' }),
          who,
        );
        expect([url, who, res.status]).toEqual([url, who, 200]);
        const users = ['sunrise', 'lotus', 'amman'].filter((k) => res.text.includes(`user-${k}`));
        expect([url, who, users]).toEqual([url, who, [OWN[who]]]);
        expect([url, who, schoolFilter(asked[0])]).toEqual([url, who, [W.school[OWN[who]]]]);
      }
      const all = await post(url, f({ startDate: '2026-01-01', endDate: '2026-12-31' }), 'all');
      expect([url, ['sunrise', 'lotus', 'amman'].filter((k) => all.text.includes(`user-${k}`))]).toEqual([
        url,
        ['sunrise', 'lotus', 'amman'],
      ]);
    }
  });

  it('offline downloads: another school\'s learner or class gives no row, the own ones do', async () => {
    const cases: Array<[string, (l: Learner) => Record<string, unknown>]> = [
      ['/report/studentprogress/download', (l) => ({ studentid: l.studentid })],
      ['/report/studentlevelquiz/download', (l) => ({ studentid: l.studentid })],
      [
        '/report/studentprogress/class/download',
        (l) => ({ standard: l === sun ? W.class.sunrise : l === lot ? W.class.lotus : W.class.amman }),
      ],
      [
        '/report/studentlevelquiz/class/download',
        (l) => ({ standard: l === sun ? W.class.sunrise : l === lot ? W.class.lotus : W.class.amman }),
      ],
      [
        '/report/studentlastcompletedquiz/download',
        (l) => ({ standard: l === sun ? W.class.sunrise : l === lot ? W.class.lotus : W.class.amman }),
      ],
      [
        '/report/studentstatus/download',
        (l) => ({ schoolname: l === sun ? W.schoolname.sunrise : l === lot ? W.schoolname.lotus : W.schoolname.amman }),
      ],
    ];
    const named = (text: string) =>
      (['sun', 'lot', 'amm'] as const).filter((u) => new RegExp(`(^|[,"])${u}([,"]|$)`, 'm').test(text));
    for (const [url, filters] of cases) {
      for (const [who, own, others] of [['lotus', lot, [sun, amm]], ['jordan', amm, [sun, lot]]] as const) {
        const mine = await post(url, f(filters(own)), who);
        expect([url, who, mine.status, named(mine.text)]).toEqual([url, who, 200, [own.schoolusername]]);
        for (const other of others) {
          const theirs = await post(url, f(filters(other)), who);
          expect([url, who, other.schoolusername, theirs.status, named(theirs.text)]).toEqual([
            url,
            who,
            other.schoolusername,
            200,
            [],
          ]);
        }
      }
      // The unnarrowed account gets the learner of any school.
      expect([url, named((await post(url, f(filters(sun)), 'all')).text)]).toEqual([url, ['sun']]);
    }
  });
});
