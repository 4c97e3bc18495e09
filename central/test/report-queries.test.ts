import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamRows } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import {
  W,
  addAttempts,
  addLearners,
  addLessonProgress,
  addLevelProgress,
  seedWorld,
  uuid,
  type Attempt,
  type Learner,
} from './report-data';

// Every report is a fixed number of queries whatever the number of learners, lessons or attempts: the
// same requests against a class of 5 and a class of 500 (each learner with attempts, progress rows,
// sign-ins and app time) must issue exactly as many statements.

interface World {
  t: TestApp;
  auth: string;
  first: Learner;
}

async function world(size: number): Promise<World> {
  const t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  await seedWorld(db);
  const learners = await addLearners(
    db,
    Array.from({ length: size }, (_, i) => ({
      school: 'sunrise' as const,
      username: `l${String(i).padStart(4, '0')}`,
      genderid: 1 + (i % 2),
    })),
  );
  const attempts: Attempt[] = [];
  for (const [i, l] of learners.entries()) {
    for (const quiz of [W.quiz.ls1, W.quiz.ls2, W.quiz.ls3]) {
      attempts.push({
        studentid: l.studentid,
        reference: quiz,
        ispass: false,
        pct: 40,
        at: `2026-05-0${1 + (i % 5)}T08:00:00Z`,
      });
      attempts.push({
        studentid: l.studentid,
        reference: quiz,
        ispass: i % 3 === 0,
        pct: 85,
        at: `2026-06-0${1 + (i % 5)}T08:00:00Z`,
      });
    }
    attempts.push({
      studentid: l.studentid,
      reference: W.level.l1,
      type: 3,
      ispass: true,
      pct: 90,
      at: '2026-06-09T08:00:00Z',
    });
  }
  await addAttempts(db, attempts);
  for (const l of learners) {
    await addLessonProgress(db, l.studentid, ['ls1', 'ls2']);
    await addLevelProgress(db, l.studentid, ['l1']);
  }
  const rows = (fn: (l: Learner) => Record<string, unknown>) => learners.map(fn);
  for (let i = 0; i < learners.length; i += 50) {
    const part = learners.slice(i, i + 50);
    await db('rpiuseraccess').insert(
      part.map((l) => ({
        rpiuseraccessid: uuid(),
        userid: l.schooluserid,
        logintime: new Date('2026-06-01T00:00:00Z'),
        ipaddress: '1',
      })),
    );
    await db('studentappusages').insert(
      part.map((l) => ({
        studentappusageid: uuid(),
        schooluserid: l.schooluserid,
        time_spent: 120,
        created_at: new Date(),
      })),
    );
    await db('studentgradesprogress').insert(
      part.map((l) => ({
        studentgradeprogressid: uuid(),
        studentid: l.studentid,
        curriculumid: W.curriculum,
        gradeid: W.grade.g1,
        progress: 10,
      })),
    );
    await db('syncs').insert(
      part.map(() => ({
        syncid: uuid(),
        filename: 'x.zip',
        type: 1,
        offlineonline: false,
        created_by: W.teacher,
        created_at: new Date(),
      })),
    );
  }
  void rows;
  await createStaff(db, { lmsusername: 'super@queries.test', roleids: [ROLE_IDS.superadmin] });
  const auth = `Bearer ${(await staffLogin(t.app, 'super@queries.test')).accessToken}`;
  return { t, auth, first: learners[0] };
}

let small: World;
let large: World;

beforeAll(async () => {
  small = await world(5);
  large = await world(500);
}, 120_000);
afterAll(async () => {
  await small.t.tdb.dispose();
  await large.t.tdb.dispose();
});

type Call = { method: 'GET' | 'POST'; url: string; body?: (w: World) => object };
const f = (filters: Record<string, unknown>) => ({
  pageindex: 1,
  pagesize: 1000,
  filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
});
const classBody = () => f({ standard: W.class.sunrise });
const learnerBody = (w: World) => f({ studentid: w.first.studentid });

