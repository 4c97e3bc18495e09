import crypto from 'node:crypto';
import request from 'supertest';
import { expect } from 'vitest';
import type { Knex } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createRole, createStaff, staffLogin } from './accounts';

/** Fixtures and checks shared by the authoring tests (levels, lessons, their items and question links). */

export const id = (): string => crypto.randomUUID();

export interface Authoring {
  t: TestApp;
  db: Knex;
  /** Bearer headers: superadmin (every permission), admin, teacher (view only), a user without permissions. */
  auth: { super: string; admin: string; teacher: string; none: string };
  superId: string;
  /** The superadmin's refresh token (a token of the wrong type for every route here). */
  refresh: string;
}

export async function authoring(): Promise<Authoring> {
  const t = await makeApp({ RATE_LIMIT_MAX: '1000000' });
  const db = t.tdb.db;
  const superId = await createStaff(db, { lmsusername: 'super@content.test', roleids: [ROLE_IDS.superadmin] });
  await createStaff(db, { lmsusername: 'admin@content.test', roleids: [ROLE_IDS.admin] });
  await createStaff(db, { lmsusername: 'teacher@content.test', roleids: [ROLE_IDS.teacher] });
  await createStaff(db, { lmsusername: 'none@content.test', roleids: [await createRole(db, 'Nothing', [])] });
  const tokens = await staffLogin(t.app, 'super@content.test');
  const bearer = async (u: string) => `Bearer ${(await staffLogin(t.app, u)).accessToken}`;
  return {
    t,
    db,
    superId,
    refresh: tokens.refreshToken,
    auth: {
      super: `Bearer ${tokens.accessToken}`,
      admin: await bearer('admin@content.test'),
      teacher: await bearer('teacher@content.test'),
      none: await bearer('none@content.test'),
    },
  };
}

/** A subject, a curriculum and `n` grades under it (the grade routes are not these tests' concern). */
export async function curriculumWithGrades(db: Knex, n: number): Promise<string[]> {
  const subjectid = id();
  const curriculumid = id();
  await db('subjects').insert({ subjectid, subjectname: `Subject ${subjectid.slice(0, 6)}`, subjectstatus: true });
  await db('curriculums').insert({
    curriculumid,
    curriculumname: `Curriculum ${curriculumid.slice(0, 6)}`,
    subjectid,
    curriculumstatus: true,
  });
  const grades = Array.from({ length: n }, (_, i) => ({
    gradeid: id(),
    curriculumid,
    gradename: `Grade ${i + 1}`,
    gradeorder: i + 1,
    gradestatus: true,
    passing_points: 0,
    points: 0,
  }));
  await db('grades').insert(grades);
  return grades.map((g) => g.gradeid);
}

export async function document(db: Knex, o: { name?: string; deleted?: boolean } = {}): Promise<string> {
  const documentid = id();
  await db('documents').insert({
    documentid,
    documenttypeid: 2,
    documentname: o.name ?? `${documentid.slice(0, 8)}.mp4`,
    documents3meta: JSON.stringify({ Key: 'k' }),
    documenttags: JSON.stringify([]),
    isdeleted: o.deleted ?? false,
  });
  return documentid;
}

export async function question(db: Knex, o: { identifier?: string; deleted?: boolean } = {}): Promise<string> {
  const questionid = id();
  await db('questions').insert({
    questionid,
    questionidentifier: o.identifier ?? `Q-${questionid.slice(0, 6)}`,
    templatetypeid: 1,
    questionstatus: true,
    questioncorrectvalue: 1,
    questiontext: 't',
    questionheading: JSON.stringify({ heading: 'h' }),
    questionoptions: JSON.stringify([]),
    questionfile: JSON.stringify({}),
    questiondistractors: JSON.stringify([]),
    questiontags: JSON.stringify([]),
    isdeleted: o.deleted ?? false,
  });
  return questionid;
}

export const levelBody = (gradeid: string, o: Record<string, unknown> = {}) => ({
  levelname: `Level ${id().slice(0, 8)}`,
  leveldescription: 'A level',
  gradeid,
  levelorder: 1,
  quiz_points: 7,
  passing_points: 3,
  ...o,
});
export const lessonBody = (levelid: string, o: Record<string, unknown> = {}) => ({
  lessonname: `Lesson ${id().slice(0, 8)}`,
  lessondescription: 'A lesson',
  levelid,
  lessonorder: 1,
  total_points: 55,
  passing_points: 9,
  ...o,
});

