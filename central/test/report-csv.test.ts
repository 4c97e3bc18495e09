import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { W, addAttempts, addLearners, addLessonProgress, seedAna, seedWorld, uuid, type Learner } from './report-data';

// The CSV downloads (contract §16.4): `report.csv`, `application/csv`, column orders, missing values,
// the header line alone when no learner is chosen (decision 25), the activity file's odd layout, UTF-8
// names, formula-safe cells; the online downloads written while the classroom's rows arrive.

let t: TestApp;
let classroom: Server;
const auth: Record<string, string> = {};
let ana: Learner;
let bopha: Learner;

// A stand-in classroom server: `answer` writes the response of the next report request.
let answer: (req: express.Request, res: express.Response) => void = (_req, res) => {
  res.json({ error: false, data: [] });
};
const received: Array<{ url: string; body: any }> = [];

beforeAll(async () => {
  const fake = express();
  fake.use(express.json());
  fake.post(/.*/, (req, res) => {
    received.push({ url: req.path, body: req.body });
    answer(req, res);
  });
  classroom = fake.listen(0, '127.0.0.1');
  await new Promise((r) => classroom.once('listening', r));
  const url = `http://127.0.0.1:${(classroom.address() as AddressInfo).port}`;

  t = await makeApp({ RATE_LIMIT_MAX: '100000', RPI_CLOUD: url, SERVER_SYNC_KEY: 'csv-sync-key' });
  const db = t.tdb.db;
  await seedWorld(db);
  ({ ana } = await seedAna(db));
  [bopha] = await addLearners(db, [
    { school: 'sunrise', username: 'សុខា', created_at: '2026-02-01T00:00:00Z' },
    { school: 'sunrise', username: '=cmd', created_at: '2026-03-01T00:00:00Z' },
  ]);
  await addAttempts(db, [
    { studentid: bopha.studentid, reference: W.quiz.ls1, ispass: false, pct: 72.5, at: '2026-06-01T08:00:00Z' },
  ]);
  await addLessonProgress(db, bopha.studentid, ['ls1']);
  await createStaff(db, { lmsusername: 'super@csv.test', roleids: [ROLE_IDS.superadmin] });
  auth.super = `Bearer ${(await staffLogin(t.app, 'super@csv.test')).accessToken}`;
  await createStaff(db, { lmsusername: 'scoped@csv.test', roleids: [ROLE_IDS.admin] });
  await db('lmsusers').where({ lmsusername: 'scoped@csv.test' }).update({ schools: JSON.stringify([W.school.lotus]) });
  auth.scoped = `Bearer ${(await staffLogin(t.app, 'scoped@csv.test')).accessToken}`;
});
afterAll(async () => {
  await new Promise((r) => classroom.close(r));
  await t.tdb.dispose();
});
beforeEach(() => {
  received.length = 0;
});

const post = (url: string, body: object, who = 'super') =>
  request(t.app).post(url).set('Authorization', auth[who]).send(body);
const f = (filters: Record<string, unknown>) => ({
  pageindex: 1,
  pagesize: 1000,
  filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
});
const lines = (text: string) => text.split('\n');

function expectCsvHeaders(res: request.Response): void {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/csv/);
  expect(res.headers['content-disposition']).toBe('attachment; filename="report.csv"');
}

describe('POST /report/studentprogress/download', () => {
  it('one line per lesson in the contract\'s columns, N/A, 0% and 0 where there is no attempt', async () => {
    const res = await post('/report/studentprogress/download', f({ studentid: ana.studentid }));
    expectCsvHeaders(res);
    expect(lines(res.text)).toEqual([
      'curriculum,school,userid,class,course,level,lesson,marks,totalquestions,percentage,quizscore,result',
      'Maths,Sunrise School,ana,Class A,Grade 1,Level 1,Adding,1,2,60%,6,Redo',
      'Maths,Sunrise School,ana,Class A,Grade 1,Level 1,Counting,2,2,85%,9,Pass',
      'Maths,Sunrise School,ana,Class A,Grade 1,Level 2,Taking away,N/A,N/A,0%,0,N/A',
      'Maths,Sunrise School,ana,Class A,Grade 2,Level 3,Times tables,N/A,N/A,0%,0,N/A',
    ]);
  });

  it('is the header line alone when no learner is chosen', async () => {
    const res = await post('/report/studentprogress/download', f({ studentid: '', curriculumid: '' }));
    expectCsvHeaders(res);
    expect(res.text).toBe(
      'curriculum,school,userid,class,course,level,lesson,marks,totalquestions,percentage,quizscore,result',
    );
  });
});

