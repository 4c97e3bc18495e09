import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authoring,
  countQueries,
  createLesson,
  createLevel,
  curriculumWithGrades,
  document,
  expectPointsHold,
  id,
  question,
  snapshot,
  type Authoring,
} from './content';

let a: Authoring;
let level: string;
const api = () => request(a.t.app);

beforeAll(async () => {
  a = await authoring();
  const [grade] = await curriculumWithGrades(a.db, 1);
  level = await createLevel(a, grade);
});
afterAll(async () => {
  await a.t.tdb.dispose();
});

interface Kind {
  name: string;
  path: string;
  prefix: string;
  table: string;
  labels: { id: string; name: string; description: string; order: string; points?: string };
  document: boolean;
  scored: boolean;
  moves: boolean;
  invalid: string;
  duplicate: string;
  /** What the listed item carries. */
  item: string[];
}

const KINDS: Kind[] = [
  {
    name: 'learning',
    path: '/lesson/learning',
    prefix: 'lessonlearning',
    table: 'lessonlearnings',
    labels: {
      id: 'Lesson Learning ID',
      name: 'Lesson Learning Name',
      description: 'Lesson Learning Description',
      order: 'Lesson Learning order',
    },
    document: true,
    scored: true,
    moves: false,
    invalid: 'Invalid lesson learning id',
    duplicate: 'Learning document already added to lesson',
    item: [
      'documentid',
      'documentname',
      'documenttypeid',
      'lessondescription',
      'lessonid',
      'lessonlearningdescription',
      'lessonlearningid',
      'lessonlearningname',
      'lessonlearningorder',
      'lessonlearningstatus',
      'lessonname',
    ],
  },
  {
    name: 'plan',
    path: '/lesson/plan',
    prefix: 'lessonplan',
    table: 'lessonplans',
    labels: {
      id: 'Lesson Plan ID',
      name: 'Lesson Plan Name',
      description: 'Lesson Plan Description',
      order: 'Lesson Plan order',
    },
    document: true,
    scored: false,
    moves: false,
    invalid: 'Invalid lesson plan id',
    duplicate: 'Plan document already added to lesson',
    item: [
      'documentid',
      'documentname',
      'documenttypeid',
      'lessondescription',
      'lessonid',
      'lessonname',
      'lessonplandescription',
      'lessonplanid',
      'lessonplanname',
      'lessonplanorder',
      'lessonplanstatus',
    ],
  },
  {
    name: 'practice',
    path: '/lesson/practice',
    prefix: 'lessonpractice',
    table: 'lessonpractices',
    labels: {
      id: 'Lesson Practice ID',
      name: 'Lesson Practice Name',
      description: 'Lesson Practice Description',
      order: 'Lesson Practice order',
      points: 'Lesson Practice Points',
    },
    document: false,
    scored: true,
    moves: true,
    invalid: 'Invalid lesson practice id',
    duplicate: 'Practice name already added to lesson',
    item: [
      'lessondescription',
      'lessonid',
      'lessonname',
      'lessonpracticedescription',
      'lessonpracticeid',
      'lessonpracticename',
      'lessonpracticeorder',
      'lessonpracticestatus',
      'points',
    ],
  },
  {
    name: 'quiz',
    path: '/lesson/quiz',
    prefix: 'lessonquiz',
    table: 'lessonquizzes',
    labels: {
      id: 'Lesson Quiz ID',
      name: 'Lesson Quiz Name',
      description: 'Lesson Quiz Description',
      order: 'Lesson Quiz order',
      points: 'Lesson Quiz Points',
    },
    document: false,
    scored: true,
    moves: true,
    invalid: 'Invalid lesson quiz id',
    duplicate: 'Quiz name already added to lesson',
    item: [
      'lessondescription',
      'lessonid',
      'lessonname',
      'lessonquizdescription',
      'lessonquizid',
      'lessonquizname',
      'lessonquizorder',
      'lessonquizstatus',
      'points',
    ],
  },
];

