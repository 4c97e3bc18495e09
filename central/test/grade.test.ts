import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchoolUser, schoolLogin } from './accounts';
import {
  KHMER,
  authoringApp,
  expectRefused,
  onPostgres,
  oversize,
  raceWithUncommitted,
  scopedStaff,
  uuid,
  type Callers,
} from './authoring';

let c: Callers;
const ids = { subject: uuid(), math: uuid(), reading: uuid(), gone: uuid(), countryA: uuid(), countryB: uuid() };
beforeAll(async () => {
  c = await authoringApp();
  const db = c.t.tdb.db;
  await db('countries').insert([
    { countryid: ids.countryA, countryname: 'Cambodia' },
    { countryid: ids.countryB, countryname: 'Kenya' },
  ]);
  await db('subjects').insert({ subjectid: ids.subject, subjectname: 'Mathematics' });
  await db('curriculums').insert([
    {
      curriculumid: ids.math,
      curriculumname: 'Math A',
      subjectid: ids.subject,
      curriculumstatus: true,
      isdeleted: false,
    },
    {
      curriculumid: ids.reading,
      curriculumname: 'Reading B',
      subjectid: ids.subject,
      curriculumstatus: true,
      isdeleted: false,
    },
    { curriculumid: ids.gone, curriculumname: 'Old', subjectid: ids.subject, curriculumstatus: true, isdeleted: true },
  ]);
  await db('curriculumcountry').insert([
    { curriculumcountryid: uuid(), curriculumid: ids.math, countryid: ids.countryA },
    { curriculumcountryid: uuid(), curriculumid: ids.reading, countryid: ids.countryB },
  ]);
});
afterAll(async () => { await c.t.tdb.dispose(); });

const db = () => c.t.tdb.db;
const post = (url: string, body: object, who = c.admin) =>
  request(c.t.app).post(url).set('Authorization', who).send(body);
const put = (url: string, body: object, who = c.admin) =>
  request(c.t.app).put(url).set('Authorization', who).send(body);
const get = (url: string, who = c.admin) =>
  request(c.t.app).get(url).set('Authorization', who).set('Content-Type', 'application/json');
const del = (url: string, who = c.admin) =>
  request(c.t.app).delete(url).set('Authorization', who).set('Content-Type', 'application/json');
const clearGrades = async () => {
  await db()('levels').del();
  await db()('grades').del();
};
const UI_OPTIONS = { headers: { normalizedNames: {}, lazyUpdate: null } };
const body = (o: Record<string, unknown> = {}) => ({
  gradename: 'Grade 1',
  gradedescription: 'First year',
  gradeorder: 1,
  curriculumid: ids.math,
  passing_points: 70,
  ...o,
});
const create = async (o: Record<string, unknown> = {}) => {
  const res = await post('/grade/create', body(o));
  expect([res.status, res.body.errormessage]).toEqual([200, undefined]);
  return res.body.data as { gradeid: string };
};
const GRADE_ALL_KEYS = [
  'curriculumid',
  'curriculumname',
  'gradedescription',
  'gradeid',
  'gradename',
  'gradeorder',
  'gradestatus',
  'isdeleted',
  'passing_points',
  'points',
].sort();