describe('POST /report/studentprogress/class/download', () => {
  it('every learner of the class, whatever the page size; UTF-8 names survive; no cell runs as a formula', async () => {
    const res = await post('/report/studentprogress/class/download', {
      pageindex: 1,
      pagesize: 1,
      filter: [{ key: 'standard', value: W.class.sunrise }],
    });
    expectCsvHeaders(res);
    expect(lines(res.text)).toEqual([
      'curriculum,school,userid,class,course,level,lesson,marks,totalquestions,percentage,quizscore,result',
      "Maths,Sunrise School,'=cmd,Class A,Grade 1,Level 1,Counting,N/A,N/A,0%,0,N/A",
      'Maths,Sunrise School,ana,Class A,Grade 1,Level 1,Counting,2,2,85%,9,Pass',
      'Maths,Sunrise School,សុខា,Class A,Grade 1,Level 1,Counting,1,2,72.5%,7,Redo',
    ]);
    expect(Buffer.from(res.text, 'utf8').includes(Buffer.from('សុខា', 'utf8'))).toBe(true);
  });
});

describe('POST /report/studentlevelquiz/download and /studentlevelquiz/class/download', () => {
  it('per level, without a lesson column', async () => {
    const res = await post('/report/studentlevelquiz/download', f({ studentid: ana.studentid }));
    expect(lines(res.text)).toEqual([
      'curriculum,school,userid,class,course,level,marks,totalquestions,percentage,quizscore,result',
      'Maths,Sunrise School,ana,Class A,Grade 1,Level 1,3,3,90%,8,Pass',
      'Maths,Sunrise School,ana,Class A,Grade 1,Level 2,N/A,N/A,0%,0,N/A',
      'Maths,Sunrise School,ana,Class A,Grade 2,Level 3,N/A,N/A,0%,0,N/A',
    ]);
    const cls = await post('/report/studentlevelquiz/class/download', f({ standard: W.class.sunrise }));
    expect(lines(cls.text)[2]).toBe('Maths,Sunrise School,ana,Class A,Grade 1,Level 1,3,3,90%,8,Pass');
    expect((await post('/report/studentlevelquiz/class/download', f({}))).text).toBe(
      'curriculum,school,userid,class,course,level,marks,totalquestions,percentage,quizscore,result',
    );
  });
});

describe('POST /report/studentlastcompletedquiz/download', () => {
  it('curriculum, country, school, user, class, the quiz reached and its score', async () => {
    const res = await post('/report/studentlastcompletedquiz/download', f({ standard: W.class.sunrise }));
    expectCsvHeaders(res);
    expect(lines(res.text)).toEqual([
      'curriculum,country,school,userid,class,course,level,lesson,score,result',
      "Maths,Cambodia,Sunrise School,'=cmd,Class A,N/A,N/A,N/A,N/A,N/A",
      'Maths,Cambodia,Sunrise School,សុខា,Class A,Grade 1,Level 1,Counting,72.5 %,Redo',
      'Maths,Cambodia,Sunrise School,ana,Class A,Grade 1,Level 2,Taking away,90 %,Pass',
    ]);
  });
});

describe('POST /report/studentstatus/download', () => {
  it("the original's layout: the period, a blank line, the titles, one line per learner", async () => {
    await t.tdb
      .db('rpiuseraccess')
      .insert({
        rpiuseraccessid: uuid(),
        userid: ana.schooluserid,
        logintime: new Date('2026-05-03T14:05:09Z'),
        ipaddress: '1',
      });
    await t.tdb
      .db('studentappusages')
      .insert({
        studentappusageid: uuid(),
        schooluserid: ana.schooluserid,
        time_spent: 125,
        created_at: new Date('2026-05-03T14:10:00Z'),
      });
    const res = await post(
      '/report/studentstatus/download',
      f({
        countryid: '',
        schoolname: W.schoolname.sunrise,
        standard: '',
        studentid: '',
        startDate: '2026-05-01T00:00:00.000Z',
        endDate: '',
      }),
    );
    expectCsvHeaders(res);
    expect(lines(res.text)).toEqual([
      'Start Date,End Date,, ,  ,   ,    ,     ',
      '5/1/2026,N/A,,,,,,',
      ',,,,,,,',
      'curriculum,country,schoolname,userid,class,active,totalusages,lastlogin',
      "Maths,Cambodia,Sunrise School,'=cmd,Class A,false,0,",
      'Maths,Cambodia,Sunrise School,ana,Class A,false,3,5/3/2026 2:05:09 PM',
      'Maths,Cambodia,Sunrise School,សុខា,Class A,false,0,',
    ]);
  });

  it('without any filter but the school, only the page asked for (as the original did)', async () => {
    const res = await post('/report/studentstatus/download', {
      pageindex: 1,
      pagesize: 1,
      filter: [{ key: 'countryid', value: '' }],
    });
    expect(lines(res.text)).toHaveLength(5);
    expect(lines(res.text)[1]).toBe('N/A,N/A,,,,,,');
  });
});

