import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { W, addLearners, seedWorld, uuid, type Learner } from './report-data';

// The dashboards and charts (contract §16.1) and the sync reports: counts and series only.

let t: TestApp;
const auth: Record<string, string> = {};
let learners: Learner[];

const YEAR = new Date().getUTCFullYear();

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  await seedWorld(db);
  learners = await addLearners(db, [
    { school: 'sunrise', username: 'girl1', genderid: 2, created_at: '2026-01-20T00:00:00Z', wg: 4, type: 'online' },
    { school: 'sunrise', username: 'girl2', genderid: 2, created_at: '2026-03-20T00:00:00Z', wg: 1 },
    { school: 'sunrise', username: 'boy1', genderid: 1, created_at: '2026-03-25T00:00:00Z', isactive: false },
    { school: 'lotus', username: 'boy2', genderid: 1, created_at: '2025-12-31T23:00:00Z' },
    { school: 'amman', username: 'boy3', genderid: 1, created_at: '2026-07-01T00:00:00Z', type: 'online' },
    { school: 'sunrise', username: 'tacc', genderid: 1, teacherAccount: true },
  ]);
  await createStaff(db, { lmsusername: 'super@dash.test', roleids: [ROLE_IDS.superadmin] });
  await createStaff(db, { lmsusername: 'teacher@dash.test', roleids: [ROLE_IDS.teacher] });
  auth.super = `Bearer ${(await staffLogin(t.app, 'super@dash.test')).accessToken}`;
  auth.teacher = `Bearer ${(await staffLogin(t.app, 'teacher@dash.test')).accessToken}`;
});
afterAll(async () => {
  await t.tdb.dispose();
});

const get = (url: string, who = 'super') => request(t.app).get(url).set('Authorization', auth[who]);
const post = (url: string, body: object, who = 'super') =>
  request(t.app).post(url).set('Authorization', auth[who]).send(body);

