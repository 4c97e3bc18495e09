import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authoring, curriculumWithGrades, document, expectPointsHold, type Authoring } from './content';

// The points model under random authoring: sequences of creates, updates, moves, deletes, reorders and
// the two bulk routes, sent through HTTP (some of them at once), then the invariants of contract §13.
// The seed is fixed, so a failure replays the same sequence.
const SEED = 20261123;
const STEPS = 300;

/** mulberry32: a small, well-mixed PRNG with a 32-bit state. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type ItemKind = 'learning' | 'plan' | 'practice' | 'quiz';
const TABLE: Record<ItemKind, string> = {
  learning: 'lessonlearnings',
  plan: 'lessonplans',
  practice: 'lessonpractices',
  quiz: 'lessonquizzes',
};

let a: Authoring;
beforeAll(async () => {
  a = await authoring();
});
afterAll(async () => {
  await a.t.tdb.dispose();
});

describe('points invariants under random authoring', () => {
  it(`hold after each of ${STEPS} random steps (seed ${SEED})`, async () => {
    const rnd = prng(SEED);
    const int = (n: number) => Math.floor(rnd() * n);
    const pick = <T>(list: T[]): T | undefined => (list.length ? list[int(list.length)] : undefined);
    let serial = 0;
    const name = (p: string) => `${p} ${(serial += 1)}`;

    const grades = await curriculumWithGrades(a.db, 3);
    const docs: string[] = [];
    for (let i = 0; i < 6; i += 1) docs.push(await document(a.db));
    const levels: string[] = [];
    const lessons: string[] = [];
    const items: Array<{ kind: ItemKind; id: string }> = [];
    const statuses: number[] = [];

    const send = async (method: 'post' | 'put' | 'delete', url: string, body?: object) => {
      const res = await request(a.t.app)[method](url).set('Authorization', a.auth.super).send(body ?? {});
      statuses.push(res.status);
      // Refusals happen (a lesson under a deleted level, a document already in the lesson); errors do not.
      expect([200, 201, 400], `${method.toUpperCase()} ${url} ${JSON.stringify(res.body)}`).toContain(res.status);
      return res;
    };
    const idOf = async (kind: ItemKind, column: string, value: string) =>
      (
        await a
          .db(TABLE[kind])
          .where({ [column]: value })
          .first()
      )?.[`lesson${kind}id`] as string | undefined;

    // A creator answers how to record what it made; writes sent at once are recorded in a fixed order
    // afterwards, so that the lists the next steps pick from do not depend on which answer came first.
    type Record_ = () => void;
    const nothing: Record_ = () => undefined;
    async function createLevel(): Promise<Record_> {
      const res = await send('post', '/level/create', {
        levelname: name('Level'),
        gradeid: pick(grades),
        levelorder: int(5),
        quiz_points: int(300),
        passing_points: 1,
      });
      return res.status === 200 ? () => levels.push(res.body.data.levelid) : nothing;
    }
    async function createLesson(): Promise<Record_> {
      const levelid = pick(levels);
      if (!levelid) return createLevel();
      const res = await send('post', '/lesson/create', {
        lessonname: name('Lesson'),
        levelid,
        lessonorder: int(5),
        total_points: int(300),
        passing_points: 2,
      });
      return res.status === 200 ? () => lessons.push(res.body.data.lessonid) : nothing;
    }
    async function createItem(
      kind: ItemKind = pick(['learning', 'plan', 'practice', 'quiz', 'quiz', 'practice', 'learning'] as ItemKind[])!,
    ): Promise<Record_> {
      const lessonid = pick(lessons);
      if (!lessonid) return createLesson();
      const label = name(kind);
      const body: Record<string, unknown> = {
        [`lesson${kind}name`]: label,
        [`lesson${kind}description`]: 'd',
        [`lesson${kind}order`]: int(6),
      };
      if (kind === 'learning' || kind === 'plan') body.documentid = pick(docs);
      else body.points = int(100);
      const res = await send('post', `/lesson/${kind}/${lessonid}`, body);
      if (res.status !== 200) return nothing;
      const itemid = (await idOf(kind, `lesson${kind}name`, label))!;
      return () => items.push({ kind, id: itemid });
    }
    const now = async (made: Promise<Record_>) => (await made)();

    const steps: Array<[weight: number, run: () => Promise<unknown>]> = [
      [3, () => now(createLevel())],
      [5, () => now(createLesson())],
      [12, () => now(createItem())],
      [
        2,
        async () => {
          const levelid = pick(levels);
          if (levelid)
            await send('put', `/level/${levelid}`, {
              levelname: name('Level'),
              gradeid: pick(grades),
              levelorder: int(5),
              quiz_points: 1,
              passing_points: 1,
            });
        },
      ],
      [
        1,
        async () => {
          const levelid = pick(levels);
          if (levelid) await send('delete', `/level/${levelid}`);
        },
      ],
      [
        3,
        async () => {
          const lessonid = pick(lessons);
          const levelid = pick(levels);
          if (lessonid && levelid)
            await send('put', `/lesson/${lessonid}`, {
              lessonname: name('Lesson'),
              levelid,
              lessonorder: int(5),
              total_points: 1,
              passing_points: 1,
            });
        },
      ],
      [
        1,
        async () => {
          const lessonid = pick(lessons);
          if (lessonid) await send('delete', `/lesson/${lessonid}`);
        },
      ],
      [
        1,
        async () => {
          const lessonid = pick(lessons);
          if (lessonid) await send('put', `/lesson/${rnd() < 0.5 ? 'deactivate' : 'activate'}/${lessonid}`);
        },
      ],
      [
        4,
        async () => {
          const item = pick(items);
          if (!item) return;
          const body: Record<string, unknown> = {
            lessonid: pick(lessons),
            [`lesson${item.kind}name`]: name(item.kind),
            [`lesson${item.kind}description`]: 'e',
          };
          if (item.kind === 'learning' || item.kind === 'plan') body.documentid = pick(docs);
          else body.points = 3;
          await send('put', `/lesson/${item.kind}/${item.id}`, body);
        },
      ],
      [
        3,
        async () => {
          const item = pick(items);
          if (item) await send('put', `/lesson/${item.kind}/order/${item.id}/${int(8)}`);
        },
      ],
      [
        3,
        async () => {
          const item = pick(items);
          if (!item) return;
          await send('delete', `/lesson/${item.kind}/${item.id}`);
          items.splice(items.indexOf(item), 1);
        },
      ],
      // Several writes at once into the same lesson and level.
      [
        2,
        async () => {
          for (const record of await Promise.all([
            createItem('learning'),
            createItem('practice'),
            createItem('quiz'),
            createLesson(),
          ]))
            record();
        },
      ],
      [1, () => send('post', '/lesson/update_reward_points')],
      [1, () => send('post', '/level/update_quiz_points')],
    ];
    const total = steps.reduce((s, [w]) => s + w, 0);
    for (let step = 0; step < STEPS; step += 1) {
      let r = int(total);
      const [, run] = steps.find(([w]) => (r -= w) < 0)!;
      await run();
      await expectPointsHold(a.db);
    }
    // The sequence did real work: many writes succeeded and some were refused.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(STEPS / 2);
    expect(await a.db('lessons').where({ isdeleted: false }).count({ n: '*' }).first()).toMatchObject({
      n: expect.any(Number),
    });
    expect(items.length).toBeGreaterThan(10);
  }, 240_000);
});