const CALLS: Call[] = [
  { method: 'GET', url: '/report/dashboard?countryid=all&year=2026' },
  { method: 'GET', url: `/report/dashboard?countryid=${W.country.kh}&year=2026` },
  { method: 'GET', url: '/report/gender?countryid=all&schoolname=' },
  { method: 'GET', url: '/report/disability?countryid=all&schoolname=' },
  { method: 'GET', url: '/report/offlineonline?countryid=&schoolname=' },
  { method: 'GET', url: `/report/dashboard/country/${W.country.kh}` },
  { method: 'GET', url: `/report/dashboard/school/${encodeURIComponent(W.schoolname.sunrise)}` },
  { method: 'GET', url: '/report/studentusage' },
  { method: 'POST', url: '/report/techdowntime', body: () => ({}) },
  { method: 'POST', url: '/report/studentprogress', body: learnerBody },
  { method: 'POST', url: '/report/studentprogress', body: classBody },
  { method: 'POST', url: '/report/studentlevelquiz', body: learnerBody },
  { method: 'POST', url: '/report/studentprogress/class', body: classBody },
  { method: 'POST', url: '/report/studentlevelquiz/class', body: classBody },
  { method: 'POST', url: '/report/studentlastcompletedquiz', body: classBody },
  { method: 'POST', url: '/report/studentstatus', body: () => f({ startDate: '2026-01-01T00:00:00.000Z' }) },
  { method: 'POST', url: '/report/student-grade-progress', body: classBody },
  { method: 'POST', url: '/report/student-level-progress', body: learnerBody },
  { method: 'POST', url: '/report/student-lesson-progress', body: learnerBody },
  { method: 'POST', url: '/report/syncrecords', body: () => ({ pageindex: 1, pagesize: 200 }) },
  { method: 'GET', url: '/report/syncstatus' },
  // The downloads stream every row (a PostgreSQL cursor fetches 1,000 at a time).
  { method: 'POST', url: '/report/studentprogress/download', body: learnerBody },
  { method: 'POST', url: '/report/studentprogress/class/download', body: classBody },
  { method: 'POST', url: '/report/studentlevelquiz/download', body: learnerBody },
  { method: 'POST', url: '/report/studentlevelquiz/class/download', body: classBody },
  { method: 'POST', url: '/report/studentlastcompletedquiz/download', body: classBody },
  { method: 'POST', url: '/report/studentstatus/download', body: classBody },
];

/**
 * Waits until the database has been quiet for a while: the closing access-record entry of a previous
 * download may still be on its way, and it is that request's statement, not the next one's.
 */
async function settled(db: World['t']['tdb']['db']): Promise<void> {
  let last = Date.now();
  const seen = () => { last = Date.now(); };
  db.on('query', seen);
  try {
    const until = Date.now() + 10_000;
    while (Date.now() - last < 300 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  } finally {
    db.off('query', seen);
  }
}

async function statements(w: World, c: Call): Promise<{ count: number; status: number; size: number }> {
  const db = w.t.tdb.db;
  await settled(db);
  let count = 0;
  const listen = () => { count += 1; };
  db.on('query', listen);
  try {
    const req = c.method === 'GET' ? request(w.t.app).get(c.url) : request(w.t.app).post(c.url).send(c.body!(w));
    const res = await req.set('Authorization', w.auth);
    // A download's closing entry is written as its answer ends: counted with its own request.
    await settled(db);
    return { count, status: res.status, size: res.text.length };
  } finally {
    db.off('query', listen);
  }
}

describe('queries per report request', () => {
  it('are as many for a class of 500 learners as for a class of 5', async () => {
    const rows: string[] = [];
    for (const c of CALLS) {
      const a = await statements(small, c);
      const b = await statements(large, c);
      expect([c.url, a.status, b.status]).toEqual([c.url, 200, 200]);
      rows.push(`${c.method} ${c.url}: ${a.count} / ${b.count}`);
      expect([c.url, b.count]).toEqual([c.url, a.count]);
    }
    if (process.env.REPORT_QUERIES_PRINT) console.log(rows.join('\n'));
    // The large world's answers really are larger (the requests read its learners).
    const cls = CALLS.find((c) => c.url === '/report/studentprogress/class')!;
    expect((await statements(large, cls)).size).toBeGreaterThan(50 * (await statements(small, cls)).size);
  }, 120_000);
});

describe('streamRows', () => {
  it('reads rows as they are consumed, and stopping early closes the read', async () => {
    const db = large.t.tdb.db;
    let seen = 0;
    for await (const row of streamRows<{ studentprogressid: string }>(
      db,
      db('studentprogress').select('studentprogressid').orderBy('studentprogressid'),
    )) {
      expect(typeof row.studentprogressid).toBe('string');
      seen += 1;
      if (seen === 1500) break;
    }
    expect(seen).toBe(1500);
    // The connection (SQLite) or cursor and transaction (PostgreSQL) are gone: the pool serves as before.
    expect(Number((await db('studentprogress').count({ n: '*' }).first())?.n)).toBe(500 * 7);
    let all = 0;
    for await (const row of streamRows<{ ispass: unknown; starttime: unknown }>(
      db,
      db('studentprogress').select('ispass', 'starttime'),
    )) {
      // Rows come back normalised as an awaited query's would.
      expect(typeof row.ispass).toBe('boolean');
      expect(row.starttime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      all += 1;
    }
    expect(all).toBe(3500);
  });
});
