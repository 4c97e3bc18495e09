import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { W, addLearners, addLessonProgress, addLevelProgress, seedWorld, type Learner } from './report-data';

// The ranked reports answer exactly what they answered when they ranked every attempt, and the activity
// report what it answered when it summed every app-use row: the answers of the
// requests below were recorded from that implementation on the same data (one file per database, since
// each database renders times and numbers its own way, and as a digest per request, to keep it small) and
// every answer must stay the same, row for row, byte for byte for the CSV files. The data is written and then
// rewritten the ways the log import and the takeover's `--again` rewrite it (merges that change an attempt's
// pass, time, quiz or type; deletes), and the curriculum's orders change after the attempts exist.
// RECORD_REPORT_ANSWERS=1 writes the files instead of comparing.

const dialect = process.env.TEST_DATABASE_URL ? 'pg' : 'sqlite';
const FILE = path.join(__dirname, 'fixtures', `report-answers.${dialect}.json`);

let t: TestApp;
const auth: Record<string, string> = {};
let learners: Learner[] = [];

const fixed = (n: number) => `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`;

let seed = 20261127;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return Math.floor((seed / 2147483648) * n);
};

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  // Stable ids for every row the fixtures write, so that the recorded answers name the same rows in every run.
  let next = 1;
  const ids = vi
    .spyOn(crypto, 'randomUUID')
    .mockImplementation(() => fixed(next++) as ReturnType<typeof crypto.randomUUID>);
  await seedWorld(db);
  const schools = ['sunrise', 'lotus', 'amman'] as const;
  learners = await addLearners(
    db,
    Array.from({ length: 18 }, (_, i) => ({
      school: schools[i % 3],
      username: `eq${String(i).padStart(2, '0')}`,
      created_at: `2026-0${1 + (i % 4)}-1${i % 3}T00:00:00Z`,
    })),
  );
  const lessonQuizzes = [W.quiz.ls1, W.quiz.ls2, W.quiz.ls3, W.quiz.ls4, W.quiz.off];
  const levels = [W.level.l1, W.level.l2, W.level.l3];
  const rows: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 420; i += 1) {
    const level = rand(5) === 0;
    const pct = rand(101);
    rows.push({
      studentprogressid: fixed(100000 + i),
      studentid: learners[rand(learners.length - 2)].studentid,
      studentprogressreferenceid: level ? levels[rand(3)] : lessonQuizzes[rand(5)],
      progresstype: level ? 3 : rand(8) === 0 ? 1 : 2,
      ispass: pct >= 80,
      resultpercentage: pct,
      marks: rand(3),
      scores: rand(10),
      points: 10,
      fullpoints: 20,
      // Few distinct times: ties are decided by the id.
      starttime: new Date(Date.UTC(2026, 4, 1 + rand(6), 8)),
      endtime: new Date(Date.UTC(2026, 4, 7)),
    });
  }
  for (let i = 0; i < rows.length; i += 50) await db('studentprogress').insert(rows.slice(i, i + 50));
  // A log imported again with changed rows (the import's merge), and rows gone (an operator's delete).
  for (let i = 0; i < 80; i += 1) {
    const id = fixed(100000 + rand(420));
    const change = [
      { ispass: true, resultpercentage: 95 },
      { ispass: false, resultpercentage: 10 },
      { starttime: new Date(Date.UTC(2026, 4, 1 + rand(6), 8)) },
      { studentprogressreferenceid: lessonQuizzes[rand(5)], progresstype: 2 },
      { progresstype: 1 },
    ][rand(5)];
    await db('studentprogress').where({ studentprogressid: id }).update(change);
  }
  await db('studentprogress')
    .whereIn(
      'studentprogressid',
      Array.from({ length: 30 }, () => fixed(100000 + rand(420))),
    )
    .del();
  // The curriculum reordered after the attempts: the current level follows the new order.
  await db('lessons').where({ lessonid: W.lesson.ls1 }).update({ lessonorder: 5 });
  for (const [i, l] of learners.entries()) {
    if (i % 4 !== 3)
      await addLessonProgress(
        db,
        l.studentid,
        (['ls1', 'ls2', 'ls3', 'ls4', 'off'] as const).filter((_, k) => (i + k) % 3 !== 0),
      );
    if (i % 3 !== 2)
      await addLevelProgress(
        db,
        l.studentid,
        (['l1', 'l2', 'l3'] as const).filter((_, k) => (i + k) % 2 === 0),
      );
  }
  // App use of 16 of the learners (whole and half seconds), then rewritten the ways an import and an
  // operator rewrite it: times changed, rows moved to another learner, rows deleted and sent again.
  const usage: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 150; i += 1) {
    const at = new Date(Date.UTC(2026, 3 + rand(3), 1 + rand(28), 9));
    usage.push({
      studentappusageid: fixed(300000 + i),
      schooluserid: learners[rand(16)].schooluserid,
      time_spent: rand(1800) + (rand(4) === 0 ? 0.5 : 0),
      created_at: at,
      last_updated: at,
    });
  }
  for (let i = 0; i < usage.length; i += 50) await db('studentappusages').insert(usage.slice(i, i + 50));
  for (let i = 0; i < 20; i += 1)
    await db('studentappusages')
      .where({ studentappusageid: fixed(300000 + rand(150)) })
      .update({ time_spent: rand(900) });
  for (let i = 0; i < 5; i += 1)
    await db('studentappusages')
      .where({ studentappusageid: fixed(300000 + rand(150)) })
      .update({ schooluserid: learners[rand(16)].schooluserid });
  const gone = Array.from({ length: 15 }, () => fixed(300000 + rand(150)));
  const back = (await db('studentappusages').whereIn('studentappusageid', gone.slice(0, 3))) as Array<
    Record<string, unknown>
  >;
  await db('studentappusages').whereIn('studentappusageid', gone).del();
  if (back.length) await db('studentappusages').insert(back);
  ids.mockRestore();
  // And stable times where the fixtures let the clock decide.
  const tables = [
    'countries',
    'schools',
    'standards',
    'subjects',
    'curriculums',
    'grades',
    'levels',
    'lessons',
    'lessonquizzes',
    'questions',
    'lessonquizquestions',
    'levelquizquestions',
    'schoolusers',
    'students',
    'studentlessonsprogress',
    'studentlevelsprogress',
  ];
  for (const table of tables) {
    for (const column of ['created_at', 'updated_at', 'lastupdated']) {
      if (await db.schema.hasColumn(table, column)) {
        await db(table)
          .where(column, '>', new Date('2026-10-01T00:00:00Z'))
          .update({ [column]: new Date('2026-07-01T00:00:00Z') });
      }
    }
  }
  await createStaff(db, { lmsusername: 'super@eq.test', roleids: [ROLE_IDS.superadmin] });
  await createStaff(db, { lmsusername: 'admin@eq.test', roleids: [ROLE_IDS.admin], schools: [W.school.lotus] });
  await createStaff(db, { lmsusername: 'teacher@eq.test', roleids: [ROLE_IDS.teacher] });
  for (const who of ['super', 'admin', 'teacher'])
    auth[who] = `Bearer ${(await staffLogin(t.app, `${who}@eq.test`)).accessToken}`;
}, 120_000);
afterAll(async () => {
  await t.tdb.dispose();
});

