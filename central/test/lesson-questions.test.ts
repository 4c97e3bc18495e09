import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authoring,
  countQueries,
  createLesson,
  createLevel,
  curriculumWithGrades,
  id,
  question,
  snapshot,
  type Authoring,
} from './content';

let a: Authoring;
let grade: string;
let level: string;
let lesson: string;
const api = () => request(a.t.app);

beforeAll(async () => {
  a = await authoring();
  [grade] = await curriculumWithGrades(a.db, 1);
  level = await createLevel(a, grade, { levelname: 'Quiz level', leveldescription: 'Level text' });
  lesson = await createLesson(a, level, { lessonname: 'Question lesson' });
});
afterAll(async () => {
  await a.t.tdb.dispose();
});

interface Kind {
  path: string;
  table: string;
  prefix: string;
  parentid: string;
  parentLabel: string;
  parentInvalid: string;
  label: string;
  invalid: string;
  duplicate: string;
  item: string[];
  /** A new parent, and one that is gone (removed, or soft-deleted). */
  parent(): Promise<string>;
  goneParent(): Promise<string>;
  /** What the listed item says of its parent. */
  parentFields(parentid: string): Record<string, unknown>;
}

async function lessonItem(kind: 'practice' | 'quiz'): Promise<string> {
  const name = `${kind} ${id().slice(0, 6)}`;
  const res = await api().post(`/lesson/${kind}/${lesson}`).set('Authorization', a.auth.super)
    .send({ [`lesson${kind}name`]: name, [`lesson${kind}description`]: 'd', [`lesson${kind}order`]: 1, points: 1 });
  expect(res.status).toBe(200);
  const table = kind === 'practice' ? 'lessonpractices' : 'lessonquizzes';
  return (await a.db(table).where({ [`lesson${kind}name`]: name }).first())[`lesson${kind}id`] as string;
}

const KINDS: Kind[] = [
  {
    path: '/lesson/practice/question',
    table: 'lessonpracticequestions',
    prefix: 'lessonpracticequestion',
    parentid: 'lessonpracticeid',
    parentLabel: 'Lesson Practice ID',
    parentInvalid: 'Invalid lesson practice id',
    label: 'Lesson Practice Question ID',
    invalid: 'Invalid Lesson practice question id',
    duplicate: 'Question already added to lesson practice',
    item: [
      'lessonid',
      'lessonname',
      'lessonpracticeid',
      'lessonpracticename',
      'lessonpracticequestionid',
      'lessonpracticequestionorder',
      'lessonpracticequestionstatus',
      'questionid',
      'questionidentifier',
    ],
    parent: () => lessonItem('practice'),
    async goneParent() {
      const p = await lessonItem('practice');
      await api().delete(`/lesson/practice/${p}`).set('Authorization', a.auth.super);
      return p;
    },
    parentFields: () => ({
      lessonid: lesson,
      lessonname: 'Question lesson',
      lessonpracticename: expect.stringMatching(/^practice /),
    }),
  },
  {
    path: '/lesson/quiz/question',
    table: 'lessonquizquestions',
    prefix: 'lessonquizquestion',
    parentid: 'lessonquizid',
    parentLabel: 'Lesson Quiz ID',
    parentInvalid: 'Invalid lesson quiz id',
    label: 'Lesson Quiz Question ID',
    invalid: 'Invalid Lesson quiz question id',
    duplicate: 'Question already added to lesson quiz',
    item: [
      'lessonid',
      'lessonname',
      'lessonquizid',
      'lessonquizname',
      'lessonquizquestionid',
      'lessonquizquestionorder',
      'lessonquizquestionstatus',
      'questionid',
      'questionidentifier',
    ],
    parent: () => lessonItem('quiz'),
    async goneParent() {
      const p = await lessonItem('quiz');
      await api().delete(`/lesson/quiz/${p}`).set('Authorization', a.auth.super);
      return p;
    },
    parentFields: () => ({
      lessonid: lesson,
      lessonname: 'Question lesson',
      lessonquizname: expect.stringMatching(/^quiz /),
    }),
  },
  {
    path: '/level/quiz/question',
    table: 'levelquizquestions',
    prefix: 'levelquizquestion',
    parentid: 'levelid',
    parentLabel: 'Level ID',
    parentInvalid: 'Invalid Level id',
    label: 'Level Quiz Question ID',
    invalid: 'Invalid Level quiz question id',
    duplicate: 'Question already added to level',
    item: [
      'lesson',
      'leveldescription',
      'levelid',
      'levelname',
      'levelquizquestionid',
      'levelquizquestionorder',
      'levelquizquestionstatus',
      'questionid',
      'questionidentifier',
    ],
    parent: () => createLevel(a, grade, { leveldescription: 'Level text' }),
    async goneParent() {
      const v = await createLevel(a, grade);
      await api().delete(`/level/${v}`).set('Authorization', a.auth.super);
      return v;
    },
    parentFields: () => ({ levelname: expect.stringMatching(/^Level /), leveldescription: 'Level text', lesson: null }),
  },
];

