import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authoring,
  createLesson,
  createLevel,
  curriculumWithGrades,
  document,
  expectPointsHold,
  id,
  lessonBody,
  snapshot,
  type Authoring,
} from './content';

let a: Authoring;
let grade: string;
let v1: string;
let v2: string;
const api = () => request(a.t.app);
const points = async (table: 'levels' | 'grades', key: string, value: string) =>
  Number(
    (
      await a
        .db(table)
        .where({ [key]: value })
        .first('points')
    ).points,
  );

beforeAll(async () => {
  a = await authoring();
  [grade] = await curriculumWithGrades(a.db, 1);
  v1 = await createLevel(a, grade, { levelname: 'Level one' });
  v2 = await createLevel(a, grade, { levelname: 'Level two' });
});
afterAll(async () => {
  await a.t.tdb.dispose();
});

const FULL_ROW = [
  'brick_points',
  'created_at',
  'created_by',
  'deleted_at',
  'deleted_by',
  'isdeleted',
  'learning_points',
  'lessondescription',
  'lessonid',
  'lessonname',
  'lessonorder',
  'lessonpasspercentage',
  'lessonstatus',
  'levelid',
  'passing_points',
  'practicecount',
  'practices_points',
  'quizcount',
  'quizzes_points',
  'total_points',
  'updated_at',
  'updated_by',
];
const ITEM = [
  'isdeleted',
  'learning_points',
  'lessondescription',
  'lessonid',
  'lessonname',
  'lessonorder',
  'lessonstatus',
  'levelid',
  'levelname',
  'passing_points',
  'total_points',
];

describe('POST /lesson/create', () => {
  it('answers the full row: active, 100 points, 0 to pass, 80 %, ' +
      'whatever points were sent; level and grade follow', async () => {
    const [l1, g] = [await points('levels', 'levelid', v1), await points('grades', 'gradeid', grade)];
    const res = await api()
      .post('/lesson/create')
      .set('Authorization', a.auth.super)
      .send(lessonBody(v1, { lessonname: 'Counting', total_points: 55, passing_points: 9 }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(FULL_ROW);
    expect(res.body.data).toMatchObject({
      lessonname: 'Counting',
      lessondescription: 'A lesson',
      levelid: v1,
      lessonorder: 1,
      lessonstatus: true,
      isdeleted: false,
      total_points: 100,
      passing_points: 0,
      lessonpasspercentage: 80,
      practicecount: 0,
      quizcount: 0,
      brick_points: 0,
      learning_points: 0,
      practices_points: 0,
      quizzes_points: 0,
      created_by: a.superId,
    });
    expect([await points('levels', 'levelid', v1), await points('grades', 'gradeid', grade)]).toEqual([
      l1 + 100,
      g + 100,
    ]);
  });

  it('refuses each bad field and each rule with the contract\'s words, writing nothing', async () => {
    const gone = await createLevel(a, grade);
    await api().delete(`/level/${gone}`).set('Authorization', a.auth.super);
    const before = await snapshot(a.db);
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        {},
        '"Lesson Name" is required, "Lesson order" is required, "Total Points" is required, "level ID" is required, ' +
          '"Lesson Lesson Passing Points" is required',
      ],
      [lessonBody(v1, { lessonname: 'ab' }), '"Lesson Name" length must be at least 3 characters long'],
      [
        lessonBody(v1, { lessonname: 'x'.repeat(51) }),
        '"Lesson Name" length must be less than or equal to 50 characters long',
      ],
      [lessonBody(v1, { lessonname: '     ' }), 'Lesson Name not allowed'],
      [lessonBody(v1, { lessondescription: 'ab' }), '"Lesson description" length must be at least 3 characters long'],
      [
        lessonBody(v1, { lessondescription: 'x'.repeat(501) }),
        '"Lesson description" length must be less than or equal to 500 characters long',
      ],
      [lessonBody(v1, { lessondescription: '   ' }), 'Lesson description not allowed'],
      [lessonBody(v1, { lessonorder: -2 }), '"Lesson order" must be greater than or equal to 0'],
      [lessonBody(v1, { lessonorder: 0.5 }), '"Lesson order" must be an integer'],
      [lessonBody(v1, { total_points: -1 }), '"Total Points" must be greater than or equal to 0'],
      [lessonBody(v1, { total_points: 'all' }), '"Total Points" must be a number'],
      [lessonBody(v1, { passing_points: 'x' }), '"Lesson Lesson Passing Points" must be a number'],
      [lessonBody('1234'), '"level ID" must be a valid GUID'],
      [lessonBody(v1, { lessonstatus: true }), '"lessonstatus" is not allowed'],
      [lessonBody(id()), 'Invalid Level id'],
      [lessonBody(gone), 'Invalid Level id'],
      [lessonBody(v1, { lessonname: 'counting' }), 'Lesson already exists'],
    ];
    for (const [body, message] of cases) {
      const res = await api().post('/lesson/create').set('Authorization', a.auth.super).send(body);
      expect([res.status, res.body]).toEqual([400, { error: true, errormessage: message, data: false }]);
    }
    expect(await snapshot(a.db)).toEqual(before);
  });

  it('lets the name live in another level, and again once the first is deleted', async () => {
    const other = await createLesson(a, v2, { lessonname: 'Counting' });
    await api().delete(`/lesson/${other}`).set('Authorization', a.auth.super);
    await createLesson(a, v2, { lessonname: 'Counting' });
  });

  it('ends a race for one name as one lesson and the same 400 for the others', async () => {
    const body = lessonBody(v2, { lessonname: 'Raced lesson' });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api().post('/lesson/create').set('Authorization', a.auth.super).send(body)),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    for (const r of answers.filter((x) => x.status === 400)) expect(r.body.errormessage).toBe('Lesson already exists');
    expect(await a.db('lessons').where({ lessonname: 'Raced lesson' }).count({ n: '*' }).first()).toMatchObject({
      n: 1,
    });
    await expectPointsHold(a.db);
  });

  it('keeps the points right when lessons are created in one level at once', async () => {
    const level = await createLevel(a, grade);
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api()
          .post('/lesson/create')
          .set('Authorization', a.auth.super)
          .send(lessonBody(level, { lessonname: `Parallel ${i}` })),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await points('levels', 'levelid', level)).toBe(600);
    await expectPointsHold(a.db);
  });
});