describe('the online downloads (proxied to the classroom server)', () => {
  const row = (i: number) => ({
    school: { schoolid: W.school.sunrise, schoolname: 'Sunrise School' },
    schooluser: { schoolusername: `learner${i}` },
    class: { standardname: 'Class A' },
    grade: { gradename: 'Grade 1' },
    level: { levelname: 'Level 1' },
    lesson: { lessonname: 'Counting' },
    curriculum: { curriculumname: 'Maths' },
    laststudentprogress: { marks: 2, resultpercentage: 90, scores: 5 },
    totalquestions: 2,
  });

  it('writes the CSV while the classroom\'s rows are still arriving (nothing is held whole)', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => { release = r; });
    answer = (_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      // Split inside a row and inside a multi-byte character, as a network does.
      const first = Array.from({ length: 3000 }, (_, i) => JSON.stringify(row(i))).join(',');
      const head = `{"error":false,"data":[${first},`;
      const tail = Buffer.from(`${JSON.stringify({ ...row(3000), schooluser: { schoolusername: 'សុខា' } })}]}`, 'utf8');
      res.write(head.slice(0, 1001));
      res.write(head.slice(1001));
      res.write(tail.subarray(0, 120));
      // The rest only once central has begun to answer: a proxy that waited for the whole body would stall here.
      void released.then(() => {
        res.write(tail.subarray(120, 130));
        res.end(tail.subarray(130));
      });
    };
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const text = await new Promise<string>((resolve, reject) => {
        const req = http.request(
          {
            port,
            host: '127.0.0.1',
            path: '/report/online/studentprogress/download',
            method: 'POST',
            headers: { authorization: auth.super, 'content-type': 'application/json' },
          },
          (res) => {
            expect(res.headers['content-type']).toMatch(/^application\/csv/);
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => {
              chunks.push(c);
              release();
            });
            res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(f({ standard: W.class.sunrise })));
      });
      const out = lines(text);
      expect(out[0]).toBe(
        'curriculum,school,userid,class,course,level,lesson,marks,totalquestions,percentage,quizscore,result',
      );
      expect(out[1]).toBe('Maths,Sunrise School,learner0,Class A,Grade 1,Level 1,Counting,2,2,90%,5,Pass');
      expect(out).toHaveLength(3002);
      expect(out[3001]).toBe('Maths,Sunrise School,សុខា,Class A,Grade 1,Level 1,Counting,2,2,90%,5,Pass');
      expect(received[0]).toMatchObject({
        url: '/report/studentprogress/download',
        body: f({ standard: W.class.sunrise }),
      });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('keeps the activity layout, and gives a caller of one school only that school\'s rows', async () => {
    answer = (_req, res) => {
      res.json({
        error: false,
        data: [
          {
            curriculum: { curriculumname: 'Maths' },
            school: { schoolid: W.school.lotus, schoolname: 'Lotus School', countries: { countryname: 'Cambodia' } },
            schoolname: 'Lotus School',
            schooluser: { schoolusername: 'l1' },
            class: { standardname: 'Class B' },
            status: true,
            totalusages: 4,
            lastLogin: '2026-05-03T14:05:09.000Z',
          },
          {
            curriculum: { curriculumname: 'Maths' },
            school: { schoolid: W.school.sunrise, schoolname: 'Sunrise School' },
            schoolname: 'Sunrise School',
            schooluser: { schoolusername: 's1' },
            class: { standardname: 'Class A' },
            status: false,
            totalusages: 0,
          },
        ],
      });
    };
    const res = await post(
      '/report/online/studentstatus/download',
      f({ endDate: '2026-06-30T00:00:00.000Z' }),
      'scoped',
    );
    expectCsvHeaders(res);
    expect(lines(res.text)).toEqual([
      'Start Date,End Date,, ,  ,   ,    ,     ',
      'N/A,6/30/2026,,,,,,',
      ',,,,,,,',
      'curriculum,country,schoolname,userid,class,active,totalusages,lastlogin',
      'Maths,Cambodia,Lotus School,l1,Class B,true,4,5/3/2026 2:05:09 PM',
    ]);
    // The classroom is asked for the caller's schools only.
    expect(received[0].body.filter).toContainEqual({ key: 'schoolid', value: [W.school.lotus] });
  });

  it('answers 400 with the classroom\'s words when it refuses the request, 500 when it fails', async () => {
    answer = (_req, res) => { res.status(400).json({ error: true, errormessage: 'Invalid filter', data: false }); };
    const refused = await post('/report/online/studentlevelquiz/download', f({}));
    expect([refused.status, refused.body.errormessage]).toEqual([400, 'Invalid filter']);
    const paged = await post('/report/online/studentprogress', f({}));
    expect([paged.status, paged.body.errormessage]).toEqual([400, 'Invalid filter']);
    answer = (_req, res) => { res.status(500).json({ error: true, errormessage: 'boom', data: false }); };
    expect((await post('/report/online/studentlevelquiz/download', f({}))).status).toBe(500);
    answer = (_req, res) => { res.status(200).type('application/json').send('{"error":true,"errormessage":"x"}'); };
    expect((await post('/report/online/studentlastcompletedquiz/download', f({}))).status).toBe(500);
  });
});