describe.each(KINDS)('$path', (k) => {
  const col = { id: `${k.prefix}id`, status: `${k.prefix}status`, order: `${k.prefix}order` };
  async function link(parent: string, questionid: string, order: number | string): Promise<string> {
    const res = await api()
      .post(`${k.path}/${parent}/${questionid}/${order}`)
      .set('Authorization', a.auth.super)
      .send({ headers: {} });
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    return (await a.db(k.table).where({ [k.parentid]: parent, questionid }).first(col.id))[col.id] as string;
  }

  it('links questions at their order, active, and lists them by order with their parent and identifier', async () => {
    const parent = await k.parent();
    // Identifiers are unique among live questions, and every kind's test shares the one database.
    const q1 = await question(a.db, { identifier: `Q-one ${k.prefix}` });
    const q2 = await question(a.db, { identifier: `Q-two ${k.prefix}` });
    const second = await link(parent, q1, 5);
    const first = await link(parent, q2, '2');
    expect(
      await a
        .db(k.table)
        .where({ [col.id]: first })
        .first(),
    ).toMatchObject({ [col.status]: true, [col.order]: 2, questionid: q2 });
    const list = await api().get(`${k.path}/${parent}`).set('Authorization', a.auth.super);
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: Record<string, string>) => x[col.id])).toEqual([first, second]);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(k.item);
    expect(list.body.data[0]).toMatchObject({
      [k.parentid]: parent,
      questionid: q2,
      questionidentifier: `Q-two ${k.prefix}`,
      [col.status]: true,
      [col.order]: 2,
      ...k.parentFields(parent),
    });
  });

  it('reads the list in the same number of statements however many links it has', async () => {
    const small = await k.parent();
    const large = await k.parent();
    await link(small, await question(a.db), 1);
    for (let i = 0; i < 10; i += 1) await link(large, await question(a.db), i);
    const n1 = await countQueries(a.db, () => api().get(`${k.path}/${small}`).set('Authorization', a.auth.super));
    const n2 = await countQueries(a.db, () => api().get(`${k.path}/${large}`).set('Authorization', a.auth.super));
    expect(n1).toBeGreaterThan(0);
    expect(n2).toBe(n1);
  });

  it('refuses malformed ids, unknown or gone parents and questions, ' +
      'and a question linked twice, writing nothing', async () => {
    const parent = await k.parent();
    const gone = await k.goneParent();
    const q = await question(a.db);
    const deletedQuestion = await question(a.db, { deleted: true });
    await link(parent, q, 1);
    const before = await snapshot(a.db);
    const cases: Array<[string, string]> = [
      [`nope/${q}/1`, `"${k.parentLabel}" must be a valid GUID`],
      [`${parent}/nope/1`, '"Question ID" must be a valid GUID'],
      [`${parent}/${q}/first`, '"Question order" must be a number'],
      [`${parent}/${q}/1.5`, '"Question order" must be an integer'],
      [`${id()}/${await question(a.db)}/1`, k.parentInvalid],
      [`${gone}/${await question(a.db)}/1`, k.parentInvalid],
      [`${parent}/${id()}/1`, 'Invalid question id'],
      [`${parent}/${deletedQuestion}/1`, 'Invalid question id'],
      [`${id()}/${id()}/1`, `${k.parentInvalid}, Invalid question id`],
      [`${parent}/${q}/2`, k.duplicate],
    ];
    for (const [path, message] of cases) {
      const res = await api().post(`${k.path}/${path}`).set('Authorization', a.auth.super);
      expect([res.status, res.body]).toEqual([400, { error: true, errormessage: message, data: false }]);
    }
    expect(await snapshot(a.db)).toEqual(before);
    expect((await api().get(`${k.path}/${id()}`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      k.parentInvalid,
    );
    expect((await api().get(`${k.path}/${gone}`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      k.parentInvalid,
    );
  });

  it('ends a race to link one question as one link and the same 400 for the others', async () => {
    const parent = await k.parent();
    const q = await question(a.db);
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api().post(`${k.path}/${parent}/${q}/${i}`).set('Authorization', a.auth.super),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400]);
    for (const r of answers.filter((x) => x.status === 400)) expect(r.body.errormessage).toBe(k.duplicate);
    expect(
      await a
        .db(k.table)
        .where({ [k.parentid]: parent, questionid: q })
        .count({ n: '*' })
        .first(),
    ).toMatchObject({ n: 1 });
  });

  it('activates, deactivates, reorders and removes that link only', async () => {
    const parent = await k.parent();
    const one = await link(parent, await question(a.db), 1);
    const two = await link(parent, await question(a.db), 2);
    const row = async (x: string) =>
      a
        .db(k.table)
        .where({ [col.id]: x })
        .first();
    expect(
      (await api().put(`${k.path}/deactivate/${one}`).set('Authorization', a.auth.super).send({ headers: {} })).body,
    ).toEqual({ error: false, data: true });
    expect([(await row(one))[col.status], (await row(two))[col.status]]).toEqual([false, true]);
    expect((await api().put(`${k.path}/activate/${one}`).set('Authorization', a.auth.super)).body).toEqual({
      error: false,
      data: true,
    });
    expect((await row(one))[col.status]).toBe(true);
    expect((await api().put(`${k.path}/order/${one}/7`).set('Authorization', a.auth.super)).body).toEqual({
      error: false,
      data: true,
    });
    expect([(await row(one))[col.order], (await row(two))[col.order]]).toEqual([7, 2]);
    expect(
      (await api().get(`${k.path}/${parent}`).set('Authorization', a.auth.super)).body.data.map(
        (x: Record<string, string>) => x[col.id],
      ),
    ).toEqual([two, one]);
    expect((await api().delete(`${k.path}/${one}`).set('Authorization', a.auth.super)).body).toEqual({
      error: false,
      data: true,
    });
    expect(await row(one)).toBeUndefined();
    expect(await row(two)).toBeTruthy();
    const before = await snapshot(a.db);
    for (const [method, path] of [
      ['put', `activate/${one}`],
      ['put', `deactivate/${id()}`],
      ['put', `order/${one}/1`],
      ['delete', one],
    ] as const) {
      expect((await api()[method](`${k.path}/${path}`).set('Authorization', a.auth.super)).body).toEqual({
        error: true,
        errormessage: k.invalid,
        data: false,
      });
    }
    expect((await api().put(`${k.path}/order/x/1`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      `"${k.label}" must be a valid GUID`,
    );
    expect((await api().put(`${k.path}/order/${two}/-`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      '"Question order" must be a number',
    );
    expect(await snapshot(a.db)).toEqual(before);
  });

  it('refuses a refresh token and no token (401), a caller without the permission (403)', async () => {
    const parent = await k.parent();
    const q = await question(a.db);
    const before = await snapshot(a.db);
    expect((await api().post(`${k.path}/${parent}/${q}/1`).set('Authorization', `Bearer ${a.refresh}`)).status).toBe(
      401,
    );
    expect((await api().post(`${k.path}/${parent}/${q}/1`)).status).toBe(401);
    expect((await api().post(`${k.path}/${parent}/${q}/1`).set('Authorization', a.auth.none)).status).toBe(403);
    expect((await api().get(`${k.path}/${parent}`).set('Authorization', a.auth.none)).status).toBe(403);
    expect(await snapshot(a.db)).toEqual(before);
  });
});

describe('PUT /level/quiz/question/setlesson/:levelquizquestionid', () => {
  it('ties the link to a lesson of its level, or to none; any signed-in user may', async () => {
    const q = await question(a.db, { identifier: 'Reviewed' });
    await api().post(`/level/quiz/question/${level}/${q}/1`).set('Authorization', a.auth.super);
    const link = (await a.db('levelquizquestions').where({ levelid: level, questionid: q }).first())
      .levelquizquestionid as string;
    const res = await api()
      .put(`/level/quiz/question/setlesson/${link}`)
      .set('Authorization', a.auth.teacher)
      .send({ lessonid: lesson });
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    const listed = async () =>
      (await api().get(`/level/quiz/question/${level}`).set('Authorization', a.auth.super)).body.data.find(
        (x: { levelquizquestionid: string }) => x.levelquizquestionid === link,
      );
    expect((await listed()).lesson).toEqual({ lessonid: lesson, lessonname: 'Question lesson' });
    for (const none of ['', null]) {
      await api()
        .put(`/level/quiz/question/setlesson/${link}`)
        .set('Authorization', a.auth.none)
        .send({ lessonid: lesson });
      expect(
        (
          await api()
            .put(`/level/quiz/question/setlesson/${link}`)
            .set('Authorization', a.auth.none)
            .send({ lessonid: none })
        ).body.data,
      ).toBe(true);
      expect((await listed()).lesson).toBeNull();
    }
  });

  it('refuses a lesson of another level, an unknown or deleted one, ' +
      'bad ids and an unknown link, writing nothing', async () => {
    const q = await question(a.db);
    await api().post(`/level/quiz/question/${level}/${q}/1`).set('Authorization', a.auth.super);
    const link = (await a.db('levelquizquestions').where({ levelid: level, questionid: q }).first())
      .levelquizquestionid as string;
    const elsewhere = await createLesson(a, await createLevel(a, grade));
    const deleted = await createLesson(a, level);
    await api().delete(`/lesson/${deleted}`).set('Authorization', a.auth.super);
    const before = await snapshot(a.db);
    const cases: Array<[string, unknown, string]> = [
      [link, { lessonid: elsewhere }, 'Invalid Lesson id'],
      [link, { lessonid: id() }, 'Invalid Lesson id'],
      [link, { lessonid: deleted }, 'Invalid Lesson id'],
      [link, { lessonid: 'lesson' }, '"Lesson ID" must be a valid GUID'],
      [link, {}, '"Lesson ID" is required'],
      [id(), { lessonid: lesson }, 'Invalid Level quiz question id'],
      ['x', { lessonid: lesson }, '"Level Quiz Question ID" must be a valid GUID'],
    ];
    for (const [target, body, message] of cases) {
      const res = await api()
        .put(`/level/quiz/question/setlesson/${target}`)
        .set('Authorization', a.auth.super)
        .send(body as object);
      expect([res.status, res.body.errormessage]).toEqual([400, message]);
    }
    expect(await snapshot(a.db)).toEqual(before);
    expect((await api().put(`/level/quiz/question/setlesson/${link}`).send({ lessonid: lesson })).status).toBe(401);
  });
});