describe('GET /lesson/:lessonid', () => {
  it('answers the item with its level\'s name', async () => {
    const lessonid = await createLesson(a, v1, { lessonname: 'Readable', lessonorder: 4 });
    const res = await api().get(`/lesson/${lessonid}`).set('Authorization', a.auth.teacher);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(ITEM);
    expect(res.body.data).toMatchObject({
      lessonid,
      lessonname: 'Readable',
      lessonorder: 4,
      levelid: v1,
      levelname: 'Level one',
      total_points: 100,
      learning_points: 0,
      passing_points: 0,
    });
  });

  it('refuses a malformed, an unknown and a deleted id', async () => {
    const gone = await createLesson(a, v1);
    await api().delete(`/lesson/${gone}`).set('Authorization', a.auth.super);
    expect((await api().get('/lesson/x').set('Authorization', a.auth.super)).body.errormessage).toBe(
      '"Lesson ID" must be a valid GUID',
    );
    for (const lessonid of [id(), gone])
      expect((await api().get(`/lesson/${lessonid}`).set('Authorization', a.auth.super)).body).toEqual({
        error: true,
        errormessage: 'Invalid Lesson id',
        data: false,
      });
  });
});

describe('PUT /lesson/:lessonid', () => {
  it('updates name, description, order and level; 100 points and 0 to pass again; ' +
      'both levels recomputed when it moves', async () => {
    const lessonid = await createLesson(a, v1, { lessonname: 'Traveller' });
    await a.db('lessons').where({ lessonid }).update({ total_points: 40, passing_points: 20 });
    const [p1, p2] = [await points('levels', 'levelid', v1), await points('levels', 'levelid', v2)];
    const res = await api()
      .put(`/lesson/${lessonid}`)
      .set('Authorization', a.auth.super)
      .send(lessonBody(v2, { lessonname: 'Traveller', lessondescription: '', lessonorder: 6, total_points: 5 }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(FULL_ROW);
    expect(res.body.data).toMatchObject({
      lessonid,
      levelid: v2,
      lessondescription: '',
      lessonorder: 6,
      total_points: 100,
      passing_points: 0,
      updated_by: a.superId,
    });
    // Level one is summed again without it; level two counts its 100.
    expect([await points('levels', 'levelid', v1), await points('levels', 'levelid', v2)]).toEqual([
      p1 - 100,
      p2 + 100,
    ]);
    await expectPointsHold(a.db);
  });

  it('refuses unknown lessons and levels, a name taken in the target level and ' +
      'bad fields, writing nothing', async () => {
    const lessonid = await createLesson(a, v1, { lessonname: 'Stay put' });
    await createLesson(a, v2, { lessonname: 'Occupied' });
    const before = await snapshot(a.db);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [id(), lessonBody(v1), 'Invalid Lesson id'],
      [lessonid, lessonBody(id()), 'Invalid Level id'],
      [lessonid, lessonBody(v2, { lessonname: 'OCCUPIED' }), 'Lesson already exists'],
      [lessonid, lessonBody(v1, { lessonname: 'x' }), '"Lesson Name" length must be at least 3 characters long'],
      ['42', lessonBody(v1), '"Lesson ID" must be a valid GUID'],
    ];
    for (const [target, body, message] of cases) {
      const res = await api().put(`/lesson/${target}`).set('Authorization', a.auth.super).send(body);
      expect([res.status, res.body.errormessage]).toEqual([400, message]);
    }
    expect(await snapshot(a.db)).toEqual(before);
  });
});

describe('DELETE, activate and deactivate', () => {
  it('soft-deletes with the caller recorded; the level and grade lose its points', async () => {
    const lessonid = await createLesson(a, v1);
    const [l, g] = [await points('levels', 'levelid', v1), await points('grades', 'gradeid', grade)];
    expect((await api().delete(`/lesson/${lessonid}`).set('Authorization', a.auth.super)).body).toEqual({
      error: false,
      data: true,
    });
    expect(await a.db('lessons').where({ lessonid }).first()).toMatchObject({ isdeleted: true, deleted_by: a.superId });
    expect([await points('levels', 'levelid', v1), await points('grades', 'gradeid', grade)]).toEqual([
      l - 100,
      g - 100,
    ]);
    expect((await api().delete(`/lesson/${lessonid}`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      'Invalid Lesson id',
    );
  });

  it('flips the status only; an inactive lesson still counts for its level', async () => {
    const lessonid = await createLesson(a, v2, { lessonname: 'Switch' });
    const l = await points('levels', 'levelid', v2);
    expect(
      (await api().put(`/lesson/deactivate/${lessonid}`).set('Authorization', a.auth.super).send({ headers: {} })).body,
    ).toEqual({ error: false, data: true });
    expect(await a.db('lessons').where({ lessonid }).first()).toMatchObject({ lessonstatus: false, isdeleted: false });
    expect(await points('levels', 'levelid', v2)).toBe(l);
    expect((await api().put(`/lesson/activate/${lessonid}`).set('Authorization', a.auth.super)).body).toEqual({
      error: false,
      data: true,
    });
    expect(await a.db('lessons').where({ lessonid }).first()).toMatchObject({ lessonstatus: true });
    expect((await api().put(`/lesson/activate/${id()}`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      'Invalid Lesson id',
    );
  });
});

describe('lists', () => {
  it('GET /lesson/all: active, live lessons by name, narrowed by level and by `lesson` or `lessonname`', async () => {
    const level = await createLevel(a, grade);
    await createLesson(a, level, { lessonname: 'Zebra' });
    await createLesson(a, level, { lessonname: 'Apple' });
    const off = await createLesson(a, level, { lessonname: 'Asleep' });
    await api().put(`/lesson/deactivate/${off}`).set('Authorization', a.auth.super);
    const names = async (q: string) =>
      (await api().get(`/lesson/all?${q}`).set('Authorization', a.auth.teacher)).body.data.map(
        (l: { lessonname: string }) => l.lessonname,
      );
    expect(await names(`levelid=${level}&lessonname=`)).toEqual(['Apple', 'Zebra']);
    expect(await names(`levelid=${level}&lesson=ZEB`)).toEqual(['Zebra']);
    expect(await names(`levelid=${level}&lessonname=ppl`)).toEqual(['Apple']);
    expect(await names('levelid=string&lessonname=string')).toEqual([]);
    expect(
      Object.keys(
        (await api().get(`/lesson/all?levelid=${level}`).set('Authorization', a.auth.teacher)).body.data[0],
      ).sort(),
    ).toEqual(FULL_ROW);
  });

  it('POST /lesson: live lessons by level then order, filtered, the page echoed', async () => {
    const level = await createLevel(a, grade);
    const second = await createLesson(a, level, { lessonname: 'Listed B', lessonorder: 2 });
    const first = await createLesson(a, level, {
      lessonname: 'Listed A',
      lessonorder: 1,
      lessondescription: 'findable',
    });
    const res = await api()
      .post('/lesson')
      .set('Authorization', a.auth.teacher)
      .send({ filter: [{ key: 'lessonname', value: 'Listed' }], pageindex: 0, pagesize: 10 });
    expect(res.body.data).toMatchObject({ total: 2, pageindex: 0, pagesize: 10 });
    expect(res.body.data.data.map((l: { lessonid: string }) => l.lessonid)).toEqual([first, second]);
    expect(Object.keys(res.body.data.data[0]).sort()).toEqual(ITEM);
    expect(
      (
        await api()
          .post('/lesson')
          .set('Authorization', a.auth.teacher)
          .send({ filter: [{ key: 'lessondescription', value: 'findable' }] })
      ).body.data.total,
    ).toBe(1);
    expect(
      (
        await api()
          .post('/lesson')
          .set('Authorization', a.auth.teacher)
          .send({ filter: [{ key: 'levelid', value: level }] })
      ).status,
    ).toBe(400);
    expect((await api().post('/lesson').set('Authorization', a.auth.teacher).send({ pagesize: 201 })).status).toBe(400);
  });
});

describe('POST /lesson/update_reward_points', () => {
  it('answers 201 true: every active lesson 100 points and 0 to pass, its components spread again', async () => {
    const level = await createLevel(a, grade);
    const lessonid = await createLesson(a, level, { lessonname: 'Spread out' });
    const off = await createLesson(a, level, { lessonname: 'Left alone' });
    await api().put(`/lesson/deactivate/${off}`).set('Authorization', a.auth.super);
    // Rows written behind the model's back, as an older deployment may hold them.
    const docs = [await document(a.db), await document(a.db), await document(a.db)];
    await a.db('lessonlearnings').insert(
      docs.map((documentid, i) => ({
        lessonlearningid: id(),
        lessonlearningname: `L${i}`,
        lessonlearningdescription: 'd',
        lessonid,
        documentid,
        lessonlearningorder: i,
        points: 7,
      })),
    );
    await a.db('lessons').whereIn('lessonid', [lessonid, off]).update({ passing_points: 12 });
    const res = await api().post('/lesson/update_reward_points').set('Authorization', a.auth.super);
    expect([res.status, res.body]).toEqual([201, { error: false, data: true }]);
    expect(
      (await a.db('lessonlearnings').where({ lessonid }).orderBy('lessonlearningorder').select('points')).map(
        (r: { points: number }) => r.points,
      ),
    ).toEqual([33, 33, 34]);
    expect(await a.db('lessons').where({ lessonid }).first()).toMatchObject({
      total_points: 100,
      passing_points: 0,
      brick_points: 33,
      learning_points: 100,
      updated_by: a.superId,
    });
    expect(await a.db('lessons').where({ lessonid: off }).first()).toMatchObject({ passing_points: 12 });
    await expectPointsHold(a.db);
  });
});

describe('attacks', () => {
  it('refuses an oversized body (413), a wrong token type and no token (401), ' +
      'a missing permission (403), malformed ids (400)', async () => {
    const before = await snapshot(a.db);
    expect(
      (
        await api()
          .post('/lesson/create')
          .set('Authorization', a.auth.super)
          .send({ lessonname: 'x'.repeat(1_100_000) })
      ).status,
    ).toBe(413);
    expect(
      (await api().post('/lesson/create').set('Authorization', `Bearer ${a.refresh}`).send(lessonBody(v1))).status,
    ).toBe(401);
    expect((await api().post('/lesson/update_reward_points')).status).toBe(401);
    expect((await api().post('/lesson/create').set('Authorization', a.auth.teacher).send(lessonBody(v1))).status).toBe(
      403,
    );
    expect((await api().post('/lesson/update_reward_points').set('Authorization', a.auth.teacher)).status).toBe(403);
    expect((await api().delete("/lesson/'%20OR%20''='").set('Authorization', a.auth.super)).body.errormessage).toBe(
      '"Lesson ID" must be a valid GUID',
    );
    expect(await snapshot(a.db)).toEqual(before);
  });
});
