import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authoring,
  createLesson,
  createLevel,
  curriculumWithGrades,
  expectPointsHold,
  id,
  levelBody,
  oversize,
  snapshot,
  type Authoring,
} from './content';

let a: Authoring;
let g1: string;
let g2: string;
let g3: string;
const api = () => request(a.t.app);
const gradePoints = async (gradeid: string) => Number((await a.db('grades').where({ gradeid }).first('points')).points);

beforeAll(async () => {
  a = await authoring();
  [g1, g2, g3] = await curriculumWithGrades(a.db, 3);
});
afterAll(async () => {
  await a.t.tdb.dispose();
});

const FULL_ROW = [
  'created_at',
  'created_by',
  'deleted_at',
  'deleted_by',
  'gradeid',
  'isdeleted',
  'leveldescription',
  'levelid',
  'levelname',
  'levelorder',
  'levelstatus',
  'passing_points',
  'points',
  'quiz_points',
  'updated_at',
  'updated_by',
];
const ITEM = [
  'gradeid',
  'gradename',
  'isdeleted',
  'leveldescription',
  'levelid',
  'levelname',
  'levelorder',
  'levelstatus',
  'passing_points',
  'quiz_points',
];

describe('POST /level/create', () => {
  it("answers the full row: active, 100 quiz points and 0 to pass whatever was sent; " +
      "the grade's points follow", async () => {
    const res = await api()
      .post('/level/create')
      .set('Authorization', a.auth.super)
      .send(levelBody(g1, { levelname: 'Level A', quiz_points: 7, passing_points: 3 }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(FULL_ROW);
    expect(res.body.data).toMatchObject({
      levelname: 'Level A',
      leveldescription: 'A level',
      gradeid: g1,
      levelorder: 1,
      levelstatus: true,
      isdeleted: false,
      quiz_points: 100,
      passing_points: 0,
      points: 100,
      created_by: a.superId,
    });
    expect(await a.db('levels').where({ levelid: res.body.data.levelid }).first()).toMatchObject({
      quiz_points: 100,
      points: 100,
    });
    expect(await gradePoints(g1)).toBe(100);
  });

  it('takes a missing, null or empty description, a numeric string order and a name in Khmer', async () => {
    for (const [o, description] of [
      [{ leveldescription: undefined }, null],
      [{ leveldescription: null }, null],
      [{ leveldescription: '' }, ''],
    ] as const) {
      const res = await api().post('/level/create').set('Authorization', a.auth.super).send(levelBody(g2, o));
      expect([res.status, res.body.data.leveldescription]).toEqual([200, description]);
    }
    const khmer = await api()
      .post('/level/create')
      .set('Authorization', a.auth.super)
      .send(levelBody(g2, { levelname: 'កម្រិតទី ១', levelorder: '4' }));
    expect([khmer.status, khmer.body.data.levelname, khmer.body.data.levelorder]).toEqual([200, 'កម្រិតទី ១', 4]);
    expect(await gradePoints(g2)).toBe(400);
  });

  it('refuses each bad field and each rule with the contract\'s words, writing nothing', async () => {
    const gone = id();
    await a
      .db('grades')
      .insert({
        gradeid: gone,
        curriculumid: (await a.db('grades').where({ gradeid: g1 }).first()).curriculumid,
        gradename: 'Gone',
        gradeorder: 9,
        isdeleted: true,
      });
    const before = await snapshot(a.db);
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        {},
        '"Level Name" is required, "Level order" is required, "Grade ID" is required, ' +
          '"Lesson Level-Quiz Points" is required, "Lesson Level Passing Points" is required',
      ],
      [levelBody(g1, { levelname: 'ab' }), '"Level Name" length must be at least 3 characters long'],
      [
        levelBody(g1, { levelname: 'x'.repeat(51) }),
        '"Level Name" length must be less than or equal to 50 characters long',
      ],
      [levelBody(g1, { levelname: '    ' }), 'Level Name not allowed'],
      [levelBody(g1, { levelname: '' }), '"Level Name" is not allowed to be empty'],
      [levelBody(g1, { levelname: 5 }), '"Level Name" must be a string'],
      [levelBody(g1, { leveldescription: 'ab' }), '"Level description" length must be at least 3 characters long'],
      [
        levelBody(g1, { leveldescription: 'x'.repeat(501) }),
        '"Level description" length must be less than or equal to 500 characters long',
      ],
      [levelBody(g1, { leveldescription: '    ' }), 'Level description not allowed'],
      [levelBody(g1, { levelorder: -1 }), '"Level order" must be greater than or equal to 0'],
      [levelBody(g1, { levelorder: 1.5 }), '"Level order" must be an integer'],
      [levelBody(g1, { levelorder: 'first' }), '"Level order" must be a number'],
      [levelBody(g1, { gradeid: 'nope' }), '"Grade ID" must be a valid GUID'],
      [levelBody(g1, { quiz_points: 'x' }), '"Lesson Level-Quiz Points" must be a number'],
      [levelBody(g1, { passing_points: null }), '"Lesson Level Passing Points" must be a number'],
      [levelBody(g1, { levelid: id() }), '"levelid" is not allowed'],
      [levelBody(id()), 'Invalid Grade id'],
      [levelBody(gone), 'Invalid Grade id'],
      [levelBody(g1, { levelname: 'Level A' }), 'Level already exists'],
      [levelBody(g1, { levelname: 'LEVEL a' }), 'Level already exists'],
    ];
    for (const [body, message] of cases) {
      const res = await api().post('/level/create').set('Authorization', a.auth.super).send(body);
      expect([res.status, res.body]).toEqual([400, { error: true, errormessage: message, data: false }]);
    }
    expect(await snapshot(a.db)).toEqual(before);
  });

  it('lets the same name live in another grade, and again once the first is deleted', async () => {
    const other = await createLevel(a, g3, { levelname: 'Level A' });
    expect((await api().delete(`/level/${other}`).set('Authorization', a.auth.super)).body).toEqual({
      error: false,
      data: true,
    });
    await createLevel(a, g3, { levelname: 'Level A' });
  });

  it('ends a race for one name as one level and the same 400 for the others, never a 500', async () => {
    const body = levelBody(g3, { levelname: 'Raced level' });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api().post('/level/create').set('Authorization', a.auth.super).send(body)),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    for (const r of answers.filter((x) => x.status === 400)) expect(r.body.errormessage).toBe('Level already exists');
    expect(await a.db('levels').where({ levelname: 'Raced level' }).count({ n: '*' }).first()).toMatchObject({ n: 1 });
  });
});