describe('GET /report/dashboard', () => {
  it('three cumulative series of 13 points: the extra point dated the day before 1 ' +
      'January, then each month', async () => {
    const res = await get('/report/dashboard?countryid=&year=2026');
    expect(res.status).toBe(200);
    const [schools, students, teachers] = res.body.data as Array<{
      name: string;
      series: Array<{ name: string; value: number }>;
    }>;
    expect([schools.name, students.name, teachers.name]).toEqual(['Schools', 'Students', 'Teachers']);
    for (const s of [schools, students, teachers]) expect(s.series).toHaveLength(13);
    expect(schools.series.map((p) => p.name)).toEqual([
      '2025-12-31T00:00:00.000Z',
      ...Array.from({ length: 12 }, (_, m) => new Date(Date.UTC(2026, m, 1)).toISOString()),
    ]);
    // Amman (2025) and Sunrise (January) by January's end; Lotus joins in March. January's window starts at the epoch.
    expect(schools.series.map((p) => p.value)).toEqual([2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]);
    // Learners (teacher accounts left out): boy2 (2025) and girl1 by January, girl2 and boy1 in March, boy3 in July.
    expect(students.series.map((p) => p.value)).toEqual([2, 2, 2, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5]);
    // The teacher of Sunrise, created in February.
    expect(teachers.series.map((p) => p.value)).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('narrows to a country (`all` and empty mean every country), defaults to this year, ' +
      'refuses a year that is not one', async () => {
    const jordan = await get(`/report/dashboard?countryid=${W.country.jo}&year=2026`);
    expect(jordan.body.data[0].series.at(-1).value).toBe(1);
    expect(jordan.body.data[1].series.at(-1).value).toBe(1);
    expect(jordan.body.data[2].series.at(-1).value).toBe(0);
    const all = await get('/report/dashboard?countryid=all&year=2026');
    expect(all.body.data[1].series.at(-1).value).toBe(5);
    const now = await get('/report/dashboard');
    expect(now.body.data[0].series[1].name).toBe(new Date(Date.UTC(YEAR, 0, 1)).toISOString());
    expect((await get('/report/dashboard?year=twenty')).status).toBe(400);
  });
});

describe('the pies', () => {
  it('GET /report/gender: girls then boys; `schoolname=all` is a school name like any other (counts 0)', async () => {
    expect((await get('/report/gender?countryid=&schoolname=')).body.data).toEqual([
      { name: 'girls', value: 2 },
      { name: 'boys', value: 3 },
    ]);
    expect((await get('/report/gender?countryid=all')).body.data).toEqual([
      { name: 'girls', value: 2 },
      { name: 'boys', value: 3 },
    ]);
    expect((await get(`/report/gender?countryid=${W.country.kh}`)).body.data).toEqual([
      { name: 'girls', value: 2 },
      { name: 'boys', value: 2 },
    ]);
    expect((await get(`/report/gender?schoolname=${encodeURIComponent(W.schoolname.lotus)}`)).body.data).toEqual([
      { name: 'girls', value: 0 },
      { name: 'boys', value: 1 },
    ]);
    expect((await get('/report/gender?countryid=all&schoolname=all')).body.data).toEqual([
      { name: 'girls', value: 0 },
      { name: 'boys', value: 0 },
    ]);
    expect((await get('/report/gender?countryid=nowhere')).body.data).toEqual([
      { name: 'girls', value: 0 },
      { name: 'boys', value: 0 },
    ]);
  });

  it('GET /report/disability: three counts a teacher may read', async () => {
    const res = await get('/report/disability?countryid=all&schoolname=', 'teacher');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { name: 'with disability', value: 1 },
      { name: 'no disability', value: 1 },
      { name: 'not collected', value: 3 },
    ]);
  });

  it('GET /report/offlineonline: active learners by app', async () => {
    expect((await get('/report/offlineonline?schoolname=&countryid=')).body.data).toEqual([
      { name: 'Online', value: 2 },
      { name: 'Offline', value: 2 },
    ]);
    expect((await get(`/report/offlineonline?countryid=${W.country.kh}`)).body.data).toEqual([
      { name: 'Online', value: 1 },
      { name: 'Offline', value: 2 },
    ]);
  });

  it('GET /report/dashboard/country/:countryid and /dashboard/school/:schoolname', async () => {
    expect((await get(`/report/dashboard/country/${W.country.kh}`)).body.data).toEqual([
      { name: 'Teachers', value: 1 },
      { name: 'Schools', value: 2 },
      { name: 'Students', value: 5 },
    ]);
    expect((await get(`/report/dashboard/school/${encodeURIComponent(W.schoolname.sunrise)}`)).body.data).toEqual([
      { name: 'Teachers', value: 1 },
      { name: 'Students', value: 3 },
    ]);
    expect((await get('/report/dashboard/school/Nowhere')).body.data).toEqual([
      { name: 'Teachers', value: 0 },
      { name: 'Students', value: 0 },
    ]);
  });
});

describe('GET /report/studentusage', () => {
  it('per country: expected usage, and the last month\'s time per day per active learner', async () => {
    const recent = new Date(Date.now() - 5 * 86_400_000);
    await t.tdb.db('studentappusages').insert([
      { studentappusageid: uuid(), schooluserid: learners[0].schooluserid, time_spent: 4000, created_at: recent },
      { studentappusageid: uuid(), schooluserid: learners[3].schooluserid, time_spent: 2000, created_at: recent },
      {
        studentappusageid: uuid(),
        schooluserid: learners[4].schooluserid,
        time_spent: 900,
        created_at: new Date('2020-01-01T00:00:00Z'),
      },
    ]);
    const res = await get('/report/studentusage');
    // Active learners in any school: girl1, girl2, boy2, boy3 = 4.
    expect(res.body.data).toEqual([
      { name: 'Cambodia', series: [{ name: 'Expected', value: 20 }, { name: 'Actual', value: 50 }] },
      { name: 'Jordan', series: [{ name: 'Expected', value: 10 }, { name: 'Actual', value: 0 }] },
    ]);
  });
});

