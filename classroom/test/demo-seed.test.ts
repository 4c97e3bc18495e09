import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent, type Knex } from '@lms/db';
import { DEMO_IDS, DEMO_QUESTIONS } from '@lms/shared';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';

// The demo data a person with a tablet meets first: its classes, its questions, and what seeding it does to a
// classroom database that already holds something.

const RENDERED_TEMPLATES = [1, 2, 3, 4, 5, 6, 7, 8, 18, 19, 20, 21, 22, 23, 24];
const TABLES = [
  'countries',
  'schools',
  'standards',
  'subjects',
  'curriculums',
  'grades',
  'levels',
  'lessons',
  'documents',
  'lessonlearnings',
  'lessonplans',
  'lessonpractices',
  'lessonpracticequestions',
  'lessonquizzes',
  'lessonquizquestions',
  'levelquizquestions',
  'questions',
  'curriculumbaseline',
  'baselinequestion',
  'schoolusers',
  'students',
];

/** Every row of the demo's tables, keyed by table, in a stable order; password hashes are salted anew on each run. */
async function dump(db: Knex): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows: Array<Record<string, unknown>> = await db(table).select();
    out[table] = rows
      .map((r) => ({ ...r, schooluserpasswordhash: undefined }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  return out;
}

let t: TestApp;
const db = () => t.tdb.db;
const outsider = { schooluserid: crypto.randomUUID(), studentid: crypto.randomUUID() };

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  // What an earlier demo seed left: the shared skeleton, with a demo learner in its class by name and in its lesson.
  await seedDemoContent(db());
  const amina = C.students[0];
  await db()('schoolusers').insert([
    {
      schooluserid: amina.schooluserid,
      schoolusername: amina.schoolusername,
      schooluserpasswordhash: 'old',
      schooluserrole: 4,
      schoolname: DEMO.schoolname,
    },
    {
      schooluserid: outsider.schooluserid,
      schoolusername: 'someone.else',
      schooluserpasswordhash: 'kept',
      schooluserrole: 4,
      schoolname: 'Another School',
    },
  ]);
  const row = (studentid: string, schooluserid: string, extra: Record<string, unknown>) => ({
    studentid,
    schooluserid,
    studentfirstname: 'Old',
    genderid: 1,
    schoolname: DEMO.schoolname,
    city: 'x',
    country: 'x',
    state: 'x',
    isactive: true,
    curriculumid: DEMO.curriculumid,
    curriculumids: JSON.stringify([DEMO.curriculumid]),
    ...extra,
  });
  await db()('students').insert([
    row(amina.studentid, amina.schooluserid, {
      standard: DEMO.standardname,
      gradeid: DEMO.gradeid,
      startinglevelid: DEMO.levelid,
      studentcurrentlevelid: DEMO.levelid,
      studentcurrentlessonid: DEMO.lessonid,
    }),
    row(outsider.studentid, outsider.schooluserid, { standard: 'Class 9', schoolname: 'Another School' }),
  ]);
  await seedDemo(db());
});
afterAll(async () => { await t.tdb.dispose(); });