describe('/grade', () => {
  it('POST /grade/create writes an active grade whose points are worked out, not sent', async () => {
    const res = await post('/grade/create', body({ gradename: 'Grade one', gradedescription: '' }));
    expect(res.body).toEqual({
      error: false,
      data: expect.objectContaining({
        gradeid: expect.any(String),
        curriculumid: ids.math,
        gradename: 'Grade one',
        gradedescription: '',
        gradeorder: 1,
        passing_points: 70,
        points: 0,
        gradestatus: true,
        isdeleted: false,
        created_by: c.adminId,
      }),
    });
    expect(await db()('grades').where({ gradeid: res.body.data.gradeid }).first()).toMatchObject({
      gradename: 'Grade one',
      points: 0,
    });
    await expectRefused(
      db(),
      ['grades'],
      [
        [
          'points are not a field',
          post('/grade/create', body({ gradename: 'Grade two', points: 500 })),
          400,
          '"points" is not allowed',
        ],
      ],
    );
  });

  it("keeps the points model: a grade's points are the sum of its live levels after an update; " +
      "a deleted grade counts nowhere", async () => {
    const { gradeid } = await create({ gradename: 'Pointed', gradeorder: 2 });
    await db()('levels').insert([
      { levelid: uuid(), gradeid, levelname: 'L1', levelorder: 1, quiz_points: 100, points: 300, isdeleted: false },
      { levelid: uuid(), gradeid, levelname: 'L2', levelorder: 2, quiz_points: 100, points: 150, isdeleted: false },
      { levelid: uuid(), gradeid, levelname: 'Gone', levelorder: 3, quiz_points: 100, points: 999, isdeleted: true },
    ]);
    await db()('grades').where({ gradeid }).update({ points: 7 });
    const res = await put(`/grade/${gradeid}`, body({ gradename: 'Pointed', gradeorder: 2, passing_points: 200 }));
    expect(res.body.data).toMatchObject({ gradeid, points: 450, passing_points: 200, updated_by: c.adminId });
    expect((await get(`/grade/${gradeid}`)).body.data.points).toBe(450);
    expect((await del(`/grade/${gradeid}`)).body).toEqual({ error: false, data: true });
    expect(await db()('grades').where({ gradeid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: c.adminId,
      deleted_at: expect.any(String),
    });
    expect(
      (await post('/grade', { pagesize: 200 })).body.data.data.map((g: { gradeid: string }) => g.gradeid),
    ).not.toContain(gradeid);
  });

  it('round-trips a Khmer grade name', async () => {
    const { gradeid } = await create({
      gradename: KHMER.grade,
      gradedescription: 'ឆ្នាំទីមួយ',
      curriculumid: ids.reading,
    });
    expect((await get(`/grade/${gradeid}`)).body.data).toMatchObject({
      gradename: KHMER.grade,
      gradedescription: 'ឆ្នាំទីមួយ',
      curriculumname: 'Reading B',
    });
    const listed = await post('/grade', { filter: [{ key: 'gradename', value: 'ថ្នាក់' }] });
    expect(listed.body.data.data.map((g: { gradeid: string }) => g.gradeid)).toEqual([gradeid]);
  });

  it('GET /grade/:gradeid and POST /grade answer GradeAll rows (with the curriculum name), ' +
      'the list by curriculum then order', async () => {
    await clearGrades();
    const g3 = await create({ gradename: 'Third', gradeorder: 3 });
    const g1 = await create({ gradename: 'First', gradeorder: 1 });
    const r1 = await create({
      gradename: 'Reading 1',
      gradeorder: 1,
      curriculumid: ids.reading,
      gradedescription: null,
    });
    const one = await get(`/grade/${g1.gradeid}`);
    expect(Object.keys(one.body.data).sort()).toEqual(GRADE_ALL_KEYS);
    expect(one.body.data).toEqual({
      curriculumid: ids.math,
      curriculumname: 'Math A',
      gradedescription: 'First year',
      gradeid: g1.gradeid,
      gradename: 'First',
      gradeorder: 1,
      gradestatus: true,
      isdeleted: false,
      passing_points: 70,
      points: 0,
    });
    const page = await post('/grade', { filter: [], pageindex: 1, pagesize: 100 });
    const byCurriculum = [ids.math, ids.reading].sort();
    const expected = byCurriculum.flatMap((cid) => (cid === ids.math ? [g1.gradeid, g3.gradeid] : [r1.gradeid]));
    expect(page.body.data.data.map((g: { gradeid: string }) => g.gradeid)).toEqual(expected);
    expect(page.body.data).toMatchObject({ total: 3, pageindex: 1, pagesize: 100 });
    for (const row of page.body.data.data) expect(Object.keys(row).sort()).toEqual(GRADE_ALL_KEYS);
    expect((await post('/grade', { filter: [{ key: 'gradedescription', value: 'first' }] })).body.data.total).toBe(2);
    expect((await post('/grade', { pageindex: 2, pagesize: 2 })).body.data.data).toHaveLength(1);
  });

  it('activate and deactivate flip the status (the admin UI sends its options object as the body)', async () => {
    const { gradeid } = await create({ gradename: 'Switchable', gradeorder: 9 });
    expect((await put(`/grade/deactivate/${gradeid}`, UI_OPTIONS)).body).toEqual({ error: false, data: true });
    expect((await db()('grades').where({ gradeid }).first()).gradestatus).toBe(false);
    expect((await put(`/grade/activate/${gradeid}`, UI_OPTIONS)).body).toEqual({ error: false, data: true });
    expect((await db()('grades').where({ gradeid }).first()).gradestatus).toBe(true);
  });

  it("GET /grade/all: active live grades by name for any signed-in user, narrowed by name, " +
      "curriculum or a learner's curriculum", async () => {
    await clearGrades();
    const a = await create({ gradename: 'Beta grade' });
    const b = await create({ gradename: 'Alpha grade', curriculumid: ids.reading });
    const off = await create({ gradename: 'Off grade' });
    await put(`/grade/deactivate/${off.gradeid}`, UI_OPTIONS);
    const gone = await create({ gradename: 'Gone grade' });
    await del(`/grade/${gone.gradeid}`);
    const studentid = uuid();
    const schooluserid = await createSchoolUser(db(), { schoolusername: 'gradelearner', role: 4 });
    await db()('students').insert({
      studentid,
      studentfirstname: 'Sophea',
      genderid: 2,
      city: 'Phnom Penh',
      country: 'Cambodia',
      state: 'PP',
      curriculumid: ids.reading,
      schooluserid,
      schoolname: 'Demo School',
    });
    const names = async (q: string, who = c.user) => {
      const res = await get(`/grade/all${q}`, who);
      expect(res.status).toBe(200);
      return res.body.data.map((g: { gradename: string }) => g.gradename);
    };
    expect(await names('')).toEqual(['Alpha grade', 'Beta grade']);
    expect(await names('?grade=BETA')).toEqual(['Beta grade']);
    expect(await names(`?curid=${ids.math}`)).toEqual(['Beta grade']);
    expect(await names(`?studentid=${studentid}`)).toEqual(['Alpha grade']);
    // What the report pages send before a learner is picked.
    expect(await names('?grade=&curid=&studentid=string&standardid=&schoolname=string')).toEqual([]);
    // A school teacher sees the grades of the curricula offered in its school's country; one without a school, none.
    await db()('schools').insert({
      schoolid: uuid(),
      schoolname: 'Grade School A',
      countryid: ids.countryA,
      curriculums: JSON.stringify([]),
    });
    await createSchoolUser(db(), { schoolusername: 'gradeteacher', role: 3, schoolname: 'Grade School A' });
    expect(await names('', `Bearer ${(await schoolLogin(c.t.app, 'gradeteacher')).accessToken}`)).toEqual([
      'Beta grade',
    ]);
    await createSchoolUser(db(), { schoolusername: 'nowhereteacher', role: 3 });
    expect(await names('', `Bearer ${(await schoolLogin(c.t.app, 'nowhereteacher')).accessToken}`)).toEqual([]);
    expect((await request(c.t.app).get('/grade/all')).status).toBe(401);
    expect([a.gradeid, b.gradeid]).toHaveLength(2);
  });

  it('a staff account narrowed to a country works on the grades of the curricula offered there only', async () => {
    await clearGrades();
    const mine = await create({ gradename: 'Mine' });
    const other = await create({ gradename: 'Other', curriculumid: ids.reading });
    const scoped = await scopedStaff(c.t, 'grade-scoped', [ids.countryA]);
    expect((await post('/grade', {}, scoped)).body.data.data.map((g: { gradeid: string }) => g.gradeid)).toEqual([
      mine.gradeid,
    ]);
    expect((await get('/grade/all', scoped)).body.data.map((g: { gradeid: string }) => g.gradeid)).toEqual([
      mine.gradeid,
    ]);
    expect((await get(`/grade/${mine.gradeid}`, scoped)).status).toBe(200);
    await expectRefused(
      db(),
      ['grades'],
      [
        ['get other', get(`/grade/${other.gradeid}`, scoped), 400, 'Invalid Grade id'],
        [
          'update other',
          put(`/grade/${other.gradeid}`, body({ gradename: 'Other', curriculumid: ids.reading }), scoped),
          400,
          'Invalid Grade id',
        ],
        [
          'move into other',
          put(`/grade/${mine.gradeid}`, body({ gradename: 'Mine', curriculumid: ids.reading }), scoped),
          400,
          'Invalid Curriculum id',
        ],
        [
          'create in other',
          post('/grade/create', body({ gradename: 'New', curriculumid: ids.reading }), scoped),
          400,
          'Invalid Curriculum id',
        ],
        ['delete other', del(`/grade/${other.gradeid}`, scoped), 400, 'Invalid Grade id'],
        ['deactivate other', put(`/grade/deactivate/${other.gradeid}`, UI_OPTIONS, scoped), 400, 'Invalid Grade id'],
      ],
    );
    expect((await post('/grade/create', body({ gradename: 'New' }), scoped)).status).toBe(200);
  });

  it('refuses bad bodies, taken names and unknown ids with the contract words, writing nothing', async () => {
    await clearGrades();
    const g = await create({ gradename: 'Grade 1' });
    await create({ gradename: 'Grade 2', gradeorder: 2 });
    // The same name in another curriculum is no clash.
    await create({ gradename: 'Grade 1', curriculumid: ids.reading });
    await expectRefused(
      db(),
      ['grades'],
      [
        ['no name', post('/grade/create', body({ gradename: undefined })), 400, '"Grade Name" is required'],
        [
          'short name',
          post('/grade/create', body({ gradename: 'G1' })),
          400,
          '"Grade Name" length must be at least 3 characters long',
        ],
        [
          'long name',
          post('/grade/create', body({ gradename: 'g'.repeat(51) })),
          400,
          '"Grade Name" length must be less than or equal to 50 characters long',
        ],
        ['blank name', post('/grade/create', body({ gradename: '    ' })), 400, 'Grade Name not allowed'],
        [
          'short description',
          post('/grade/create', body({ gradedescription: 'ab' })),
          400,
          '"Grade description" length must be at least 3 characters long',
        ],
        [
          'long description',
          post('/grade/create', body({ gradedescription: 'd'.repeat(501) })),
          400,
          '"Grade description" length must be less than or equal to 500 characters long',
        ],
        ['no order', post('/grade/create', body({ gradeorder: undefined })), 400, '"Grade order" is required'],
        [
          'negative order',
          post('/grade/create', body({ gradeorder: -1 })),
          400,
          '"Grade order" must be greater than or equal to 0',
        ],
        ['fraction order', post('/grade/create', body({ gradeorder: 1.5 })), 400, '"Grade order" must be an integer'],
        [
          'huge order',
          post('/grade/create', body({ gradeorder: 2 ** 31 })),
          400,
          '"Grade order" must be less than or equal to 2147483647',
        ],
        ['no curriculum', post('/grade/create', body({ curriculumid: undefined })), 400, '"Curriculum ID" is required'],
        [
          'bad curriculum',
          post('/grade/create', body({ curriculumid: 'math' })),
          400,
          '"Curriculum ID" must be a valid GUID',
        ],
        [
          'no passing points',
          post('/grade/create', body({ passing_points: undefined })),
          400,
          '"Lesson Grade Passing Points" is required',
        ],
        [
          'word passing points',
          post('/grade/create', body({ passing_points: 'many' })),
          400,
          '"Lesson Grade Passing Points" must be a number',
        ],
        ['unknown key', post('/grade/create', body({ gradestatus: false })), 400, '"gradestatus" is not allowed'],
        [
          'unknown curriculum',
          post('/grade/create', body({ gradename: 'Grade 9', curriculumid: uuid() })),
          400,
          'Invalid Curriculum id',
        ],
        [
          'deleted curriculum',
          post('/grade/create', body({ gradename: 'Grade 9', curriculumid: ids.gone })),
          400,
          'Invalid Curriculum id',
        ],
        ['taken', post('/grade/create', body({ gradename: 'Grade 2' })), 400, 'Grade already exists'],
        ['taken on update', put(`/grade/${g.gradeid}`, body({ gradename: 'Grade 2' })), 400, 'Grade already exists'],
        [
          'taken where it moves',
          put(`/grade/${g.gradeid}`, body({ curriculumid: ids.reading })),
          400,
          'Grade already exists',
        ],
        ['unknown update', put(`/grade/${uuid()}`, body({ gradename: 'Grade 9' })), 400, 'Invalid Grade id'],
        ['unknown get', get(`/grade/${uuid()}`), 400, 'Invalid Grade id'],
        ['unknown delete', del(`/grade/${uuid()}`), 400, 'Invalid Grade id'],
        ['unknown activate', put(`/grade/activate/${uuid()}`, UI_OPTIONS), 400, 'Invalid Grade id'],
        ['unknown deactivate', put(`/grade/deactivate/${uuid()}`, UI_OPTIONS), 400, 'Invalid Grade id'],
        [
          'bad filter key',
          post('/grade', { filter: [{ key: 'curriculumid', value: ids.math }] }),
          400,
          /"filter.0.key" must be one of \[gradename, gradedescription\]/,
        ],
      ],
    );
    // Numbers sent as numeric strings are taken, as Joi took them.
    const res = await put(`/grade/${g.gradeid}`, body({ gradeorder: '4', passing_points: '80' }));
    expect(res.body.data).toMatchObject({ gradeorder: 4, passing_points: 80 });
  });

  it('answers attacks without touching the table', async () => {
    const g = await create({ gradename: 'Attacked', gradeorder: 7 });
    await expectRefused(db(), ['grades'], [
      ['oversize', post('/grade/create', { ...body(), ...oversize() }), 413, 'Request body is too large'],
      ['malformed get', get('/grade/1%20OR%201=1'), 400, '"Grade ID" must be a valid GUID'],
      ['malformed put', put('/grade/xyz', body()), 400, '"Grade ID" must be a valid GUID'],
      ['malformed delete', del('/grade/xyz'), 400, '"Grade ID" must be a valid GUID'],
      ['malformed activate', put('/grade/activate/xyz', UI_OPTIONS), 400, '"Grade ID" must be a valid GUID'],
      ['refresh token', put(`/grade/${g.gradeid}`, body({ gradename: 'Renamed' }), c.refresh), 401, 'Unauthorized'],
      ['teacher deletes', del(`/grade/${g.gradeid}`, c.teacher), 403, 'Forbidden resource'],
      ['user lists', post('/grade', {}, c.user), 403, 'Forbidden resource'],
    ]);
  });

  it.runIf(onPostgres())("a create that races past the check ends as the rule's 400 (PostgreSQL)", async () => {
    const res = await raceWithUncommitted(
      db(),
      'grades',
      { gradeid: uuid(), curriculumid: ids.math, gradename: 'Racing', gradeorder: 1, isdeleted: false },
      () => post('/grade/create', body({ gradename: 'Racing' })),
    );
    expect([res.status, res.body.errormessage]).toEqual([400, 'Grade already exists']);
    expect(await db()('grades').where({ gradename: 'Racing' }).count({ n: '*' }).first()).toMatchObject({ n: 1 });
  });
});
