import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoContent, DEMO, type Knex } from '@lms/db';
import { curriculumDocuments } from '../src/areas/export/store';
import { testDatabase } from './helpers';
import type { TestDatabase } from '@lms/db';

let tdb: TestDatabase;
let db: Knex;
const curriculumid = crypto.randomUUID();
const id = () => crypto.randomUUID();

async function grade(order: number, live = true): Promise<string> {
  const gradeid = id();
  await db('grades').insert({ gradeid, curriculumid, gradename: `G${order}`, gradeorder: order, gradestatus: live });
  return gradeid;
}
async function level(gradeid: string, order: number, extra: Record<string, unknown> = {}): Promise<string> {
  const levelid = id();
  await db('levels').insert({
    levelid,
    gradeid,
    levelname: `L${order}`,
    levelorder: order,
    levelstatus: true,
    ...extra,
  });
  return levelid;
}
async function lesson(levelid: string, order: number, extra: Record<string, unknown> = {}): Promise<string> {
  const lessonid = id();
  await db('lessons').insert({
    lessonid,
    levelid,
    lessonname: `Lesson ${order}`,
    lessonorder: order,
    lessonstatus: true,
    ...extra,
  });
  return lessonid;
}
async function learning(lessonid: string, order: number, documentname: string): Promise<void> {
  const documentid = id();
  await db('documents').insert({
    documentid,
    documenttypeid: 2,
    documentname,
    documents3meta: JSON.stringify({ Key: documentname }),
    documenttags: JSON.stringify([]),
  });
  await db('lessonlearnings').insert({
    lessonlearningid: id(),
    lessonlearningname: documentname,
    lessonlearningdescription: '',
    lessonlearningstatus: true,
    lessonid,
    documentid,
    lessonlearningorder: order,
    points: 1,
  });
}
async function question(file: string): Promise<string> {
  const questionid = id();
  await db('questions').insert({
    questionid,
    questionidentifier: file,
    templatetypeid: 1,
    questionstatus: true,
    questioncorrectvalue: 1,
    questiontext: file,
    questionheading: JSON.stringify({ heading: 'h' }),
    questionoptions: JSON.stringify([]),
    questionfile: JSON.stringify({ filename: file }),
    questiondistractors: JSON.stringify([]),
    questiontags: JSON.stringify([]),
  });
  return questionid;
}

beforeAll(async () => {
  tdb = await testDatabase();
  db = tdb.db;
  await seedDemoContent(db);
  await db('curriculums').insert({
    curriculumid,
    curriculumname: 'Ordered',
    subjectid: DEMO.subjectid,
    curriculumstatus: true,
  });
  // Inserted out of order; the walk is grade, level, lesson by their order columns.
  const gB = await grade(2);
  const gA = await grade(1);
  const gX = await grade(3, false);
  const a2 = await level(gA, 2);
  const a1 = await level(gA, 1);
  const a3 = await level(gA, 3, { isdeleted: true });
  const a1b = await lesson(a1, 2);
  const a1a = await lesson(a1, 1);
  const a1c = await lesson(a1, 3, { lessonstatus: false });
  await learning(a1a, 2, 'a1a-2.png');
  await learning(a1a, 1, 'a1a-1.png');
  const qp = await question('p.png');
  const practice = id();
  await db('lessonpractices').insert({
    lessonpracticeid: practice,
    lessonid: a1a,
    lessonpracticeorder: 1,
    lessonpracticestatus: true,
    lessonpracticename: 'P',
    lessonpracticedescription: '',
    points: 1,
  });
  await db('lessonpracticequestions').insert({
    lessonpracticequestionid: id(),
    lessonpracticeid: practice,
    questionid: qp,
    lessonpracticequestionstatus: true,
    lessonpracticequestionorder: 1,
  });
  const qq = await question('q.png');
  const quiz = id();
  await db('lessonquizzes').insert({
    lessonquizid: quiz,
    lessonid: a1a,
    lessonquizorder: 1,
    lessonquizname: 'Q',
    lessonquizdescription: '',
    lessonquizstatus: true,
    points: 1,
  });
  await db('lessonquizquestions').insert({
    lessonquizquestionid: id(),
    lessonquizid: quiz,
    questionid: qq,
    lessonquizquestionstatus: true,
    lessonquizquestionorder: 1,
  });
  await learning(a1b, 1, 'a1b.mp4');
  await learning(a1c, 1, 'hidden-lesson.png');
  const ql = await question('l.png');
  await db('levelquizquestions').insert([
    {
      levelquizquestionid: id(),
      levelid: a1,
      questionid: qp,
      levelquizquestionstatus: true,
      levelquizquestionorder: 2,
      lessonid: a1a,
    },
    {
      levelquizquestionid: id(),
      levelid: a1,
      questionid: ql,
      levelquizquestionstatus: true,
      levelquizquestionorder: 1,
      lessonid: a1a,
    },
  ]);
  await learning(await lesson(a2, 1), 1, 'a2a.png');
  await learning(await lesson(a3, 1), 1, 'hidden-level.png');
  const b1a = await lesson(await level(gB, 1), 1);
  await learning(b1a, 1, 'b1a.png');
  await learning(b1a, 2, 'a1a-1.png');
  await learning(await lesson(await level(gX, 1), 1), 1, 'hidden-grade.png');
});
afterAll(async () => {
  await tdb.dispose();
});

