import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';
import { tokenFor } from './auth-helpers';

// Answers that differed from the existing classroom server's when both were run side by side on the same data.

let t: TestApp;
let teacher: string;
let learner: string;
const db = () => t.tdb.db;

beforeAll(async () => {
  t = await makeApp();
  await seedDemo(db());
  teacher = (await tokenFor(t, 3)).auth;
  learner = (await tokenFor(t, 4)).auth;
});
afterAll(async () => { await t.tdb.dispose(); });

describe('lessonheading', () => {
  const numbered = crypto.randomUUID();
  beforeAll(async () => {
    await db()('lessons').insert({
      lessonid: numbered, levelid: C.levelid, lessonname: 'Lesson 12: shapes in 3 colours', lessonorder: 9,
      lessonstatus: true, isdeleted: false,
    });
  });
  const headings = (lessons: Array<{ lessonid: string; lessonheading: unknown }>) =>
    Object.fromEntries(lessons.map((l) => [l.lessonid, l.lessonheading]));
  const expected = { [C.lessonid]: C.lessonname, [C.lesson2id]: C.lesson2name, [numbered]: '12' };

  it('is on every lesson of GET /Lesson/all: the first number in the name, else the name, as text', async () => {
    const res = await request(t.app).get('/Lesson/all').query({ levelid: C.levelid }).set('Authorization', learner);
    expect(res.status).toBe(200);
    expect(headings(res.body.data)).toEqual(expected);
  });

  it('is the same on the level list the app reads, the level progress, one lesson and the curriculum map', async () => {
    const level = await request(t.app).get(`/lesson/level/${C.levelid}`).set('Authorization', learner);
    expect(headings(level.body.data.lesson)).toEqual(expected);
    const progress = await request(t.app).get(`/lesson/progress/level/${C.levelid}`).set('Authorization', learner);
    expect(headings(progress.body.data.lessonsresult)).toEqual(expected);
    const one = await request(t.app).get(`/lesson/${numbered}/learning`).set('Authorization', learner);
    expect(one.body.data.lessonheading).toBe('12');
    const map = await request(t.app).get(`/curriculum/${C.curriculumid}/map`).set('Authorization', learner);
    const lessons = map.body.data.grades
      .flatMap((g: { levels: Array<{ lessons: unknown[] }> }) => g.levels.flatMap((l) => l.lessons));
    expect(headings(lessons)).toMatchObject(expected);
  });
});

describe('GET /teacher/standards', () => {
  it('has one {standard: null} entry, first, for the learners of the school that have no class', async () => {
    const [, , third, fourth] = C.students;
    const noClass = [third.studentid, fourth.studentid];
    await db()('students').whereIn('studentid', noClass).update({ standard: null });
    try {
      const res = await request(t.app).get('/teacher/standards').set('Authorization', teacher);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ standard: null }, { standard: C.standardid }]);
    } finally {
      await db()('students').whereIn('studentid', noClass).update({ standard: C.standardid });
    }
  });
});

describe('POST /report/studentstatus', () => {
  it("has the learner's own country; a learner without class or sign-in is shaped as the original's", async () => {
    const [first, second] = C.students;
    await db()('students').where({ studentid: first.studentid }).update({ country: 'Kenya (as enrolled)' });
    await db()('students').where({ studentid: second.studentid }).update({ standard: null });
    await db()('rpiuseraccess').insert({
      rpiuseraccessid: crypto.randomUUID(), userid: first.schooluserid, ipaddress: '127.0.0.1',
      logintime: '2026-11-20T08:00:00.000Z',
    });
    try {
      const res = await request(t.app).post('/report/studentstatus').set('Authorization', t.config.serverSyncKey)
        .send({ pageindex: 1, pagesize: 50 });
      expect(res.status).toBe(200);
      const byId = new Map(res.body.data.data.map((r: { studentid: string }) => [r.studentid, r]));
      expect(byId.get(first.studentid)).toMatchObject({
        country: 'Kenya (as enrolled)', school: { countries: { countryname: C.countryname } },
        class: { standardname: C.standardname }, status: true,
      });
      const lastLogin = (byId.get(first.studentid) as { lastLogin: string }).lastLogin;
      expect(new Date(String(lastLogin)).toISOString()).toBe('2026-11-20T08:00:00.000Z');
      const noClass = byId.get(second.studentid) as Record<string, unknown>;
      expect(noClass).toMatchObject({ class: null, status: false, standard: null });
      expect(noClass).not.toHaveProperty('lastLogin');
    } finally {
      await db()('students').where({ studentid: second.studentid }).update({ standard: C.standardid });
    }
  });
});

describe('GET /student/all (capped at 20)', () => {
  it('gives the first 20 matches by learner id, the order the existing server reads them in', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 25; i += 1) {
      const u = await tokenFor(t, 4, { schoolusername: `zz${String(99 - i).padStart(2, '0')}cap` });
      ids.push(u.studentid!);
    }
    const res = await request(t.app).get('/student/all').query({ userid: 'cap' }).set('Authorization', teacher);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { studentid: string }) => r.studentid)).toEqual([...ids].sort().slice(0, 20));
  });
});
