import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { central, repoRoot, type Knex, type TestDatabase } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { benchDatabase, procMb, resetPeakRss, startCentral, stopServer } from './servers';

// `make bench`: GET /curriculum/tree over a generated curriculum (12 grades x 10 levels x 20 lessons, each
// lesson with 2 learnings, 2 practices and 2 quizzes of 5 questions each), inserted directly. The baseline,
// measured in the same run on the same database: the plain SELECTs of the rows the tree holds (the six
// tables, in the tree's order) through the bare driver, in this process. Target: the tree in at most twice
// the baseline's time. Also the server's peak RSS while it answers.

const SHAPE = (process.env.BENCH_TREE_SHAPE ?? '12x10x20').split('x').map(Number) as [number, number, number];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const TARGET_RATIO = 2;
const STAFF = { lmsusername: 'bench.author@lms.local', password: 'BenchAuthor1' };
const QUESTIONS_PER_SET = 5;
const BANK = 500;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** The tree's six reads, as plain SQL in the tree's order. */
const TREE_SELECTS = [
  'SELECT * FROM curriculums ORDER BY curriculumname, curriculumid',
  'SELECT * FROM grades ORDER BY gradeorder, gradename, gradeid',
  'SELECT * FROM levels ORDER BY levelorder, levelname, levelid',
  'SELECT * FROM lessons ORDER BY lessonorder, lessonname, lessonid',
  'SELECT * FROM lessonquizzes ORDER BY lessonquizorder, lessonquizid',
  'SELECT * FROM lessonpractices ORDER BY lessonpracticeorder, lessonpracticeid',
];

/** Inserts the curriculum, its content and a question bank; returns the row counts. */
async function generate(db: Knex): Promise<Record<string, number>> {
  const [grades, levels, lessons] = SHAPE;
  const id = () => crypto.randomUUID();
  const rows: Record<string, Array<Record<string, unknown>>> = {
    countries: [],
    subjects: [],
    curriculums: [],
    curriculumcountry: [],
    documents: [],
    questions: [],
    grades: [],
    levels: [],
    lessons: [],
    lessonlearnings: [],
    lessonpractices: [],
    lessonquizzes: [],
    lessonpracticequestions: [],
    lessonquizquestions: [],
  };
  const countryid = id();
  const subjectid = id();
  const curriculumid = id();
  rows.countries.push({ countryid, countryname: 'Bench Country', isdeleted: false });
  rows.subjects.push({ subjectid, subjectname: 'Bench Mathematics', isdeleted: false });
  rows.curriculums.push({
    curriculumid,
    curriculumname: 'Bench Curriculum',
    subjectid,
    curriculumstatus: true,
    isdeleted: false,
  });
  rows.curriculumcountry.push({ curriculumcountryid: id(), curriculumid, countryid });
  const documents = Array.from({ length: 100 }, (_, i) => ({
    documentid: id(),
    documenttypeid: 2,
    documentname: `bench-video-${i}.mp4`,
    documenttags: '[]',
    isdeleted: false,
  }));
  rows.documents.push(...documents);
  const questions = Array.from({ length: BANK }, (_, i) => ({
    questionid: id(),
    questionidentifier: `Bench question ${i}`,
    templatetypeid: 1 + (i % 24),
    questionstatus: true,
    isdeleted: false,
    questionheading: JSON.stringify({ headingtext: `Question ${i}` }),
    questiontext: 'Which one?',
    questiontags: JSON.stringify(['bench']),
    questionoptions: JSON.stringify(
      [1, 2, 3].map((n) => ({
        questionoptionid: id(),
        questionoptiontext: `option ${n}`,
        questionoptioniscorrect: n === 1,
      })),
    ),
  }));
  rows.questions.push(...questions);
  let q = 0;
  const nextQuestion = () => questions[q++ % BANK].questionid;
  for (let g = 1; g <= grades; g += 1) {
    const gradeid = id();
    rows.grades.push({
      gradeid,
      curriculumid,
      gradename: `Grade ${g}`,
      gradeorder: g,
      gradestatus: true,
      isdeleted: false,
      passing_points: 0,
      points: 0,
    });
    for (let l = 1; l <= levels; l += 1) {
      const levelid = id();
      rows.levels.push({
        levelid,
        gradeid,
        levelname: `Grade ${g} level ${l}`,
        levelorder: l,
        levelstatus: true,
        isdeleted: false,
        quiz_points: 100,
        points: 100 + lessons * 100,
      });
      for (let s = 1; s <= lessons; s += 1) {
        const lessonid = id();
        rows.lessons.push({
          lessonid,
          levelid,
          lessonname: `Lesson ${g}.${l}.${s}`,
          lessondescription: 'A generated lesson',
          lessonorder: s,
          lessonstatus: true,
          isdeleted: false,
          total_points: 100,
          brick_points: 16,
          passing_points: 0,
          learning_points: 32,
          practices_points: 32,
          quizzes_points: 36,
          practicecount: 2,
          quizcount: 2,
        });
        for (let k = 1; k <= 2; k += 1) {
          rows.lessonlearnings.push({
            lessonlearningid: id(),
            lessonid,
            lessonlearningname: `Learning ${k}`,
            lessonlearningdescription: 'Watch',
            documentid: documents[(s * 2 + k) % documents.length].documentid,
            lessonlearningorder: k,
            points: 16,
          });
          const lessonpracticeid = id();
          rows.lessonpractices.push({
            lessonpracticeid,
            lessonid,
            lessonpracticename: `Practice ${k}`,
            lessonpracticedescription: 'Try',
            lessonpracticeorder: k,
            points: 16,
          });
          const lessonquizid = id();
          rows.lessonquizzes.push({
            lessonquizid,
            lessonid,
            lessonquizname: `Quiz ${k}`,
            lessonquizdescription: 'Show',
            lessonquizorder: k,
            points: k === 2 ? 20 : 16,
          });
          for (let n = 1; n <= QUESTIONS_PER_SET; n += 1) {
            rows.lessonpracticequestions.push({
              lessonpracticequestionid: id(),
              lessonpracticeid,
              questionid: nextQuestion(),
              lessonpracticequestionorder: n,
            });
            rows.lessonquizquestions.push({
              lessonquizquestionid: id(),
              lessonquizid,
              questionid: nextQuestion(),
              lessonquizquestionorder: n,
            });
          }
        }
      }
    }
  }
  await db.transaction(async (trx) => {
    for (const [table, list] of Object.entries(rows)) await trx.batchInsert(table, list as never, 500);
  });
  return Object.fromEntries(Object.entries(rows).map(([t, l]) => [t, l.length]));
}