describe('POST /report/techdowntime', () => {
  it('counts, per section, the feedbacks of the period that report a problem there', async () => {
    const section = (o: { text?: string; images?: string[]; errors?: string[] } = {}) => ({
      feedback: o.text ?? '',
      images: o.images ?? [],
      selected_error: o.errors ?? [],
    });
    const feedback = (created: Date, rpi = section(), tablet = section()) => ({
      feedbackid: uuid(),
      teachername: 't',
      curriculumid: W.curriculum,
      image: JSON.stringify([]),
      created_by: W.teacher,
      created_at: created,
      feedback: JSON.stringify({
        rpi,
        router: section(),
        content: section(),
        tablet,
        app: section(),
        general: section(),
      }),
    });
    const lastWeek = new Date(Date.now() - 7 * 86_400_000);
    await t.tdb.db('feedbacks').insert([
      feedback(lastWeek, section({ text: 'no power' }), section({ images: ['x.png'] })),
      feedback(lastWeek, section({ errors: ['wifi'] })),
      feedback(lastWeek),
      feedback(new Date('2020-01-01T00:00:00Z'), section({ text: 'old' })),
    ]);
    const res = await post('/report/techdowntime', {});
    expect(res.body.data).toEqual([
      { name: 'RPI', value: 2 },
      { name: 'Router', value: 0 },
      { name: 'Content', value: 0 },
      { name: 'Tablet', value: 1 },
      { name: 'App', value: 0 },
      { name: 'General', value: 0 },
    ]);
    const old = await post('/report/techdowntime', {
      startDate: '2020-01-15T00:00:00.000Z',
      endDate: '2020-02-10T00:00:00.000Z',
    });
    expect(old.body.data[0]).toEqual({ name: 'RPI', value: 1 });
  });
});