describe('curriculumDocuments', () => {
  it("lists the live tree's media in the order a learner meets them, each once", async () => {
    expect(await curriculumDocuments(db, curriculumid)).toEqual([
      'a1a-1.png',
      'a1a-2.png',
      'p.png',
      'q.png',
      'a1b.mp4',
      'l.png',
      'a2a.png',
      'b1a.png',
    ]);
  });

  it('reads the tree with a fixed number of queries, however many lessons it has', async () => {
    let queries = 0;
    const count = () => { queries += 1; };
    db.on('query', count);
    try {
      await curriculumDocuments(db, curriculumid);
    } finally {
      db.off('query', count);
    }
    expect(queries).toBeLessThanOrEqual(7);
  });

  it('keeps the order across the chunks a large tree is read in', async () => {
    const big = crypto.randomUUID();
    await db('curriculums').insert({
      curriculumid: big,
      curriculumname: 'Big',
      subjectid: DEMO.subjectid,
      curriculumstatus: true,
    });
    const gradeid = id();
    await db('grades').insert({ gradeid, curriculumid: big, gradename: 'G', gradeorder: 1, gradestatus: true });
    const levelid = await level(gradeid, 1);
    const n = 1203;
    const rows = Array.from({ length: n }, (_, i) => ({ order: n - i, lessonid: id(), documentid: id() }));
    for (let i = 0; i < n; i += 200) {
      const part = rows.slice(i, i + 200);
      await db('lessons').insert(
        part.map((r) => ({
          lessonid: r.lessonid,
          levelid,
          lessonname: `L${r.order}`,
          lessonorder: r.order,
          lessonstatus: true,
        })),
      );
      await db('documents').insert(
        part.map((r) => ({
          documentid: r.documentid,
          documenttypeid: 2,
          documentname: `d${r.order}.png`,
          documents3meta: '{}',
          documenttags: '[]',
        })),
      );
      await db('lessonlearnings').insert(
        part.map((r) => ({
          lessonlearningid: id(),
          lessonlearningname: 'x',
          lessonlearningdescription: '',
          lessonlearningstatus: true,
          lessonid: r.lessonid,
          documentid: r.documentid,
          lessonlearningorder: 1,
          points: 1,
        })),
      );
    }
    expect(await curriculumDocuments(db, big)).toEqual(Array.from({ length: n }, (_, i) => `d${i + 1}.png`));
  });

  it('answers an empty list for a curriculum without grades', async () => {
    expect(await curriculumDocuments(db, crypto.randomUUID())).toEqual([]);
  });
});