/** The baseline: the six SELECTs through the bare driver, once; milliseconds and the rows read. */
async function plainSelects(tdb: TestDatabase): Promise<{ ms: number; rows: number }> {
  if (tdb.target.dialect === 'sqlite') {
    const conn = new Database(tdb.target.connection, { readonly: true, fileMustExist: true });
    try {
      const statements = TREE_SELECTS.map((sql) => conn.prepare(sql));
      const t0 = process.hrtime.bigint();
      let rows = 0;
      for (const s of statements) rows += s.all().length;
      return { ms: Number(process.hrtime.bigint() - t0) / 1e6, rows };
    } finally {
      conn.close();
    }
  }
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  try {
    const t0 = process.hrtime.bigint();
    let rows = 0;
    for (const sql of TREE_SELECTS) rows += (await client.query(sql)).rows.length;
    return { ms: Number(process.hrtime.bigint() - t0) / 1e6, rows };
  } finally {
    await client.end();
  }
}

interface Result {
  dialect: string;
  counts: Record<string, number>;
  treeMs: number;
  selectMs: number;
  ratio: number;
  bytes: number;
  rssMb: number;
  idleRssMb: number;
}

async function benchOne(pgUrl: string | undefined): Promise<Result> {
  const tdb: TestDatabase = await benchDatabase(central, pgUrl);
  let server: Awaited<ReturnType<typeof startCentral>> | undefined;
  try {
    const counts = await generate(tdb.db);
    // The compiled central API is what the benchmark runs, so the password hash comes from it too.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { hashPassword } = require(path.join(repoRoot, 'central/dist/auth/passwords.js')) as {
      hashPassword(p: string): Promise<string>;
    };
    const lmsuserid = crypto.randomUUID();
    await tdb.db('lmsusers').insert({
      lmsuserid,
      lmsusername: STAFF.lmsusername,
      lmsuserpasswordhash: await hashPassword(STAFF.password),
      firstname: 'Bench',
      lmsuserrole: ROLE_IDS.superadmin,
      isverified: true,
      isdisabled: false,
    });
    await tdb.db('lmsusers_roles').insert({ lmsuserid, roleid: ROLE_IDS.superadmin });
    if (tdb.target.dialect === 'pg') await tdb.db.raw('ANALYZE');

    server = await startCentral(tdb.url);
    const login = await fetch(`${server.origin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lmsusername: STAFF.lmsusername, lmsuserpassword: STAFF.password }),
    });
    const token = ((await login.json()) as { data?: { accessToken?: string } }).data?.accessToken;
    if (!token) throw new Error(`login failed: ${login.status}`);
    const pid = server.child.pid!;
    const idleRssMb = procMb(pid, 'VmRSS');
    const tree = async (): Promise<{ ms: number; bytes: number; lessons: number }> => {
      const t0 = process.hrtime.bigint();
      const res = await fetch(`${server!.origin}/curriculum/tree`, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (res.status !== 200) throw new Error(`GET /curriculum/tree answered ${res.status}: ${text.slice(0, 200)}`);
      const data = (JSON.parse(text) as { data: Array<{ grades: Array<{ levels: Array<{ lessons: unknown[] }> }> }> })
        .data;
      const lessons = data.reduce(
        (n, c) => n + c.grades.reduce((m, g) => m + g.levels.reduce((k, l) => k + l.lessons.length, 0), 0),
        0,
      );
      return { ms, bytes: Buffer.byteLength(text), lessons };
    };
    // Warm-up of both (JIT, statement caches, the database's own caches).
    const first = await tree();
    if (first.lessons !== counts.lessons)
      throw new Error(`the tree holds ${first.lessons} lessons, the database ${counts.lessons}`);
    await plainSelects(tdb);
    resetPeakRss(pid);
    // Alternating rounds, so that a slow spell of a shared machine falls on both; medians.
    const treeMs: number[] = [];
    const selectMs: number[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const s = await plainSelects(tdb);
      const t = await tree();
      treeMs.push(t.ms);
      selectMs.push(s.ms);
      ratios.push(t.ms / s.ms);
    }
    return {
      dialect: tdb.target.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL',
      counts,
      treeMs: median(treeMs),
      selectMs: median(selectMs),
      ratio: median(ratios),
      bytes: first.bytes,
      rssMb: procMb(pid, 'VmHWM'),
      idleRssMb,
    };
  } finally {
    if (server) await stopServer(server.child);
    await tdb.dispose().catch(() => undefined);
  }
}

export async function runCurriculumTreeBench(): Promise<void> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const results: Result[] = [await benchOne(undefined)];
  if (pgUrl) results.push(await benchOne(pgUrl));
  const c = results[0].counts;
  out(`machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}`);
  out(
    `curriculum: ${SHAPE.join(' x ')} (grades x levels x lessons): ${fmt(c.grades)} grades, ${fmt(c.levels)} ` +
      `levels, ${fmt(c.lessons)} lessons, ` +
      `${fmt(c.lessonlearnings)} learnings, ${fmt(c.lessonpractices)} practices, ${fmt(c.lessonquizzes)} ` +
      `quizzes, ${fmt(c.lessonpracticequestions + c.lessonquizquestions)} question links`,
  );
  out(
    `${ROUNDS} rounds, medians; the tree is timed at the client (request to the last byte), the SELECTs through the ` +
      `bare driver in this process`,
  );
  out('| database | GET /curriculum/tree | plain SELECTs | ratio | body | server peak RSS serving the tree (before) |');
  out('|---|---:|---:|---:|---:|---:|');
  for (const r of results) {
    out(
      `| ${r.dialect} | ${fmt(r.treeMs, 1)} ms | ${fmt(r.selectMs, 1)} ms | ${fmt(r.ratio, 2)} ` +
        `| ${fmt(r.bytes / 2 ** 20, 1)} MB | ${fmt(r.rssMb)} MB (${fmt(r.idleRssMb)} MB) |`,
    );
  }
  for (const r of results)
    out(
      `${r.dialect}: tree = ${fmt(r.ratio, 2)} x the plain SELECTs (target ` +
        `<= ${TARGET_RATIO}): ${r.ratio <= TARGET_RATIO ? 'OK' : 'ABOVE TARGET'}`,
    );
}