const body = (filters: Record<string, unknown>, pageindex = 1, pagesize = 100) => ({
  pageindex,
  pagesize,
  filter: Object.entries(filters).map(([key, value]) => ({ key, value })),
});

function requests(): Array<[string, object]> {
  const classes = [W.class.sunrise, W.class.lotus, W.class.amman];
  const out: Array<[string, object]> = [];
  for (const l of learners.slice(0, 5)) {
    out.push(['/report/studentprogress', body({ studentid: l.studentid })]);
    out.push(['/report/studentlevelquiz', body({ studentid: l.studentid })]);
  }
  for (const standard of classes) {
    out.push(['/report/studentprogress/class', body({ standard })]);
    for (const lessonid of Object.values(W.lesson))
      out.push(['/report/studentprogress/class', body({ standard, lessonid })]);
    out.push(['/report/studentlevelquiz/class', body({ standard })]);
    for (const levelid of Object.values(W.level))
      out.push(['/report/studentlevelquiz/class', body({ standard, levelid })]);
  }
  const last = '/report/studentlastcompletedquiz';
  out.push([last, body({ standard: classes })]);
  out.push([last, body({ standard: classes }, 2, 5)]);
  out.push([last, body({ studentid: learners.slice(0, 9).map((l) => l.studentid) })]);
  out.push([last, body({ standard: classes, gradeid: W.grade.g1 })]);
  out.push([last, body({ standard: classes, levelid: W.level.l2 })]);
  out.push([last, body({ standard: classes, lessonid: W.lesson.ls2 })]);
  out.push([last, body({ standard: classes, curriculumid: W.curriculum })]);
  out.push([last, body({ standard: classes, schoolid: W.school.sunrise })]);
  out.push([last, body({ standard: classes, countryid: W.country.kh })]);
  const status = '/report/studentstatus';
  out.push([status, body({ standard: classes })]);
  out.push([status, body({ standard: classes }, 2, 5)]);
  out.push([status, body({ schoolid: W.school.sunrise })]);
  out.push([status, body({ studentid: learners.slice(0, 6).map((l) => l.studentid) })]);
  out.push([status, body({ standard: classes, startDate: '2026-05-01T00:00:00Z', endDate: '2026-05-31T00:00:00Z' })]);
  out.push([status, body({ standard: classes, endDate: '2026-05-15T00:00:00Z' })]);
  return out;
}