/** Creates through HTTP and answers the new id. */
export async function createLevel(a: Authoring, gradeid: string, o: Record<string, unknown> = {}): Promise<string> {
  const res = await request(a.t.app)
    .post('/level/create')
    .set('Authorization', a.auth.super)
    .send(levelBody(gradeid, o));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.levelid as string;
}
export async function createLesson(a: Authoring, levelid: string, o: Record<string, unknown> = {}): Promise<string> {
  const res = await request(a.t.app)
    .post('/lesson/create')
    .set('Authorization', a.auth.super)
    .send(lessonBody(levelid, o));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.lessonid as string;
}

/** Every table an authoring write may touch, read whole (for "a refused write leaves the database as it was"). */
const TABLES: Array<[string, string]> = [
  ['grades', 'gradeid'],
  ['levels', 'levelid'],
  ['lessons', 'lessonid'],
  ['lessonlearnings', 'lessonlearningid'],
  ['lessonplans', 'lessonplanid'],
  ['lessonpractices', 'lessonpracticeid'],
  ['lessonquizzes', 'lessonquizid'],
  ['lessonpracticequestions', 'lessonpracticequestionid'],
  ['lessonquizquestions', 'lessonquizquestionid'],
  ['levelquizquestions', 'levelquizquestionid'],
];
export async function snapshot(db: Knex): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [table, key] of TABLES) out[table] = await db(table).orderBy(key).select();
  return out;
}

/**
 * The points invariants of contract §13: every live lesson with components has component points that
 * add up to its total_points (100), learning/practice/quiz sums and counts to match; a level's points
 * are its live lessons' total_points plus its quiz_points; a grade's, its live levels' points.
 */
export async function expectPointsHold(db: Knex): Promise<void> {
  const lessons = await db('lessons').select();
  const comps = {
    learning: await db('lessonlearnings').select('lessonid', 'points'),
    practice: await db('lessonpractices').select('lessonid', 'points'),
    quiz: await db('lessonquizzes').select('lessonid', 'points'),
  };
  const sum = (rows: Array<{ lessonid: string; points: number }>, lessonid: string) =>
    rows.filter((r) => r.lessonid === lessonid).reduce((s, r) => s + Number(r.points), 0);
  const count = (rows: Array<{ lessonid: string }>, lessonid: string) =>
    rows.filter((r) => r.lessonid === lessonid).length;
  for (const l of lessons.filter((x: { isdeleted: boolean }) => !x.isdeleted)) {
    const n = count(comps.learning, l.lessonid) + count(comps.practice, l.lessonid) + count(comps.quiz, l.lessonid);
    expect(l.total_points, `lesson ${l.lessonname}`).toBe(100);
    if (!n) continue;
    const learning = sum(comps.learning, l.lessonid);
    const practice = sum(comps.practice, l.lessonid);
    const quiz = sum(comps.quiz, l.lessonid);
    expect(learning + practice + quiz, `lesson ${l.lessonname} components`).toBe(l.total_points);
    expect([l.learning_points, l.practices_points, l.quizzes_points], `lesson ${l.lessonname} sums`).toEqual([
      learning,
      practice,
      quiz,
    ]);
    expect([l.practicecount, l.quizcount, l.brick_points]).toEqual([
      count(comps.practice, l.lessonid),
      count(comps.quiz, l.lessonid),
      Math.floor(100 / n),
    ]);
  }
  const levels = await db('levels').select();
  for (const v of levels) {
    const lessonSum = lessons
      .filter((l: { levelid: string; isdeleted: boolean }) => l.levelid === v.levelid && !l.isdeleted)
      .reduce((s: number, l: { total_points: number }) => s + Number(l.total_points), 0);
    expect(v.points, `level ${v.levelname}`).toBe(lessonSum + Number(v.quiz_points));
  }
  for (const g of await db('grades').select()) {
    const levelSum = levels
      .filter((v: { gradeid: string; isdeleted: boolean }) => v.gradeid === g.gradeid && !v.isdeleted)
      .reduce((s: number, v: { points: number }) => s + Number(v.points), 0);
    expect(g.points, `grade ${g.gradename}`).toBe(levelSum);
  }
}

/** Counts the statements `fn` sends. */
export async function countQueries(db: Knex, fn: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const on = () => { n += 1; };
  db.on('query', on);
  try {
    await fn();
  } finally {
    db.off('query', on);
  }
  return n;
}

/** A body just over the default 1 MB JSON limit. */
export const oversize = () => ({ levelname: 'x'.repeat(1_100_000) });
