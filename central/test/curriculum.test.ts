import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
const ids = { cambodia: uuid(), kenya: uuid(), gone: uuid(), math: uuid(), oldSubject: uuid() };
beforeAll(async () => {
  c = await authoringApp();
  const db = c.t.tdb.db;
  await db('countries').insert([
    { countryid: ids.cambodia, countryname: 'កម្ពុជា', isdeleted: false },
    { countryid: ids.kenya, countryname: 'Kenya', isdeleted: false },
    { countryid: ids.gone, countryname: 'Atlantis', isdeleted: true },
  ]);
  await db('subjects').insert([
    { subjectid: ids.math, subjectname: 'Mathematics', isdeleted: false },
    { subjectid: ids.oldSubject, subjectname: 'Old subject', isdeleted: true },
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
const UI_OPTIONS = { headers: { normalizedNames: {}, lazyUpdate: null } };
const body = (o: Record<string, unknown> = {}) => ({
  curriculumname: 'Primary Math',
  curriculumdescription: 'Numbers',
  countryid: [ids.kenya],
  subjectid: ids.math,
  ...o,
});
const create = async (o: Record<string, unknown> = {}) => {
  const res = await post('/curriculum/create', body(o));
  expect([res.status, res.body.errormessage]).toEqual([200, undefined]);
  return res.body.data as { curriculumid: string };
};
const TABLES = ['curriculums', 'curriculumcountry'];

/** Deletes every curriculum and what hangs under it. */
async function clear(): Promise<void> {
  for (const t of [
    'lessonquizzes',
    'lessonpractices',
    'lessons',
    'levels',
    'grades',
    'curriculumcountry',
    'curriculums',
  ])
    await db()(t).del();
}

/**
 * A curriculum's content inserted directly (the level and lesson routes are not what is tested here):
 * `shape` grades x levels x lessons, each lesson with one quiz and one practice, orders reversed against
 * insertion so that only ordering by the order columns gives the right answer.
 */
const planted = new Map<string, number>();
async function plant(curriculumid: string, shape: [grades: number, levels: number, lessons: number]) {
  const [g, l, s] = shape;
  // A second planting in the same curriculum gets other grade names (they are unique per curriculum).
  const round = planted.get(curriculumid) ?? 0;
  planted.set(curriculumid, round + 1);
  const prefix = round ? `R${round}-` : '';
  const rows: Record<string, Array<Record<string, unknown>>> = {
    grades: [],
    levels: [],
    lessons: [],
    lessonquizzes: [],
    lessonpractices: [],
  };
  for (let gi = g; gi >= 1; gi -= 1) {
    const gradeid = uuid();
    rows.grades.push({ gradeid, curriculumid, gradename: `${prefix}G${gi}`, gradeorder: gi, isdeleted: false });
    for (let li = l; li >= 1; li -= 1) {
      const levelid = uuid();
      rows.levels.push({ levelid, gradeid, levelname: `G${gi}L${li}`, levelorder: li, isdeleted: false });
      for (let si = s; si >= 1; si -= 1) {
        const lessonid = uuid();
        rows.lessons.push({ lessonid, levelid, lessonname: `G${gi}L${li}S${si}`, lessonorder: si, isdeleted: false });
        for (const o of [2, 1]) {
          rows.lessonquizzes.push({
            lessonquizid: uuid(),
            lessonid,
            lessonquizorder: o,
            lessonquizname: `Q${o}`,
            lessonquizdescription: 'q',
          });
          rows.lessonpractices.push({
            lessonpracticeid: uuid(),
            lessonid,
            lessonpracticeorder: o,
            lessonpracticename: `P${o}`,
            lessonpracticedescription: 'p',
          });
        }
      }
    }
  }
  for (const [table, list] of Object.entries(rows))
    if (list.length) await db().batchInsert(table, list as never[], 200);
}

/**
 * Counts the statements the database runs while `fn` runs: every
 * connection Knex takes, and every read on SQLite's reading connection.
 */
async function statements(fn: () => Promise<unknown>): Promise<number> {
  const client = db().client as unknown as {
    acquireConnection(): Promise<unknown>;
    readConnection?: () => { prepare(sql: string): unknown } | undefined;
  };
  let n = 0;
  const acquire = client.acquireConnection;
  client.acquireConnection = function (this: unknown) { n += 1; return acquire.call(this); };
  const reader = client.readConnection?.();
  const prepare = reader?.prepare;
  if (reader && prepare) reader.prepare = (sql: string) => { n += 1; return prepare.call(reader, sql); };
  try {
    await fn();
  } finally {
    client.acquireConnection = acquire;
    if (reader && prepare) reader.prepare = prepare;
  }
  return n;
}

const names = (rows: Array<Record<string, unknown>>, key: string) => rows.map((r) => r[key]);

describe('/curriculum', () => {
  it('POST /curriculum/create writes the curriculum and the countries it is offered in, and answers both', async () => {
    const res = await post(
      '/curriculum/create',
      body({ countryid: [ids.kenya, ids.cambodia, ids.kenya], curriculumdescription: '' }),
    );
    expect(res.body).toEqual({
      error: false,
      data: expect.objectContaining({
        curriculumid: expect.any(String),
        curriculumname: 'Primary Math',
        curriculumdescription: '',
        subjectid: ids.math,
        curriculumstatus: true,
        isdeleted: false,
        created_by: c.adminId,
        countryid: [ids.cambodia, ids.kenya].sort(),
      }),
    });
    const { curriculumid } = res.body.data;
    expect(
      (await db()('curriculumcountry').where({ curriculumid }).orderBy('countryid').select('countryid')).map(
        (r: { countryid: string }) => r.countryid,
      ),
    ).toEqual([ids.cambodia, ids.kenya].sort());
    // Offered nowhere is allowed (the original's schema asked for a list, not a non-empty one).
    const nowhere = await create({ curriculumname: 'Nowhere Math', countryid: [] });
    expect((await get(`/curriculum/${nowhere.curriculumid}`)).body.data.countryid).toEqual([]);
  });

  it('round-trips Khmer names, and the list answers subject and country NAMES', async () => {
    await clear();
    const { curriculumid } = await create({
      curriculumname: KHMER.curriculum,
      curriculumdescription: 'សម្រាប់ថ្នាក់ទី១',
      countryid: [ids.cambodia, ids.kenya],
    });
    expect((await get(`/curriculum/${curriculumid}`)).body.data).toMatchObject({
      curriculumname: KHMER.curriculum,
      curriculumdescription: 'សម្រាប់ថ្នាក់ទី១',
    });
    const page = await post('/curriculum', {
      filter: [{ key: 'curriculumname', value: 'គណិត' }],
      pageindex: 1,
      pagesize: 10,
    });
    expect(page.body.data).toEqual({
      data: [
        expect.objectContaining({
          curriculumid,
          curriculumname: KHMER.curriculum,
          subjectid: 'Mathematics',
          countryid: ['Kenya', 'កម្ពុជា'],
        }),
      ],
      total: 1,
      pageindex: 1,
      pagesize: 10,
    });
  });

  it('POST /curriculum: live curricula by name, paged, filtered; ' +
      'names read in a fixed number of statements', async () => {
    await clear();
    for (const n of ['Gamma', 'Alpha', 'Beta'])
      await create({
        curriculumname: `${n} curriculum`,
        curriculumdescription: `${n} description`,
        countryid: [ids.kenya, ids.cambodia],
      });
    const gone = await create({ curriculumname: 'Deleted curriculum' });
    await del(`/curriculum/${gone.curriculumid}`);
    const page = (await post('/curriculum', { pagesize: 200 })).body.data;
    expect(names(page.data, 'curriculumname')).toEqual(['Alpha curriculum', 'Beta curriculum', 'Gamma curriculum']);
    expect(page).toMatchObject({ total: 3, pageindex: 0, pagesize: 200 });
    for (const row of page.data)
      expect(row).toMatchObject({
        subjectid: 'Mathematics',
        countryid: ['Kenya', 'កម្ពុជា'],
        isdeleted: false,
        curriculumstatus: true,
      });
    expect(names((await post('/curriculum', { pageindex: 2, pagesize: 2 })).body.data.data, 'curriculumname')).toEqual([
      'Gamma curriculum',
    ]);
    expect(
      names(
        (await post('/curriculum', { filter: [{ key: 'curriculumdescription', value: 'BETA' }] })).body.data.data,
        'curriculumname',
      ),
    ).toEqual(['Beta curriculum']);
    const few = await statements(() => post('/curriculum', { pagesize: 1 }));
    const many = await statements(() => post('/curriculum', { pagesize: 3 }));
    expect(many).toBe(few);
    expect(few).toBeGreaterThanOrEqual(4);
  });

  it('GET, PUT (countries replaced), activate, ' +
      'deactivate and DELETE (offered nowhere after) do what they say', async () => {
    await clear();
    const { curriculumid } = await create();
    const updated = await put(
      `/curriculum/${curriculumid}`,
      body({ curriculumname: 'Primary Math 2', curriculumdescription: null, countryid: [ids.cambodia] }),
    );
    expect(updated.body.data).toMatchObject({
      curriculumid,
      curriculumname: 'Primary Math 2',
      curriculumdescription: null,
      countryid: [ids.cambodia],
      updated_by: c.adminId,
    });
    expect(await db()('curriculumcountry').where({ curriculumid }).select('countryid')).toEqual([
      { countryid: ids.cambodia },
    ]);
    expect((await put(`/curriculum/deactivate/${curriculumid}`, UI_OPTIONS)).body).toEqual({
      error: false,
      data: true,
    });
    expect((await db()('curriculums').where({ curriculumid }).first()).curriculumstatus).toBe(false);
    expect((await put(`/curriculum/activate/${curriculumid}`, UI_OPTIONS)).body).toEqual({ error: false, data: true });
    expect((await get(`/curriculum/${curriculumid}`)).body.data).toMatchObject({
      curriculumstatus: true,
      countryid: [ids.cambodia],
    });
    expect((await del(`/curriculum/${curriculumid}`)).body).toEqual({ error: false, data: true });
    expect(await db()('curriculums').where({ curriculumid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: c.adminId,
      deleted_at: expect.any(String),
    });
    expect(await db()('curriculumcountry').where({ curriculumid }).select()).toEqual([]);
    await expectRefused(db(), TABLES, [
      ['get deleted', get(`/curriculum/${curriculumid}`), 400, 'Invalid Curriculum id'],
      [
        'update deleted',
        put(`/curriculum/${curriculumid}`, body({ curriculumname: 'Again' })),
        400,
        'Invalid Curriculum id',
      ],
      ['activate deleted', put(`/curriculum/activate/${curriculumid}`, UI_OPTIONS), 400, 'Invalid Curriculum id'],
      ['tree of deleted', get(`/curriculum/tree/${curriculumid}`), 400, 'Invalid Curriculum id'],
      ['delete again', del(`/curriculum/${curriculumid}`), 400, 'Invalid Curriculum id'],
    ]);
    // Its name is free again.
    await create({ curriculumname: 'Primary Math 2' });
  });

  it('GET /curriculum/tree nests grades, levels, lessons, quizzes and practices, each by its order, ' +
      'in a fixed number of statements', async () => {
    await clear();
    const big = await create({ curriculumname: 'B big' });
    const small = await create({ curriculumname: 'A small' });
    await plant(big.curriculumid, [3, 2, 3]);
    await plant(small.curriculumid, [1, 1, 1]);
    // A deleted level stays in the tree with its flag, as in the original.
    const deletedLevel = await db()('levels').where({ levelname: 'G1L2' }).first();
    await db()('levels').where({ levelid: deletedLevel.levelid }).update({ isdeleted: true });

    const res = await get('/curriculum/tree');
    expect(res.status).toBe(200);
    const tree = res.body.data;
    expect(names(tree, 'curriculumname')).toEqual(['A small', 'B big']);
    const b = tree[1];
    expect(b).toMatchObject({ curriculumid: big.curriculumid, subjectid: ids.math, curriculumstatus: true });
    expect(names(b.grades, 'gradename')).toEqual(['G1', 'G2', 'G3']);
    expect(names(b.grades[0].levels, 'levelname')).toEqual(['G1L1', 'G1L2']);
    expect(b.grades[0].levels[1]).toMatchObject({ levelid: deletedLevel.levelid, isdeleted: true });
    const lessons = b.grades[2].levels[1].lessons;
    expect(names(lessons, 'lessonname')).toEqual(['G3L2S1', 'G3L2S2', 'G3L2S3']);
    expect(names(lessons[0].quizzes, 'lessonquizname')).toEqual(['Q1', 'Q2']);
    expect(names(lessons[0].practices, 'lessonpracticename')).toEqual(['P1', 'P2']);
    expect(lessons[0]).toMatchObject({
      lessonid: expect.any(String),
      levelid: b.grades[2].levels[1].levelid,
      lessonstatus: true,
      total_points: null,
    });
    expect(lessons[0].quizzes[0]).toMatchObject({
      lessonid: lessons[0].lessonid,
      lessonquizorder: 1,
      lessonquizstatus: true,
    });

    const one = await get(`/curriculum/tree/${small.curriculumid}`);
    expect(names(one.body.data, 'curriculumid')).toEqual([small.curriculumid]);
    expect(one.body.data[0].grades[0].levels[0].lessons[0].quizzes).toHaveLength(2);

    const smallCount = await statements(() => get(`/curriculum/tree/${small.curriculumid}`));
    const bigCount = await statements(() => get(`/curriculum/tree/${big.curriculumid}`));
    expect(bigCount).toBe(smallCount);
    // The six tables, the curriculum's check, the caller's session: a handful, not one per row.
    expect(smallCount).toBeGreaterThanOrEqual(7);
    expect(smallCount).toBeLessThanOrEqual(10);
    const before = await statements(() => get('/curriculum/tree'));
    await plant(small.curriculumid, [2, 2, 2]);
    expect(await statements(() => get('/curriculum/tree'))).toBe(before);
  });

  it('GET /curriculum/map answers the flat lists, for view_curriculum or view_lesson, ' +
      'in a fixed number of statements', async () => {
    await clear();
    const { curriculumid } = await create({ curriculumname: 'Mapped' });
    await plant(curriculumid, [2, 1, 2]);
    const res = await get('/curriculum/map', c.teacher);
    expect(Object.keys(res.body.data).sort()).toEqual([
      'curriculums',
      'grades',
      'lessonpractices',
      'lessonquizzes',
      'lessons',
      'levels',
    ]);
    expect(res.body.data).toMatchObject({
      curriculums: [expect.objectContaining({ curriculumid, curriculumname: 'Mapped' })],
      grades: [expect.objectContaining({ gradename: 'G1' }), expect.objectContaining({ gradename: 'G2' })],
    });
    expect([
      res.body.data.levels.length,
      res.body.data.lessons.length,
      res.body.data.lessonquizzes.length,
      res.body.data.lessonpractices.length,
    ]).toEqual([2, 4, 8, 8]);
    const before = await statements(() => get('/curriculum/map'));
    await plant(curriculumid, [3, 3, 3]);
    expect(await statements(() => get('/curriculum/map'))).toBe(before);
  });

  it('a staff account narrowed to a country sees and changes only the curricula offered there', async () => {
    await clear();
    const mine = await create({ curriculumname: 'Cambodian', countryid: [ids.cambodia] });
    const theirs = await create({ curriculumname: 'Kenyan', countryid: [ids.kenya] });
    const scoped = await scopedStaff(c.t, 'curriculum-scoped', [ids.cambodia]);
    expect(names((await post('/curriculum', {}, scoped)).body.data.data, 'curriculumid')).toEqual([mine.curriculumid]);
    expect(names((await get('/curriculum/tree', scoped)).body.data, 'curriculumid')).toEqual([mine.curriculumid]);
    expect(names((await get('/curriculum/map', scoped)).body.data.curriculums, 'curriculumid')).toEqual([
      mine.curriculumid,
    ]);
    expect((await get(`/curriculum/${mine.curriculumid}`, scoped)).status).toBe(200);
    await expectRefused(db(), TABLES, [
      ['get theirs', get(`/curriculum/${theirs.curriculumid}`, scoped), 400, 'Invalid Curriculum id'],
      ['tree of theirs', get(`/curriculum/tree/${theirs.curriculumid}`, scoped), 400, 'Invalid Curriculum id'],
      [
        'update theirs',
        put(
          `/curriculum/${theirs.curriculumid}`,
          body({ curriculumname: 'Kenyan', countryid: [ids.cambodia] }),
          scoped,
        ),
        400,
        'Invalid Curriculum id',
      ],
      [
        'deactivate theirs',
        put(`/curriculum/deactivate/${theirs.curriculumid}`, UI_OPTIONS, scoped),
        400,
        'Invalid Curriculum id',
      ],
      ['delete theirs', del(`/curriculum/${theirs.curriculumid}`, scoped), 400, 'Invalid Curriculum id'],
      [
        'offer elsewhere',
        post('/curriculum/create', body({ curriculumname: 'Elsewhere', countryid: [ids.kenya] }), scoped),
        400,
        'some country not found',
      ],
      [
        'move elsewhere',
        put(`/curriculum/${mine.curriculumid}`, body({ curriculumname: 'Cambodian', countryid: [ids.kenya] }), scoped),
        400,
        'some country not found',
      ],
    ]);
    expect(
      (await post('/curriculum/create', body({ curriculumname: 'Cambodian 2', countryid: [ids.cambodia] }), scoped))
        .status,
    ).toBe(200);
  });

  it('refuses bad bodies, unknown subjects and countries, ' +
      'taken names and unknown ids with the contract words, writing nothing', async () => {
    await clear();
    const a = await create({ curriculumname: 'First curriculum' });
    await create({ curriculumname: 'Second curriculum' });
    await expectRefused(db(), TABLES, [
      [
        'no name',
        post('/curriculum/create', body({ curriculumname: undefined })),
        400,
        '"Curriculum Name" is required',
      ],
      [
        'short name',
        post('/curriculum/create', body({ curriculumname: 'ab' })),
        400,
        '"Curriculum Name" length must be at least 3 characters long',
      ],
      [
        'long name',
        post('/curriculum/create', body({ curriculumname: 'c'.repeat(51) })),
        400,
        '"Curriculum Name" length must be less than or equal to 50 characters long',
      ],
      ['blank name', post('/curriculum/create', body({ curriculumname: '     ' })), 400, 'Curriculum Name not allowed'],
      [
        'short description',
        post('/curriculum/create', body({ curriculumdescription: 'ab' })),
        400,
        '"Curriculum description" length must be at least 3 characters long',
      ],
      [
        'blank description',
        post('/curriculum/create', body({ curriculumdescription: '    ' })),
        400,
        'Curriculum description not allowed',
      ],
      ['no countries', post('/curriculum/create', body({ countryid: undefined })), 400, '"Country Id" is required'],
      [
        'countries not a list',
        post('/curriculum/create', body({ countryid: ids.kenya })),
        400,
        '"Country Id" must be an array',
      ],
      [
        'country not a string',
        post('/curriculum/create', body({ countryid: [42] })),
        400,
        '"countryid.0" must be a string',
      ],
      [
        'too many countries',
        post('/curriculum/create', body({ countryid: Array.from({ length: 501 }, uuid) })),
        400,
        '"Country Id" must contain less than or equal to 500 items',
      ],
      ['no subject', post('/curriculum/create', body({ subjectid: undefined })), 400, '"Subject ID" is required'],
      [
        'malformed subject',
        post('/curriculum/create', body({ subjectid: 'math' })),
        400,
        '"Subject ID" must be a valid GUID',
      ],
      [
        'unknown key',
        post('/curriculum/create', body({ curriculumstatus: false })),
        400,
        '"curriculumstatus" is not allowed',
      ],
      [
        'unknown subject',
        post('/curriculum/create', body({ curriculumname: 'Third curriculum', subjectid: uuid() })),
        400,
        'Invalid Subject',
      ],
      [
        'deleted subject',
        post('/curriculum/create', body({ curriculumname: 'Third curriculum', subjectid: ids.oldSubject })),
        400,
        'Invalid Subject',
      ],
      [
        'unknown country',
        post('/curriculum/create', body({ curriculumname: 'Third curriculum', countryid: [ids.kenya, uuid()] })),
        400,
        'some country not found',
      ],
      [
        'deleted country',
        post('/curriculum/create', body({ curriculumname: 'Third curriculum', countryid: [ids.gone] })),
        400,
        'some country not found',
      ],
      [
        'taken',
        post('/curriculum/create', body({ curriculumname: 'Second curriculum' })),
        400,
        'Curriculum already exists',
      ],
      [
        'taken on update',
        put(`/curriculum/${a.curriculumid}`, body({ curriculumname: 'Second curriculum' })),
        400,
        'Curriculum already exists',
      ],
      [
        'unknown subject on update',
        put(`/curriculum/${a.curriculumid}`, body({ curriculumname: 'First curriculum', subjectid: uuid() })),
        400,
        'Invalid Subject',
      ],
      [
        'unknown country on update',
        put(`/curriculum/${a.curriculumid}`, body({ curriculumname: 'First curriculum', countryid: ['nowhere'] })),
        400,
        'some country not found',
      ],
      [
        'unknown update',
        put(`/curriculum/${uuid()}`, body({ curriculumname: 'Third curriculum' })),
        400,
        'Invalid Curriculum id',
      ],
      ['unknown get', get(`/curriculum/${uuid()}`), 400, 'Invalid Curriculum id'],
      ['unknown tree', get(`/curriculum/tree/${uuid()}`), 400, 'Invalid Curriculum id'],
      ['unknown delete', del(`/curriculum/${uuid()}`), 400, 'Invalid Curriculum id'],
      ['unknown activate', put(`/curriculum/activate/${uuid()}`, UI_OPTIONS), 400, 'Invalid Curriculum id'],
      ['unknown deactivate', put(`/curriculum/deactivate/${uuid()}`, UI_OPTIONS), 400, 'Invalid Curriculum id'],
      [
        'bad filter key',
        post('/curriculum', { filter: [{ key: 'subjectid', value: 'x' }] }),
        400,
        /"filter.0.key" must be one of \[curriculumname, curriculumdescription\]/,
      ],
    ]);
    // The subject must not vanish under a curriculum: deleting it is refused while a live curriculum teaches it.
    expect((await del(`/subject/${ids.math}`)).body.errormessage).toBe('Subject is assigned to a curriculum.');
  });

  it('answers attacks without touching the tables', async () => {
    const a = await create({ curriculumname: 'Attacked curriculum' });
    await expectRefused(db(), TABLES, [
      ['oversize', post('/curriculum/create', { ...body(), ...oversize() }), 413, 'Request body is too large'],
      ['malformed get', get('/curriculum/..%2Fetc'), 400, '"Curriculum ID" must be a valid GUID'],
      ['malformed tree', get('/curriculum/tree/abc'), 400, '"Curriculum ID" must be a valid GUID'],
      ['malformed put', put('/curriculum/abc', body()), 400, '"Curriculum ID" must be a valid GUID'],
      ['malformed delete', del('/curriculum/abc'), 400, '"Curriculum ID" must be a valid GUID'],
      ['refresh token', del(`/curriculum/${a.curriculumid}`, c.refresh), 401, 'Unauthorized'],
      ['anonymous tree', request(c.t.app).get('/curriculum/tree'), 401, 'Unauthorized'],
      [
        'teacher creates',
        post('/curriculum/create', body({ curriculumname: 'Teacher curriculum' }), c.teacher),
        403,
        'Forbidden resource',
      ],
      ['user reads the map', get('/curriculum/map', c.user), 403, 'Forbidden resource'],
    ]);
  });

  it.runIf(onPostgres())("a create that races past the check ends as the rule's 400 (PostgreSQL)", async () => {
    const res = await raceWithUncommitted(
      db(),
      'curriculums',
      { curriculumid: uuid(), curriculumname: 'Racing curriculum', subjectid: ids.math, isdeleted: false },
      () => post('/curriculum/create', body({ curriculumname: 'Racing curriculum' })),
    );
    expect([res.status, res.body.errormessage]).toEqual([400, 'Curriculum already exists']);
    expect(
      await db()('curriculums').where({ curriculumname: 'Racing curriculum' }).count({ n: '*' }).first(),
    ).toMatchObject({ n: 1 });
    expect(
      await db()('curriculumcountry').whereNotIn('curriculumid', db()('curriculums').select('curriculumid')).select(),
    ).toEqual([]);
  });
});