describe.each(KINDS)('$path', (k) => {
  const col = {
    id: `${k.prefix}id`,
    name: `${k.prefix}name`,
    description: `${k.prefix}description`,
    status: `${k.prefix}status`,
    order: `${k.prefix}order`,
  };
  const createBody = async (o: Record<string, unknown> = {}) => ({
    ...(k.document ? { documentid: await document(a.db) } : {}),
    [col.name]: `${k.name} ${id().slice(0, 6)}`,
    [col.description]: 'Described',
    [col.order]: 1,
    ...(k.labels.points ? { points: 77 } : {}),
    ...o,
  });
  const updateBody = async (lessonid: string, o: Record<string, unknown> = {}) => ({
    lessonid,
    ...(k.document ? { documentid: await document(a.db) } : {}),
    [col.name]: `renamed ${id().slice(0, 6)}`,
    [col.description]: 'Described again',
    ...(k.labels.points ? { points: 5 } : {}),
    ...o,
  });
  /** Adds an item through HTTP and answers its id. */
  async function add(lessonid: string, o: Record<string, unknown> = {}): Promise<string> {
    const body = await createBody(o);
    const res = await api().post(`${k.path}/${lessonid}`).set('Authorization', a.auth.super).send(body);
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    return (await a.db(k.table).where({ lessonid, [col.name]: body[col.name] }).first(col.id))[col.id] as string;
  }
  const pointsOf = async (lessonid: string) =>
    (await a.db(k.table).where({ lessonid }).orderBy(col.order).select('points')).map(
      (r: { points: number }) => r.points,
    );

  it('adds active items and lists them by order with their lesson (and ' +
      'document); a teacher may read them', async () => {
    const lessonid = await createLesson(a, level, { lessonname: `Holder ${k.name}` });
    const second = await add(lessonid, { [col.order]: 2, [col.name]: 'Second one' });
    const first = await add(lessonid, { [col.order]: '1', [col.name]: 'First one' });
    expect(
      await a
        .db(k.table)
        .where({ [col.id]: first })
        .first(),
    ).toMatchObject({ [col.status]: true, [col.order]: 1, created_by: a.superId, lessonid });
    const list = await api().get(`${k.path}/${lessonid}`).set('Authorization', a.auth.teacher);
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: Record<string, string>) => i[col.id])).toEqual([first, second]);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(k.item);
    expect(list.body.data[0]).toMatchObject({
      lessonid,
      lessonname: `Holder ${k.name}`,
      lessondescription: 'A lesson',
      [col.name]: 'First one',
      [col.description]: 'Described',
      [col.status]: true,
    });
    if (k.document)
      expect(list.body.data[0]).toMatchObject({ documenttypeid: 2, documentname: expect.stringMatching(/\.mp4$/) });
    const one = await api().get(`${k.path}/${lessonid}/${second}`).set('Authorization', a.auth.teacher);
    expect([one.status, one.body.data]).toEqual([200, list.body.data[1]]);
    // Client points are not taken: a scored item gets its share of the lesson's 100.
    expect(await pointsOf(lessonid)).toEqual(k.scored ? [50, 50] : [0, 0]);
    await expectPointsHold(a.db);
  });

  it('reads a lesson\'s list in the same number of statements however many items it has', async () => {
    const small = await createLesson(a, level);
    const large = await createLesson(a, level);
    await add(small);
    for (let i = 0; i < 12; i += 1) await add(large, { [col.order]: i });
    const n1 = await countQueries(a.db, () => api().get(`${k.path}/${small}`).set('Authorization', a.auth.super));
    const n2 = await countQueries(a.db, () => api().get(`${k.path}/${large}`).set('Authorization', a.auth.super));
    expect(n1).toBeGreaterThan(0);
    expect(n2).toBe(n1);
  });

  it('refuses each bad field and each rule with the contract\'s words, writing nothing', async () => {
    const lessonid = await createLesson(a, level);
    const gone = await createLesson(a, level);
    await api().delete(`/lesson/${gone}`).set('Authorization', a.auth.super);
    const existing = await createBody({ [col.name]: 'Taken name' });
    await api().post(`${k.path}/${lessonid}`).set('Authorization', a.auth.super).send(existing);
    const goneDocument = await document(a.db, { deleted: true });
    const before = await snapshot(a.db);
    const required = [
      ...(k.document ? ['"Document ID" is required'] : []),
      `"${k.labels.name}" is required`, `"${k.labels.description}" is required`, `"${k.labels.order}" is required`,
      ...(k.labels.points ? [`"${k.labels.points}" is required`] : []),
    ].join(', ');
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [lessonid, {}, required],
      [
        lessonid,
        await createBody({ [col.name]: 'ab' }),
        `"${k.labels.name}" length must be at least 3 characters long`,
      ],
      [
        lessonid,
        await createBody({ [col.name]: 'x'.repeat(101) }),
        `"${k.labels.name}" length must be less than or equal to 100 characters long`,
      ],
      [lessonid, await createBody({ [col.description]: '' }), `"${k.labels.description}" is not allowed to be empty`],
      [lessonid, await createBody({ [col.order]: 'x' }), `"${k.labels.order}" must be a number`],
      [lessonid, await createBody({ [col.order]: 1.5 }), `"${k.labels.order}" must be an integer`],
      [
        lessonid,
        await createBody({ [col.order]: 3e9 }),
        `"${k.labels.order}" must be less than or equal to 2147483647`,
      ],
      [lessonid, await createBody({ lessonid }), '"lessonid" is not allowed'],
      ['not-a-guid', await createBody(), '"Lesson ID" must be a valid GUID'],
      [id(), await createBody(), 'Invalid Lesson id'],
      [gone, await createBody(), 'Invalid Lesson id'],
    ];
    if (k.document) {
      cases.push(
        [lessonid, await createBody({ documentid: 'doc' }), '"Document ID" must be a valid GUID'],
        [lessonid, await createBody({ documentid: id() }), 'Invalid document id'],
        [lessonid, await createBody({ documentid: goneDocument }), 'Invalid document id'],
        [id(), await createBody({ documentid: id() }), 'Invalid Lesson id, Invalid document id'],
        [lessonid, await createBody({ documentid: existing.documentid }), k.duplicate],
      );
    } else {
      cases.push(
        [lessonid, await createBody({ points: 'all' }), `"${k.labels.points}" must be a number`],
        [lessonid, await createBody({ [col.name]: 'TAKEN NAME' }), k.duplicate],
      );
    }
    for (const [lesson, body, message] of cases) {
      const res = await api().post(`${k.path}/${lesson}`).set('Authorization', a.auth.super).send(body);
      expect([res.status, res.body]).toEqual([400, { error: true, errormessage: message, data: false }]);
    }
    expect(await snapshot(a.db)).toEqual(before);
  });

  it('ends a race for one slot as one item and the same 400 for the others; the points still add up', async () => {
    const lessonid = await createLesson(a, level);
    const body = await createBody({ [col.name]: 'Raced item' });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        api().post(`${k.path}/${lessonid}`).set('Authorization', a.auth.super).send(body),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400]);
    for (const r of answers.filter((x) => x.status === 400)) expect(r.body.errormessage).toBe(k.duplicate);
    // Distinct items added at once all count.
    const more = await Promise.all(
      Array.from({ length: 4 }, async (_, i) =>
        api()
          .post(`${k.path}/${lessonid}`)
          .set('Authorization', a.auth.super)
          .send(await createBody({ [col.order]: i + 5 })),
      ),
    );
    expect(more.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await a.db(k.table).where({ lessonid }).count({ n: '*' }).first()).toMatchObject({ n: 5 });
    expect(await pointsOf(lessonid)).toEqual(k.scored ? [20, 20, 20, 20, 20] : [0, 0, 0, 0, 0]);
    await expectPointsHold(a.db);
  });

  it('GET one refuses an item of another lesson and an unknown one; the list refuses an unknown lesson', async () => {
    const lessonid = await createLesson(a, level);
    const other = await createLesson(a, level);
    const item = await add(lessonid);
    for (const url of [`${k.path}/${other}/${item}`, `${k.path}/${lessonid}/${id()}`]) {
      expect((await api().get(url).set('Authorization', a.auth.super)).body).toEqual({
        error: true,
        errormessage: k.invalid,
        data: false,
      });
    }
    expect((await api().get(`${k.path}/${lessonid}/x`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      `"${k.labels.id}" must be a valid GUID`,
    );
    expect((await api().get(`${k.path}/${id()}`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      'Invalid Lesson id',
    );
  });

  it('activates and deactivates that item (the admin UI sends its HTTP options as the body)', async () => {
    const lessonid = await createLesson(a, level);
    const item = await add(lessonid);
    const sibling = await add(lessonid);
    const ui = { headers: { normalizedNames: {}, lazyUpdate: null } };
    expect((await api().put(`${k.path}/deactivate/${item}`).set('Authorization', a.auth.super).send(ui)).body).toEqual({
      error: false,
      data: true,
    });
    expect(
      (
        await a
          .db(k.table)
          .where({ [col.id]: item })
          .first()
      )[col.status],
    ).toBe(false);
    expect(
      (
        await a
          .db(k.table)
          .where({ [col.id]: sibling })
          .first()
      )[col.status],
    ).toBe(true);
    expect((await api().put(`${k.path}/activate/${item}`).set('Authorization', a.auth.super).send(ui)).body).toEqual({
      error: false,
      data: true,
    });
    expect(
      (
        await a
          .db(k.table)
          .where({ [col.id]: item })
          .first()
      )[col.status],
    ).toBe(true);
    for (const verb of ['activate', 'deactivate']) {
      expect((await api().put(`${k.path}/${verb}/${id()}`).set('Authorization', a.auth.super)).body).toEqual({
        error: true,
        errormessage: k.invalid,
        data: false,
      });
    }
  });

  it('sets the order of that item only; a scored lesson\'s remainder goes to its new last item', async () => {
    const lessonid = await createLesson(a, level);
    const items = [
      await add(lessonid, { [col.order]: 1 }),
      await add(lessonid, { [col.order]: 2 }),
      await add(lessonid, { [col.order]: 3 }),
    ];
    const pointsById = async () =>
      Object.fromEntries(
        (await a.db(k.table).where({ lessonid }).select(col.id, 'points')).map((r: Record<string, unknown>) => [
          r[col.id],
          r.points,
        ]),
      );
    if (k.scored) expect(await pointsById()).toEqual({ [items[0]]: 33, [items[1]]: 33, [items[2]]: 34 });
    const res = await api()
      .put(`${k.path}/order/${items[0]}/9`)
      .set('Authorization', a.auth.super)
      .send({ headers: {} });
    expect(res.body).toEqual({ error: false, data: true });
    expect(
      (await a.db(k.table).where({ lessonid }).orderBy(col.id).select(col.id, col.order))
        .map((r: Record<string, unknown>) => [r[col.id], r[col.order]])
        .sort(),
    ).toEqual(
      [
        [items[0], 9],
        [items[1], 2],
        [items[2], 3],
      ].sort(),
    );
    if (k.scored) expect(await pointsById()).toEqual({ [items[0]]: 34, [items[1]]: 33, [items[2]]: 33 });
    const list = await api().get(`${k.path}/${lessonid}`).set('Authorization', a.auth.super);
    expect(list.body.data.map((i: Record<string, string>) => i[col.id])).toEqual([items[1], items[2], items[0]]);
    const before = await snapshot(a.db);
    expect((await api().put(`${k.path}/order/${id()}/1`).set('Authorization', a.auth.super)).body.errormessage).toBe(
      k.invalid,
    );
    expect(
      (await api().put(`${k.path}/order/${items[1]}/first`).set('Authorization', a.auth.super)).body.errormessage,
    ).toBe(`"${k.labels.order}" must be a number`);
    expect(await snapshot(a.db)).toEqual(before);
    await expectPointsHold(a.db);
  });

  it('updates name and description (and document, or lesson), writing nothing when refused', async () => {
    const lessonid = await createLesson(a, level);
    const target = await createLesson(a, level);
    const item = await add(lessonid);
    await add(lessonid, { [col.name]: 'Neighbour' });
    const body = await updateBody(target);
    const res = await api().put(`${k.path}/${item}`).set('Authorization', a.auth.super).send(body);
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    const row = await a
      .db(k.table)
      .where({ [col.id]: item })
      .first();
    expect(row).toMatchObject({
      [col.name]: body[col.name],
      [col.description]: 'Described again',
      updated_by: a.superId,
      lessonid: k.moves ? target : lessonid,
    });
    if (k.document) expect(row.documentid).toBe(body.documentid);
    if (k.scored) {
      // Moved: each lesson holds one item worth 100. Kept: two items share 100.
      expect(await pointsOf(lessonid)).toEqual(k.moves ? [100] : [50, 50]);
      if (k.moves) expect(await pointsOf(target)).toEqual([100]);
    }
    await expectPointsHold(a.db);

    const neighbour = (await a
      .db(k.table)
      .where({ [col.name]: 'Neighbour', lessonid })
      .first()) as Record<string, string>;
    const home = k.moves ? target : lessonid;
    const before = await snapshot(a.db);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [id(), await updateBody(home), k.invalid],
      ['nope', await updateBody(home), `"${k.labels.id}" must be a valid GUID`],
      [item, await updateBody('nope'), '"Lesson ID" must be a valid GUID'],
      [
        item,
        await updateBody(home, { [col.name]: 'no' }),
        `"${k.labels.name}" length must be at least 3 characters long`,
      ],
      [item, await updateBody(home, { [col.order]: 3 }), `"${col.order}" is not allowed`],
    ];
    if (k.document) {
      cases.push(
        [item, await updateBody(home, { documentid: id() }), 'Invalid document id'],
        [neighbour[col.id], await updateBody(lessonid, { documentid: body.documentid }), k.duplicate],
      );
    } else {
      cases.push(
        [item, await updateBody(id()), 'Invalid Lesson id'],
        [item, await updateBody(lessonid, { [col.name]: 'neighbour' }), k.duplicate],
      );
    }
    for (const [target2, b, message] of cases) {
      const r = await api().put(`${k.path}/${target2}`).set('Authorization', a.auth.super).send(b);
      expect([r.status, r.body.errormessage]).toEqual([400, message]);
    }
    expect(await snapshot(a.db)).toEqual(before);
  });

  it("removes the row for good (a practice's or quiz's question links with it); " +
      "the rest share the points", async () => {
    const lessonid = await createLesson(a, level);
    const item = await add(lessonid);
    const kept = await add(lessonid);
    const links =
      k.name === 'practice'
        ? { table: 'lessonpracticequestions', parent: 'lessonpracticeid', path: '/lesson/practice/question' }
        : k.name === 'quiz'
          ? { table: 'lessonquizquestions', parent: 'lessonquizid', path: '/lesson/quiz/question' }
          : undefined;
    if (links) {
      for (const q of [await question(a.db), await question(a.db)])
        expect((await api().post(`${links.path}/${item}/${q}/1`).set('Authorization', a.auth.super)).status).toBe(200);
      expect(
        (
          await api()
            .post(`${links.path}/${kept}/${await question(a.db)}/1`)
            .set('Authorization', a.auth.super)
        ).status,
      ).toBe(200);
    }
    const res = await api().delete(`${k.path}/${item}`).set('Authorization', a.auth.super);
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    expect(await a.db(k.table).where({ [col.id]: item }).first()).toBeUndefined();
    if (links) {
      expect(await a.db(links.table).where({ [links.parent]: item }).count({ n: '*' }).first()).toMatchObject({ n: 0 });
      expect(await a.db(links.table).where({ [links.parent]: kept }).count({ n: '*' }).first()).toMatchObject({ n: 1 });
    }
    expect(await pointsOf(lessonid)).toEqual(k.scored ? [100] : [0]);
    expect((await api().delete(`${k.path}/${item}`).set('Authorization', a.auth.super)).body).toEqual({
      error: true,
      errormessage: k.invalid,
      data: false,
    });
    await expectPointsHold(a.db);
  });

  it('refuses an oversized body (413), a refresh token (401), a teacher\'s write (403)', async () => {
    const lessonid = await createLesson(a, level);
    const before = await snapshot(a.db);
    expect(
      (
        await api()
          .post(`${k.path}/${lessonid}`)
          .set('Authorization', a.auth.super)
          .send({ [col.name]: 'x'.repeat(1_100_000) })
      ).status,
    ).toBe(413);
    expect(
      (
        await api()
          .post(`${k.path}/${lessonid}`)
          .set('Authorization', `Bearer ${a.refresh}`)
          .send(await createBody())
      ).status,
    ).toBe(401);
    expect((await api().get(`${k.path}/${lessonid}`)).status).toBe(401);
    expect(
      (
        await api()
          .post(`${k.path}/${lessonid}`)
          .set('Authorization', a.auth.teacher)
          .send(await createBody())
      ).status,
    ).toBe(403);
    expect((await api().get(`${k.path}/${lessonid}`).set('Authorization', a.auth.none)).status).toBe(403);
    expect(await snapshot(a.db)).toEqual(before);
  });
});

describe('plans are their own rows', () => {
  it('plan activate, deactivate and order act on plans; a learning id there is not a plan', async () => {
    const lessonid = await createLesson(a, level);
    const documentid = await document(a.db);
    await api()
      .post(`/lesson/learning/${lessonid}`)
      .set('Authorization', a.auth.super)
      .send({ documentid, lessonlearningname: 'Learning', lessonlearningdescription: 'd', lessonlearningorder: 1 });
    await api()
      .post(`/lesson/plan/${lessonid}`)
      .set('Authorization', a.auth.super)
      .send({ documentid, lessonplanname: 'Plan', lessonplandescription: 'd', lessonplanorder: 1 });
    const learning = (await a.db('lessonlearnings').where({ lessonid }).first()).lessonlearningid as string;
    const plan = (await a.db('lessonplans').where({ lessonid }).first()).lessonplanid as string;
    expect((await api().put(`/lesson/plan/deactivate/${plan}`).set('Authorization', a.auth.super)).body.data).toBe(
      true,
    );
    expect((await api().put(`/lesson/plan/order/${plan}/6`).set('Authorization', a.auth.super)).body.data).toBe(true);
    expect(await a.db('lessonplans').where({ lessonplanid: plan }).first()).toMatchObject({
      lessonplanstatus: false,
      lessonplanorder: 6,
    });
    expect(await a.db('lessonlearnings').where({ lessonlearningid: learning }).first()).toMatchObject({
      lessonlearningstatus: true,
      lessonlearningorder: 1,
      points: 100,
    });
    for (const path of [`/lesson/plan/activate/${learning}`, `/lesson/plan/order/${learning}/2`]) {
      expect((await api().put(path).set('Authorization', a.auth.super)).body.errormessage).toBe(
        'Invalid lesson plan id',
      );
    }
  });
});

describe('the points of a lesson with every kind of item', () => {
  it('spreads 100 over learnings, practices and quizzes (not plans), the remainder to the last quiz, ' +
      'else practice, else learning', async () => {
    const lessonid = await createLesson(a, level);
    const post = async (kind: string, body: Record<string, unknown>) => {
      const res = await api().post(`/lesson/${kind}/${lessonid}`).set('Authorization', a.auth.super).send(body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    const lesson = async () => a.db('lessons').where({ lessonid }).first();
    const docs = [await document(a.db), await document(a.db), await document(a.db)];
    for (const [i, documentid] of docs.entries())
      await post('learning', {
        lessonlearningname: `Learn ${i}`,
        lessonlearningdescription: 'd',
        lessonlearningorder: i,
        documentid,
      });
    expect(await lesson()).toMatchObject({
      brick_points: 33,
      learning_points: 100,
      practices_points: 0,
      quizzes_points: 0,
    });
    await post('practice', {
      lessonpracticename: 'Practice 1',
      lessonpracticedescription: 'd',
      lessonpracticeorder: 1,
      points: 1,
    });
    expect(await lesson()).toMatchObject({
      brick_points: 25,
      learning_points: 75,
      practices_points: 25,
      practicecount: 1,
    });
    await post('plan', { lessonplanname: 'Plan', lessonplandescription: 'd', lessonplanorder: 1, documentid: docs[0] });
    expect(await lesson()).toMatchObject({ brick_points: 25 });
    for (const n of [1, 2, 3])
      await post('quiz', { lessonquizname: `Quiz ${n}`, lessonquizdescription: 'd', lessonquizorder: n, points: 0 });
    // Seven components: 14 each, the last quiz 14 + 2.
    expect(await lesson()).toMatchObject({
      brick_points: 14,
      learning_points: 42,
      practices_points: 14,
      quizzes_points: 44,
      quizcount: 3,
    });
    expect(
      (await a.db('lessonquizzes').where({ lessonid }).orderBy('lessonquizorder').select('points')).map(
        (r: { points: number }) => r.points,
      ),
    ).toEqual([14, 14, 16]);
    for (const q of await a.db('lessonquizzes').where({ lessonid }).select('lessonquizid'))
      await api().delete(`/lesson/quiz/${q.lessonquizid}`).set('Authorization', a.auth.super);
    // Four components: 25 each, no remainder; then three: the practice takes the remainder.
    expect(await lesson()).toMatchObject({ brick_points: 25, quizzes_points: 0, quizcount: 0 });
    await api()
      .delete(`/lesson/learning/${(await a.db('lessonlearnings').where({ lessonid }).first()).lessonlearningid}`)
      .set('Authorization', a.auth.super);
    expect(await lesson()).toMatchObject({ brick_points: 33, learning_points: 66, practices_points: 34 });
    await expectPointsHold(a.db);
  });
});