describe('sync records and sync status', () => {
  beforeAll(async () => {
    const db = t.tdb.db;
    const sync = (filename: string, at: string, by: string, rowcount: number | null, type = 1) => ({
      syncid: uuid(),
      filename,
      type,
      offlineonline: false,
      created_by: by,
      created_at: new Date(at),
      rowcount,
    });
    const [, , , amman] = learners;
    await db('schoolusers').insert({
      schooluserid: uuid(),
      schoolusername: 'teacher2',
      schooluserpasswordhash: 'x',
      schooluserrole: 3,
      schoolname: W.schoolname.amman,
    });
    const teacher2 = (await db('schoolusers').where({ schoolusername: 'teacher2' }).first()).schooluserid as string;
    void amman;
    await db('syncs').insert([
      sync('logupload-1.zip', '2026-05-01T00:00:00Z', W.teacher, 120),
      sync('logupload-2.zip', '2026-06-01T00:00:00Z', W.teacher, 80),
      sync('logupload-3.zip', '2026-04-01T00:00:00Z', teacher2, null),
    ]);
    await db('contentpushes').insert([
      {
        contentpushid: uuid(),
        kind: 'students',
        schoolid: W.school.sunrise,
        rowcount: 30,
        created_by: 'admin-id',
        created_by_name: 'admin@x',
        created_at: new Date('2026-06-10T00:00:00Z'),
      },
      {
        contentpushid: uuid(),
        kind: 'content',
        schoolid: null,
        rowcount: 900,
        created_by: 'admin-id',
        created_by_name: 'admin@x',
        created_at: new Date('2026-06-05T00:00:00Z'),
      },
    ]);
  });

  it('POST /report/syncrecords: oldest first with the teacher, school and country; the filter applies', async () => {
    const res = await post('/report/syncrecords', { filter: [], pageindex: 1, pagesize: 10 });
    expect(res.status).toBe(200);
    expect(res.body.data.total).toBe(3);
    expect(res.body.data.data.map((r: any) => r.filename)).toEqual([
      'logupload-3.zip',
      'logupload-1.zip',
      'logupload-2.zip',
    ]);
    expect(res.body.data.data[1]).toMatchObject({
      type: 1,
      offlineonline: false,
      rowcount: 120,
      schooluser: {
        schooluserid: W.teacher,
        schoolusername: 'teacher1',
        schoolname: W.schoolname.sunrise,
        school: { schoolid: W.school.sunrise, countries: { countryname: 'Cambodia' } },
      },
    });
    const one = await post('/report/syncrecords', {
      filter: [{ key: 'filename', value: 'UPLOAD-2' }],
      pageindex: 1,
      pagesize: 10,
    });
    expect(one.body.data.data.map((r: any) => r.filename)).toEqual(['logupload-2.zip']);
    const either = await post('/report/syncrecords', { filter: [{ key: 'filename', value: ['-1.', '-3.'] }] });
    expect(either.body.data.total).toBe(2);
    expect((await post('/report/syncrecords', { filter: [{ key: 'type', value: '2' }] })).body.data.total).toBe(0);
    expect(
      (await post('/report/syncrecords', { filter: [{ key: 'offlineonline', value: 'false' }] })).body.data.total,
    ).toBe(3);
    expect((await post('/report/syncrecords', { filter: [{ key: 'schoolname', value: 'x' }] })).status).toBe(400);
  });

  it('GET /report/syncstatus: per school, the last upload and the last content ' +
      'sent, silent schools first', async () => {
    const res = await get('/report/syncstatus');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ total: 3, pageindex: 0, pagesize: 0 });
    const rows = res.body.data.data as Array<Record<string, any>>;
    expect(rows.map((r) => r.schoolname)).toEqual([W.schoolname.lotus, W.schoolname.amman, W.schoolname.sunrise]);
    const [lotus, amman, sunrise] = rows;
    expect(lotus).toMatchObject({ schoolid: W.school.lotus, countryname: 'Cambodia', lastupload: null });
    // Every school is served the curriculum pushed to the classroom server.
    expect(lotus.lastcontentpush).toEqual({
      kind: 'content',
      at: '2026-06-05T00:00:00.000Z',
      rows: 900,
      by: { id: 'admin-id', name: 'admin@x' },
      scope: 'all',
    });
    expect(amman.lastupload).toMatchObject({
      at: '2026-04-01T00:00:00.000Z',
      by: { schoolusername: 'teacher2' },
      rows: null,
      filename: 'logupload-3.zip',
    });
    expect(sunrise.lastupload).toMatchObject({
      at: '2026-06-01T00:00:00.000Z',
      by: { schooluserid: W.teacher, schoolusername: 'teacher1' },
      rows: 80,
    });
    expect(sunrise.lastcontentpush).toMatchObject({
      kind: 'students',
      rows: 30,
      scope: 'school',
      at: '2026-06-10T00:00:00.000Z',
    });
    const jordan = await get(`/report/syncstatus?countryid=${W.country.jo}&pagesize=5&pageindex=1`);
    expect(jordan.body.data).toMatchObject({ total: 1, pageindex: 1, pagesize: 5 });
    expect(
      (await get(`/report/syncstatus?schoolname=${encodeURIComponent(W.schoolname.sunrise)}`)).body.data.data.map(
        (r: any) => r.schoolid,
      ),
    ).toEqual([W.school.sunrise]);
    expect((await get('/report/syncstatus?pagesize=500')).status).toBe(400);
  });

  it('is documented in the OpenAPI output', async () => {
    const { buildOpenApi } = await import('@lms/shared');
    const { centralRoutes } = await import('../src/areas');
    const doc = buildOpenApi({ title: 't', version: '1' }, centralRoutes) as {
      paths: Record<string, { get?: { summary?: string; parameters?: Array<{ name: string }> } }>;
    };
    const op = doc.paths['/report/syncstatus']?.get;
    expect(op?.summary).toMatch(/last classroom-log upload/);
    expect(op?.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(['countryid', 'schoolid', 'schoolname', 'pageindex', 'pagesize']),
    );
  });
});
