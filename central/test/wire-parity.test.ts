import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS, parseContentPackage, readPackageJson } from '@lms/shared';
import { createStaff, staffLogin } from './accounts';
import { authoringApp, expectRefused, type Callers } from './authoring';
import { addLearner, seedWorld } from './people-fixtures';

// Answers that differed from the existing system's when both were run side by side on the same data.

let c: Callers;
beforeAll(async () => { c = await authoringApp(); });
afterAll(async () => { await c.t.tdb.dispose(); });

const db = () => c.t.tdb.db;
const post = (url: string, body: object) => request(c.t.app).post(url).set('Authorization', c.admin).send(body);
const put = (url: string, body: object) => request(c.t.app).put(url).set('Authorization', c.admin).send(body);
const get = (url: string) => request(c.t.app).get(url).set('Authorization', c.admin)
  .set('Content-Type', 'application/json');

describe('POST /user (the staff list)', () => {
  it('carries deleted_at and deleted_by, and never a password hash or the old verify and reset keys', async () => {
    const stamp = '2026-10-01T08:00:00.000Z';
    await db()('lmsusers').where({ lmsusername: 'teacher@authoring.test' })
      .update({ deleted_at: stamp, deleted_by: c.adminId });
    await createStaff(db(), { lmsusername: 'super@authoring.test', roleids: [ROLE_IDS.superadmin] });
    const superadmin = `Bearer ${(await staffLogin(c.t.app, 'super@authoring.test')).accessToken}`;
    const res = await request(c.t.app).post('/user').set('Authorization', superadmin)
      .send({ pageindex: 1, pagesize: 50 });
    expect(res.status).toBe(200);
    const rows = res.body.data.data as Array<Record<string, unknown>>;
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) {
      expect(row).toHaveProperty('deleted_at');
      expect(row).toHaveProperty('deleted_by');
      expect(row).not.toHaveProperty('lmsuserpasswordhash');
      expect(row).not.toHaveProperty('verifykey');
      expect(row).not.toHaveProperty('passwordchangekey');
    }
    const marked = rows.find((r) => r.lmsusername === 'teacher@authoring.test')!;
    expect([new Date(String(marked.deleted_at)).toISOString(), marked.deleted_by]).toEqual([stamp, c.adminId]);
    expect(rows.find((r) => r.lmsusername === 'admin@authoring.test'))
      .toMatchObject({ deleted_at: null, deleted_by: null });
  });
});

describe('GET /student/all (capped at 50 without a school or class)', () => {
  it('breaks ties of the creation time by learner id, so the 50 are the ones the existing system lists', async () => {
    const w = await seedWorld(db());
    const created_at = '2026-09-01T10:00:00.000Z';
    const ids: string[] = [];
    // Inserted in random id order: a list that follows the insert order (or the heap) gets other learners.
    for (let i = 0; i < 60; i += 1) {
      const { studentid } = await addLearner(db(), {
        schoolname: w.schoolA.schoolname, standard: w.classA1, schoolusername: `tie${i}`,
        curriculumids: [w.curriculum1], extra: { created_at },
      });
      ids.push(studentid);
    }
    const res = await get('/student/all');
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { studentid: string }) => r.studentid)).toEqual([...ids].sort().slice(0, 50));
  });
});

describe('questionfeedback on central', () => {
  const feedback = { correctmessage: 'Well done! ✓', incorrectmessage: 'ស្វែងរកម្តងទៀត — look at the picture again.' };
  const question = (questionidentifier: string, extra: object = {}) => ({
    questionidentifier, templatetypeid: 1, questionheading: { headingtext: 'Choose' }, questiontext: 'Which is seven?',
    questionoptions: [
      { questionoptiontext: '7', questionoptioniscorrect: true },
      { questionoptiontext: '8', questionoptioniscorrect: false },
    ],
    ...extra,
  });
  const idOf = async (questionidentifier: string) =>
    (await db()('questions').where({ questionidentifier }).first('questionid')).questionid as string;
  const stored = async (questionid: string) =>
    (await db()('questions').where({ questionid }).first('questionfeedback')).questionfeedback;

  it('is stored on create and update, read back and listed, and kept by an update without it', async () => {
    const created = await post('/question/create', question('FB one', { questionfeedback: feedback }));
    expect(created.body).toMatchObject({ error: false, data: true });
    const id = await idOf('FB one');
    expect(await stored(id)).toEqual(feedback);
    expect((await get(`/question/${id}`)).body.data.questionfeedback).toEqual(feedback);
    const list = await post('/question', {
      pageindex: 1, pagesize: 20, filter: [{ key: 'questionidentifier', value: 'FB one' }],
    });
    expect(list.body.data.data.map((q: { questionfeedback: unknown }) => q.questionfeedback)).toEqual([feedback]);

    const changed = { correctmessage: 'Yes!', incorrectmessage: null };
    expect((await put(`/question/${id}`, question('FB one', { questionfeedback: changed }))).status).toBe(200);
    expect(await stored(id)).toEqual(changed);
    // An editor that knows nothing of feedback sends no key: what a newer editor wrote stays.
    expect((await put(`/question/${id}`, question('FB one'))).status).toBe(200);
    expect(await stored(id)).toEqual(changed);
    expect((await put(`/question/${id}`, question('FB one', { questionfeedback: null }))).status).toBe(200);
    expect(await stored(id)).toBeNull();
    expect((await get(`/question/${id}`)).body.data.questionfeedback).toBeNull();
  });

  it('keeps only the two messages, and refuses another shape or an oversize message, writing nothing', async () => {
    await post('/question/create', question('FB two', { questionfeedback: { ...feedback, html: '<script>' } }));
    expect(await stored(await idOf('FB two'))).toEqual(feedback);
    const long = 'x'.repeat(1001);
    const create = (questionfeedback: unknown) => post('/question/create', question('FB three', { questionfeedback }));
    const two = await idOf('FB two');
    await expectRefused(db(), ['questions'], [
      ['string', create('Well done'), 400, /questionfeedback/],
      ['array', create([feedback]), 400, /questionfeedback/],
      ['number message', create({ correctmessage: 5 }), 400, /correctmessage/],
      ['oversize', create({ incorrectmessage: long }), 400, /incorrectmessage.*1000/],
      ['oversize update', put(`/question/${two}`, question('FB two', { questionfeedback: { correctmessage: long } })),
        400, /correctmessage.*1000/],
    ]);
  });

  it('travels in the content package a classroom server imports', async () => {
    await post('/question/create', question('FB package', { questionfeedback: feedback }));
    const id = await idOf('FB package');
    const res = await request(c.t.app).get('/sync/content').set('Authorization', c.admin).buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (x: Buffer) => chunks.push(x));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    const pkg = parseContentPackage((await readPackageJson({ buffer: res.body as Buffer })).json);
    expect(pkg.questions.find((q) => q.questionid === id)?.questionfeedback).toEqual(feedback);
  });

  it('reads back feedback a copied database holds as JSON text', async () => {
    const questionid = crypto.randomUUID();
    await db()('questions').insert({
      questionid, questionidentifier: 'FB direct', templatetypeid: 1, questionfeedback: JSON.stringify(feedback),
    });
    expect((await get(`/question/${questionid}`)).body.data.questionfeedback).toEqual(feedback);
  });
});
