import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLogZip, type LogBatch } from '@lms/shared';
import { CLASSROOM_DEMO as C, seedDemo } from '../src/seed/demo';
import { makeApp, type TestApp } from './helpers';

// The loop the issue asks for, through HTTP only: a learner signs in and submits a quiz, a teacher
// downloads the activity log, and the central API's reader finds the result in it.

const binary = (res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ SERVER_SYNC_KEY: 'sk_flow_0123456789', JWT_SECRET: 'jwt_flow_0123456789' });
  await seedDemo(t.tdb.db);
});
afterAll(async () => {
  await t.tdb.dispose();
});

async function signIn(username: string): Promise<string> {
  const res = await request(t.app).post('/auth/login').send({ studentusername: username, studentpassword: C.password });
  expect(res.status).toBe(200);
  return `Bearer ${res.body.data.accessToken}`;
}

describe('learner result → teacher export → central reader', () => {
  it('carries a submitted quiz, its answers and the sign-ins into studentlog.zip', async () => {
    const learner = await signIn('demo.student');
    const starttime = Date.now() - 60_000;
    const body = {
      starttime,
      endtime: Date.now(),
      result: C.quizquestions.map((lq, i) => ({
        iscorrect: i !== 2,
        lessonquizid: C.quizid,
        lessonquizquestionid: lq,
        questionid: C.questions[i],
      })),
    };
    for (let i = 0; i < 2; i += 1) {
      const res = await request(t.app).post(`/result/lesson/quiz/${C.quizid}`).set('Authorization', learner).send(body);
      expect(res.status).toBe(200);
    }

    const teacher = await signIn('demo.teacher');
    const res = await request(t.app).get('/export/log').set('Authorization', teacher).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');

    const batches: LogBatch[] = [];
    const summary = await readLogZip({ buffer: res.body as Buffer }, { onBatch: (b) => void batches.push(b) });
    expect(summary.logIni?.present).toEqual({ result: true, progress: true, access: true });
    const results = batches.filter((b) => b.kind === 'result').flatMap((b) => b.rows);
    const mine = results.filter((r) => r.studentprogressreferenceid === C.quizid);
    // The replay wrote nothing: one attempt, with the client's start time.
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      studentid: C.students[0].studentid,
      progresstype: 2,
      starttime: new Date(starttime).toISOString(),
    });
    const answers = batches
      .filter((b) => b.kind === 'questions')
      .flatMap((b) => b.rows)
      .filter((q) => q.studentprogressid === mine[0].studentprogressid);
    expect(answers.map((a) => a.referencequestionid).sort()).toEqual([...C.quizquestions].sort());
    expect(answers.filter((a) => a.iscorrect)).toHaveLength(C.quizquestions.length - 1);
    const access = batches.filter((b) => b.kind === 'access').flatMap((b) => b.rows);
    expect(access.map((a) => a.userid)).toEqual(
      expect.arrayContaining([C.students[0].schooluserid, C.teacher.schooluserid]),
    );

    expect((await request(t.app).get('/export/log').set('Authorization', learner)).status).toBe(403);
  });
});