describe('the classroom demo seed', () => {
  it('replaces an earlier demo curriculum, moves its learners to the new one, ' +
    'and leaves other learners alone', async () => {
    expect(await db()('schools').select('schoolid', 'schoolname')).toEqual([
      { schoolid: DEMO_IDS.schoolid, schoolname: 'Demo Primary School' },
    ]);
    expect(
      (await db()('lessons').where('levelid', DEMO_IDS.levelid).orderBy('lessonorder').select('lessonid')).map(
        (l) => l.lessonid,
      ),
    ).toEqual(DEMO_IDS.lessons.map((l) => l.lessonid));
    expect(await db()('lessons').where('levelid', DEMO_IDS.level2.levelid).pluck('lessonid')).toEqual([
      DEMO_IDS.level2.lesson.lessonid,
    ]);
    expect(await db()('students').where('studentid', C.students[0].studentid).first()).toMatchObject({
      studentfirstname: 'Amina',
      studentlastname: 'Okafor',
      standard: DEMO_IDS.standardid,
      curriculumid: DEMO_IDS.curriculumid,
      gradeid: DEMO_IDS.gradeid,
      studentcurrentlessonid: DEMO_IDS.lessons[0].lessonid,
    });
    expect(await db()('students').where('studentid', outsider.studentid).first()).toMatchObject({
      studentfirstname: 'Old',
      standard: 'Class 9',
      curriculumid: DEMO.curriculumid,
    });
    expect(
      (await db()('schoolusers').where('schooluserid', outsider.schooluserid).first()).schooluserpasswordhash,
    ).toBe('kept');
  });

  it('changes nothing when run again', async () => {
    const before = await dump(db());
    await seedDemo(db());
    expect(await dump(db())).toEqual(before);
  });

  it('puts every demo learner in the demo class by id, and the sign-in carries that id', async () => {
    const rows = await db()('students')
      .whereIn(
        'studentid',
        DEMO_IDS.learners.map((l) => l.studentid),
      )
      .select('schooluserid', 'standard');
    expect(rows).toHaveLength(DEMO_IDS.learners.length);
    expect(new Set(rows.map((r) => r.standard))).toEqual(new Set([DEMO_IDS.standardid]));
    expect(await db()('standards').where('standardid', DEMO_IDS.standardid).first()).toMatchObject({
      standardname: 'Class 4A',
      schoolid: DEMO_IDS.schoolid,
    });
    for (const l of DEMO_IDS.learners) {
      const res = await request(t.app)
        .post('/auth/login')
        .send({ studentusername: l.schoolusername, studentpassword: 'demo' });
      expect(res.status).toBe(200);
      expect(jwt.decode(res.body.data.accessToken)).toMatchObject({
        standard: DEMO_IDS.standardid,
        studentlastname: l.studentlastname,
        schooluserrole: 4,
      });
    }
    expect(
      (await request(t.app).post('/auth/login').send({ studentusername: 'demo.teacher', studentpassword: 'demo' }))
        .status,
    ).toBe(200);
  });

  it('stores its questions in the central format, of template types the tablet renders, ' +
    'each answerable and with feedback', async () => {
    const rows = await db()('questions').whereIn('questionid', DEMO_IDS.questionids).orderBy('questionid');
    expect(rows.map((q) => q.questionid)).toEqual([...DEMO_IDS.questionids]);
    const optionIds = new Set<string>();
    for (const q of rows) {
      expect(RENDERED_TEMPLATES).toContain(q.templatetypeid);
      expect(q.questionheading.headingtext).toEqual(expect.any(String));
      expect(q.questionheading.headingtext.length).toBeGreaterThan(0);
      expect(q.questionfeedback).toEqual({ correctmessage: expect.any(String), incorrectmessage: expect.any(String) });
      expect(q.questionoptions.length).toBeGreaterThan(0);
      expect(
        q.questionoptions.some((o: { questionoptioniscorrect: boolean }) => o.questionoptioniscorrect === true),
      ).toBe(true);
      for (const o of q.questionoptions) {
        expect(o).toMatchObject({
          questionoptionid: expect.any(String),
          questionoptiontext: expect.any(String),
          questionoptioniscorrect: expect.any(Boolean),
          questionoptionsequence: expect.any(Number),
        });
        expect(optionIds.has(o.questionoptionid)).toBe(false);
        optionIds.add(o.questionoptionid);
        if (!o.questionoptionistext)
          expect(o.questionoptionfile).toMatchObject({
            filename: expect.stringMatching(/\.png$/),
            filetype: 6,
            fileext: 'png',
          });
      }
    }
    const byType = new Map(rows.map((q) => [q.templatetypeid, q]));
    expect([...byType.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(
      byType
        .get(7)!
        .questionoptions.map(
          (o: {
            questionassociate: { questionassociatetext: string; questionoptionid: string };
            questionoptionid: string;
          }) => [
            o.questionassociate.questionassociatetext,
            o.questionassociate.questionoptionid === o.questionoptionid,
          ],
        ),
    ).toEqual([
      ['hat', true],
      ['log', true],
    ]);
    expect(byType.get(8)!.questiontext).toContain('-----');
    expect(
      byType.get(8)!.questiondistractors.map((x: { questiondistractortext: string }) => x.questiondistractortext),
    ).toEqual(['hat', 'dog']);
    // The rows are exactly the shared definitions central's demo authors from.
    expect(
      rows.map((q) => ({
        questionid: q.questionid,
        questionoptions: q.questionoptions,
        questionheading: q.questionheading,
      })),
    ).toEqual(
      DEMO_QUESTIONS.map((q) => ({
        questionid: q.questionid,
        questionoptions: q.questionoptions,
        questionheading: q.questionheading,
      })),
    );
  });

  it('refuses, and changes nothing, when a learner outside the demo points at content the demo replaces', async () => {
    const other = await makeApp();
    try {
      await seedDemoContent(other.tdb.db);
      await other.tdb
        .db('schoolusers')
        .insert({
          schooluserid: outsider.schooluserid,
          schoolusername: 'x',
          schooluserpasswordhash: '',
          schooluserrole: 4,
          schoolname: DEMO.schoolname,
        });
      await other.tdb.db('students').insert({
        studentid: outsider.studentid,
        schooluserid: outsider.schooluserid,
        studentfirstname: 'X',
        genderid: 1,
        schoolname: DEMO.schoolname,
        city: 'x',
        country: 'x',
        state: 'x',
        isactive: true,
        curriculumid: DEMO.curriculumid,
        curriculumids: JSON.stringify([DEMO.curriculumid]),
        gradeid: DEMO.gradeid,
      });
      const before = await dump(other.tdb.db);
      await expect(seedDemo(other.tdb.db)).rejects.toThrow(
        /a learner outside the demo still points at a grade, level or lesson/,
      );
      expect(await dump(other.tdb.db)).toEqual(before);
    } finally {
      await other.tdb.dispose();
    }
  });
});