describe('GET /level/:levelid', () => {
  it('answers the item with its grade\'s name; a teacher may read it', async () => {
    const levelid = await createLevel(a, g1, { levelname: 'Readable', levelorder: 3 });
    const res = await api().get(`/level/${levelid.toUpperCase()}`).set('Authorization', a.auth.teacher);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(ITEM);
    expect(res.body.data).toMatchObject({
      levelid,
      levelname: 'Readable',
      levelorder: 3,
      gradeid: g1,
      gradename: 'Grade 1',
      quiz_points: 100,
      passing_points: 0,
      levelstatus: true,
      isdeleted: false,
    });
  });

  it('refuses a malformed id, an unknown one and a deleted one', async () => {
    const deleted = await createLevel(a, g1);
    await api().delete(`/level/${deleted}`).set('Authorization', a.auth.super);
    expect((await api().get('/level/nope').set('Authorization', a.auth.super)).body.errormessage).toBe(
      '"Level ID" must be a valid GUID',
    );
    for (const levelid of [id(), deleted]) {
      const res = await api().get(`/level/${levelid}`).set('Authorization', a.auth.super);
      expect([res.status, res.body.errormessage]).toEqual([400, 'Invalid Level id']);
    }
  });
});

describe('PUT /level/:levelid', () => {
  it('updates name, description, order and grade; puts the quiz points back to 100; ' +
      'moves the points between grades', async () => {
    const levelid = await createLevel(a, g1, { levelname: 'Mover' });
    await createLesson(a, levelid);
    await a.db('levels').where({ levelid }).update({ quiz_points: 30, passing_points: 5 });
    const [p1, p2] = [await gradePoints(g1), await gradePoints(g2)];
    const res = await api()
      .put(`/level/${levelid}`)
      .set('Authorization', a.auth.super)
      .send(levelBody(g2, { levelname: 'Moved', leveldescription: null, levelorder: 8 }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(FULL_ROW);
    expect(res.body.data).toMatchObject({
      levelid,
      levelname: 'Moved',
      leveldescription: null,
      levelorder: 8,
      gradeid: g2,
      quiz_points: 100,
      passing_points: 0,
      points: 200,
      updated_by: a.superId,
    });
    // The level took 200 points (a lesson and its quiz) out of grade 1 and into grade 2.
    expect([await gradePoints(g1), await gradePoints(g2)]).toEqual([p1 - 200, p2 + 200]);
    // Its own name again is no clash.
    expect(
      (
        await api()
          .put(`/level/${levelid}`)
          .set('Authorization', a.auth.super)
          .send(levelBody(g2, { levelname: 'moved' }))
      ).status,
    ).toBe(200);
    await expectPointsHold(a.db);
  });

  it('refuses unknown levels and grades, a name taken in the target grade and ' +
      'bad fields, writing nothing', async () => {
    const levelid = await createLevel(a, g1, { levelname: 'Stays' });
    await createLevel(a, g2, { levelname: 'Taken' });
    const deleted = await createLevel(a, g1);
    await api().delete(`/level/${deleted}`).set('Authorization', a.auth.super);
    const before = await snapshot(a.db);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [id(), levelBody(g1), 'Invalid Level id'],
      [deleted, levelBody(g1), 'Invalid Level id'],
      [levelid, levelBody(id()), 'Invalid Grade id'],
      [levelid, levelBody(g2, { levelname: 'TAKEN' }), 'Level already exists'],
      [levelid, levelBody(g1, { levelname: 'Level A' }), 'Level already exists'],
      [levelid, levelBody(g1, { levelorder: null }), '"Level order" must be a number'],
      ['nope', levelBody(g1), '"Level ID" must be a valid GUID'],
    ];
    for (const [target, body, message] of cases) {
      const res = await api().put(`/level/${target}`).set('Authorization', a.auth.super).send(body);
      expect([res.status, res.body.errormessage]).toEqual([400, message]);
    }
    expect(await snapshot(a.db)).toEqual(before);
  });
});

describe('DELETE, activate and deactivate', () => {
  it('soft-deletes with the caller recorded; the grade loses the level\'s points; the row stays', async () => {
    const levelid = await createLevel(a, g3);
    await createLesson(a, levelid);
    const before = await gradePoints(g3);
    const res = await api().delete(`/level/${levelid}`).set('Authorization', a.auth.super);
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    expect(await a.db('levels').where({ levelid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: a.superId,
      points: 200,
    });
    expect(await gradePoints(g3)).toBe(before - 200);
    const again = await api().delete(`/level/${levelid}`).set('Authorization', a.auth.super);
    expect([again.status, again.body.errormessage]).toEqual([400, 'Invalid Level id']);
  });

  it('flips the status (the admin UI sends its HTTP options as the body) and nothing else', async () => {
    const levelid = await createLevel(a, g3, { levelname: 'Flipping' });
    const uiBody = { headers: { normalizedNames: {}, lazyUpdate: null } };
    expect(
      (await api().put(`/level/deactivate/${levelid}`).set('Authorization', a.auth.super).send(uiBody)).body,
    ).toEqual({ error: false, data: true });
    expect(await a.db('levels').where({ levelid }).first()).toMatchObject({
      levelstatus: false,
      isdeleted: false,
      points: 100,
    });
    expect(
      (await api().get(`/level/all?gradeid=${g3}`).set('Authorization', a.auth.teacher)).body.data.map(
        (l: { levelid: string }) => l.levelid,
      ),
    ).not.toContain(levelid);
    expect(
      (await api().put(`/level/activate/${levelid}`).set('Authorization', a.auth.super).send(uiBody)).body,
    ).toEqual({ error: false, data: true });
    expect(await a.db('levels').where({ levelid }).first()).toMatchObject({ levelstatus: true });
    for (const path of ['/level/activate/', '/level/deactivate/']) {
      const res = await api().put(`${path}${id()}`).set('Authorization', a.auth.super);
      expect([res.status, res.body.errormessage]).toEqual([400, 'Invalid Level id']);
    }
  });
});

describe('lists', () => {
  it('GET /level/all: active, live levels by name, narrowed by grade and by `level` (or `levelname`)', async () => {
    const g = (await curriculumWithGrades(a.db, 1))[0];
    const b = await createLevel(a, g, { levelname: 'Beta 50%' });
    const alpha = await createLevel(a, g, { levelname: 'Alpha' });
    const off = await createLevel(a, g, { levelname: 'Off' });
    await api().put(`/level/deactivate/${off}`).set('Authorization', a.auth.super);
    const names = async (q: string) =>
      (await api().get(`/level/all?${q}`).set('Authorization', a.auth.teacher)).body.data.map(
        (l: { levelname: string }) => l.levelname,
      );
    expect(await names(`gradeid=${g}&level=`)).toEqual(['Alpha', 'Beta 50%']);
    expect(await names(`gradeid=${g}&level=%20alp`)).toEqual(['Alpha']);
    expect(await names(`gradeid=${g}&levelname=50%25`)).toEqual(['Beta 50%']);
    expect(await names(`gradeid=${g}&level=5_%25`)).toEqual([]);
    expect(await names('level=string')).toEqual([]);
    const row = (await api().get(`/level/all?gradeid=${g}`).set('Authorization', a.auth.teacher)).body.data[0];
    expect(Object.keys(row).sort()).toEqual(FULL_ROW);
    expect(row).toMatchObject({ levelid: alpha, levelstatus: true });
    expect(b).toBeTruthy();
    expect((await api().get('/level/all')).status).toBe(401);
  });

  it('POST /level: live levels by grade then order, ' +
      'filtered by levelname/leveldescription, the page echoed', async () => {
    const g = (await curriculumWithGrades(a.db, 1))[0];
    const third = await createLevel(a, g, { levelname: 'Paged three', levelorder: 3 });
    const first = await createLevel(a, g, { levelname: 'Paged one', levelorder: 1, leveldescription: 'special' });
    const second = await createLevel(a, g, { levelname: 'Paged two', levelorder: 2 });
    const gone = await createLevel(a, g, { levelname: 'Paged gone', levelorder: 0 });
    await api().delete(`/level/${gone}`).set('Authorization', a.auth.super);
    const page = await api()
      .post('/level')
      .set('Authorization', a.auth.teacher)
      .send({ filter: [{ key: 'levelname', value: 'Paged' }], pageindex: 1, pagesize: 2 });
    expect(page.status).toBe(200);
    expect(page.body.data).toMatchObject({ total: 3, pageindex: 1, pagesize: 2 });
    expect(page.body.data.data.map((l: { levelid: string }) => l.levelid)).toEqual([first, second]);
    expect(Object.keys(page.body.data.data[0]).sort()).toEqual(ITEM);
    expect(page.body.data.data[0].gradename).toBe('Grade 1');
    const next = await api()
      .post('/level')
      .set('Authorization', a.auth.teacher)
      .send({ filter: [{ key: 'levelname', value: 'Paged' }], pageindex: 2, pagesize: 2 });
    expect(next.body.data.data.map((l: { levelid: string }) => l.levelid)).toEqual([third]);
    const described = await api()
      .post('/level')
      .set('Authorization', a.auth.teacher)
      .send({ filter: [{ key: 'leveldescription', value: 'SPECIAL' }] });
    expect([described.body.data.total, described.body.data.pageindex, described.body.data.pagesize]).toEqual([1, 0, 0]);
    const bad = await api()
      .post('/level')
      .set('Authorization', a.auth.teacher)
      .send({ filter: [{ key: 'gradeid', value: g }] });
    expect(bad.status).toBe(400);
    expect(
      (await api().post('/level').set('Authorization', a.auth.teacher).send({ search: 'x' })).body.errormessage,
    ).toBe('"search" is not allowed');
  });
});

describe('POST /level/update_quiz_points', () => {
  it('answers 201 `updated levels`: every active, live level back to 100 quiz points, ' +
      'levels and grades recomputed', async () => {
    const g = (await curriculumWithGrades(a.db, 1))[0];
    const on = await createLevel(a, g);
    const off = await createLevel(a, g);
    await createLesson(a, on);
    await api().put(`/level/deactivate/${off}`).set('Authorization', a.auth.super);
    await a.db('levels').whereIn('levelid', [on, off]).update({ quiz_points: 40 });
    const res = await api().post('/level/update_quiz_points').set('Authorization', a.auth.super).send({});
    expect([res.status, res.body]).toEqual([201, { error: false, data: 'updated levels' }]);
    expect(await a.db('levels').where({ levelid: on }).first()).toMatchObject({
      quiz_points: 100,
      points: 200,
      updated_by: a.superId,
    });
    expect(await a.db('levels').where({ levelid: off }).first()).toMatchObject({ quiz_points: 40 });
    // The inactive level still counts in its grade, with what its row holds.
    expect(await gradePoints(g)).toBe(200 + 100);
    await a.db('levels').where({ levelid: off }).update({ quiz_points: 100 });
    await api().post('/level/update_quiz_points').set('Authorization', a.auth.super);
    await expectPointsHold(a.db);
  });

  it('recomputes a large curriculum in a bounded number of statements', async () => {
    const n = await (async () => {
      let q = 0;
      const on = () => { q += 1; };
      a.db.on('query', on);
      await api().post('/level/update_quiz_points').set('Authorization', a.auth.super);
      a.db.off('query', on);
      return q;
    })();
    const g = (await curriculumWithGrades(a.db, 1))[0];
    for (let i = 0; i < 30; i += 1) await createLevel(a, g);
    let q = 0;
    const on = () => { q += 1; };
    a.db.on('query', on);
    await api().post('/level/update_quiz_points').set('Authorization', a.auth.super);
    a.db.off('query', on);
    expect(q).toBeLessThanOrEqual(n + 2);
  });
});

describe('attacks', () => {
  it('refuses an oversized body (413), a wrong token type and no token (401), a missing permission (403)', async () => {
    const before = await snapshot(a.db);
    expect((await api().post('/level/create').set('Authorization', a.auth.super).send(oversize())).status).toBe(413);
    expect(
      (await api().post('/level/create').set('Authorization', `Bearer ${a.refresh}`).send(levelBody(g1))).status,
    ).toBe(401);
    expect((await api().post('/level/create').send(levelBody(g1))).status).toBe(401);
    expect((await api().post('/level/create').set('Authorization', a.auth.teacher).send(levelBody(g1))).status).toBe(
      403,
    );
    expect((await api().post('/level/update_quiz_points').set('Authorization', a.auth.teacher)).status).toBe(403);
    expect((await api().get(`/level/${id()}`).set('Authorization', a.auth.none)).status).toBe(403);
    expect((await api().delete('/level/1%20OR%201=1').set('Authorization', a.auth.super)).body.errormessage).toBe(
      '"Level ID" must be a valid GUID',
    );
    expect((await api().put('/level/activate/%E0%A4%A').set('Authorization', a.auth.super)).status).toBe(400);
    expect(await snapshot(a.db)).toEqual(before);
    await expectPointsHold(a.db);
  });
});