async function answers(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const who of ['super', 'admin', 'teacher']) {
    for (const [url, b] of requests()) {
      const key = `${who} ${url} ${JSON.stringify(b)}`;
      const json = await request(t.app).post(url).set('Authorization', auth[who]).send(b);
      const csv = await request(t.app).post(`${url}/download`).set('Authorization', auth[who]).send(b);
      out[key] = { status: json.status, body: json.body, csv: { status: csv.status, text: csv.text } };
    }
  }
  return out;
}

describe('ranked reports and app time, before and after studentquizresults and studentappusagetotals', () => {
  it('answer every request as before, JSON and CSV, for a superadmin, a narrowed admin and a teacher', async () => {
    const all = await answers();
    if (process.env.DUMP_REPORT_ANSWERS)
      fs.writeFileSync(process.env.DUMP_REPORT_ANSWERS, JSON.stringify(all, null, 1));
    const digest = (v: unknown) => crypto.createHash('sha256').update(JSON.stringify(v)).digest('hex');
    const got = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, digest(v)]));
    if (process.env.RECORD_REPORT_ANSWERS === '1') {
      fs.mkdirSync(path.dirname(FILE), { recursive: true });
      fs.writeFileSync(FILE, `${JSON.stringify(got, null, 1)}\n`);
      return;
    }
    const expected = JSON.parse(fs.readFileSync(FILE, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(got)).toEqual(Object.keys(expected));
    for (const k of Object.keys(expected)) expect(got[k], k).toEqual(expected[k]);
    // The data reaches the cases the ranking decides: learners with and without a current level.
    const answer = all[
      `super /report/studentlastcompletedquiz ${JSON.stringify(body({ standard: Object.values(W.class) }))}`
    ] as { body: { data: { data: Array<Record<string, unknown>> } } };
    const rows = answer.body.data.data;
    expect(rows.filter((r) => r.laststudentprogress).length).toBeGreaterThan(8);
    expect(rows.filter((r) => !r.laststudentprogress).length).toBeGreaterThan(0);
  }, 300_000);
});
