import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { ZodType } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import busboy from 'busboy';
import type { Knex } from '@lms/db';
import { ROLE_IDS, anyUser, noInput, openZip, route } from '@lms/shared';
import { createApp } from '../src/app';
import { serviceRoutes } from '../src/areas';
import type { CentralRoute, Deps } from '../src/http/types';
import { makeApp, silentLogger, type TestApp } from './helpers';
import { NARROWED, narrowedCallers, seedSides, type Narrowed, type Side, type Sides } from './scope-fixtures';
import { document, question } from './content';

// The scope catalogue, generated from the route table: every route that takes an id of a school, a
// country or curriculum content (in its path, query or body) is called by each narrowed caller kind
// three times — with side A's ids (the caller's own), side B's (another school and country) and ids
// that exist nowhere. Side B must be refused or invisible: an error (never a 500), or an answer that
// names nothing of side B, and side B's rows unchanged. Side A must work: a success, or at least not
// the answer an unknown id gets (a route that refuses everything fails). A route whose gate refuses
// the caller kind is left to the gate tests. Each call runs in a transaction rolled back afterwards,
// so that a delete of the caller's own row does not change what the next route sees.
//
// A new route with an id fails here until it has a fixture: its path parameters must be known below,
// and a route with ids in its query or body, or a body its schema refuses empty, needs a CASE.

interface Req { url: string; query?: Record<string, string>; body?: unknown; upload?: boolean }
type Build = (x: Side, s: Sides) => Req;

/** Path parameters: those naming a row of a side, and those that do not (shared rows, orders). */
const SIDE_PARAMS: Record<string, (x: Side) => string> = {
  countryid: (x) => x.countryid,
  schoolid: (x) => x.schoolid,
  schoolname: (x) => x.schoolname,
  standardid: (x) => x.standardid,
  studentid: (x) => x.studentid,
  schooluserid: (x) => x.schooluserid,
  curriculumid: (x) => x.curriculumid,
  gradeid: (x) => x.gradeid,
  levelid: (x) => x.levelid,
  lessonid: (x) => x.lessonid,
  lessonlearningid: (x) => x.lessonlearningid,
  lessonplanid: (x) => x.lessonplanid,
  lessonpracticeid: (x) => x.lessonpracticeid,
  lessonquizid: (x) => x.lessonquizid,
  lessonpracticequestionid: (x) => x.lessonpracticequestionid,
  lessonquizquestionid: (x) => x.lessonquizquestionid,
  levelquizquestionid: (x) => x.levelquizquestionid,
  curriculumbaselineid: (x) => x.curriculumbaselineid,
  baselinequestionid: (x) => x.baselinequestionid,
  feedbackid: (x) => x.feedbackid,
  schoolcontributeid: (x) => x.schoolcontributeid,
  lmsuserid: (x) => x.lmsuserid,
  boxid: (x) => x.boxid,
};
const OTHER_PARAMS: Record<string, (s: Sides) => string> = {
  questionid: (s) => s.questionid,
  // Side A's box's report: the box in the path decides the scope (side B's box with it answers 404), and a
  // box's own route finds it by its credential.
  diagnosticid: (s) => s.A.diagnosticid,
  ...Object.fromEntries(
    [
      'levelquizquestionorder',
      'lessonpracticequestionorder',
      'lessonquizquestionorder',
      'lessonlearningorder',
      'lessonplanorder',
      'lessonpracticeorder',
      'lessonquizorder',
      'baselinequestionorder',
    ].map((k) => [k, () => '2']),
  ),
};
/** Query and body keys that name a row of a side. */
const ID_KEYS = new Set([
  'countryid',
  'schoolid',
  'schoolname',
  'standardid',
  'standard',
  'studentid',
  'userid',
  'schooluserid',
  'curriculumid',
  'curid',
  'curriculums',
  'gradeid',
  'levelid',
  'lessonid',
  'curriculumbaselineid',
  'clonecurriculumbaselineid',
  'baselineid',
  'feedbackid',
  'schoolcontributeid',
  'lmsuserid',
  'schoolids',
  'countryids',
]);

const fresh = (tag: string) => `${tag} ${crypto.randomBytes(3).toString('hex')}`;
const user = () => `u${crypto.randomBytes(4).toString('hex')}`;
const pathOf = (r: CentralRoute, x: Side, s: Sides) =>
  r.path.replace(/:(\w+)/g, (_, p: string) =>
    encodeURIComponent(SIDE_PARAMS[p] ? SIDE_PARAMS[p](x) : OTHER_PARAMS[p](s)),
  );

/** Requests of the routes that need more than their path: ids in the query or body, or a body to be valid. */
const CASES: Record<string, ((r: CentralRoute) => Build) | { none: string }> = {
  'POST /school-contribute/create': () => (x) => ({
    url: '/school-contribute/create',
    body: { schoolname: x.schoolname, schoolid: x.schoolid, countryid: x.countryid, expected: 1, actual: 1 },
  }),
  'PUT /school-contribute/updateschoolname/:schoolid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { schoolname: x.schoolname, countryid: x.countryid },
  }),
  'PUT /school-contribute/updateschooldashboard/:schoolcontributeid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { expected: 3, actual: 2 },
  }),
  'GET /school-contribute/all': () => (x) => ({
    url: '/school-contribute/all',
    query: { countryid: x.countryid, schoolname: x.schoolname },
  }),
  'GET /curriculum/all': () => (x) => ({ url: '/curriculum/all', query: { curid: x.curriculumid } }),
  'POST /curriculum/create': () => (x, s) => ({
    url: '/curriculum/create',
    body: { curriculumname: fresh('Course'), countryid: [x.countryid], subjectid: s.subjectid },
  }),
  'PUT /curriculum/:curriculumid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { curriculumname: fresh('Course'), countryid: [x.countryid], subjectid: s.subjectid },
  }),
  'POST /baselinequestion/create': () => (x, s) => ({
    url: '/baselinequestion/create',
    body: { curriculumbaselineid: x.curriculumbaselineid, questionid: s.questionid, baselinequestionorder: 2 },
  }),
  'POST /baselinequestion/clone': () => (x) => ({
    url: '/baselinequestion/clone',
    body: { curriculumbaselineid: x.curriculumbaselineid, clonecurriculumbaselineid: x.curriculumbaselineid },
  }),
  'GET /grade/all': () => (x) => ({ url: '/grade/all', query: { curid: x.curriculumid } }),
  'POST /grade/create': () => (x) => ({
    url: '/grade/create',
    body: { gradename: fresh('Grade'), gradeorder: 2, curriculumid: x.curriculumid, passing_points: 0 },
  }),
  'PUT /grade/:gradeid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { gradename: fresh('Grade'), gradeorder: 2, curriculumid: x.curriculumid, passing_points: 0 },
  }),
  'PUT /level/quiz/question/setlesson/:levelquizquestionid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { lessonid: x.lessonid },
  }),
  'GET /level/all': () => (x) => ({ url: '/level/all', query: { gradeid: x.gradeid } }),
  'POST /level/create': () => (x) => ({
    url: '/level/create',
    body: { levelname: fresh('Level'), levelorder: 2, gradeid: x.gradeid, quiz_points: 1, passing_points: 0 },
  }),
  'PUT /level/:levelid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { levelname: fresh('Level'), levelorder: 2, gradeid: x.gradeid, quiz_points: 1, passing_points: 0 },
  }),
  'GET /lesson/all': () => (x) => ({ url: '/lesson/all', query: { levelid: x.levelid } }),
  'POST /lesson/create': () => (x) => ({
    url: '/lesson/create',
    body: { lessonname: fresh('Lesson'), lessonorder: 2, total_points: 1, levelid: x.levelid, passing_points: 0 },
  }),
  'PUT /lesson/:lessonid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { lessonname: fresh('Lesson'), lessonorder: 2, total_points: 1, levelid: x.levelid, passing_points: 0 },
  }),
  ...Object.fromEntries(
    (['learning', 'plan', 'practice', 'quiz'] as const).flatMap((k) => {
      const p = `lesson${k}`;
      const doc = k === 'learning' || k === 'plan';
      const fields = (s: Sides) => ({
        ...(doc ? { documentid: s.documentid } : { points: 1 }),
        [`${p}name`]: fresh(k),
        [`${p}description`]: 'about',
      });
      return [
        [
          `POST /lesson/${k}/:lessonid`,
          (r: CentralRoute) => (x: Side, s: Sides) => ({
            url: pathOf(r, x, s),
            body: { ...fields(s), [`${p}order`]: 2 },
          }),
        ],
        [
          `PUT /lesson/${k}/:${p}id`,
          (r: CentralRoute) => (x: Side, s: Sides) => ({
            url: pathOf(r, x, s),
            body: { lessonid: x.lessonid, ...fields(s) },
          }),
        ],
      ];
    }),
  ),
  'POST /fleet/boxes': () => (x) => ({ url: '/fleet/boxes', body: { schoolid: x.schoolid, name: fresh('Box') } }),
  'GET /fleet/boxes': () => (x) => ({ url: '/fleet/boxes', query: { schoolid: x.schoolid } }),
  'PUT /log/import': { none: "the log names no school: it is imported for the signed-in teacher's own learners" },
  'GET /school/all': () => (x) => ({ url: '/school/all', query: { countryid: x.countryid } }),
  'GET /school/curriculumid': () => (x) => ({ url: '/school/curriculumid', query: { curriculumid: x.curriculumid } }),
  'POST /school/create': () => (x) => ({
    url: '/school/create',
    body: { schoolname: fresh('School'), countryid: x.countryid, curriculums: [x.curriculumid] },
  }),
  'PUT /school/update/:schoolid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { schoolname: x.schoolname, countryid: x.countryid, curriculums: [x.curriculumid] },
  }),
  'PUT /import/:schoolname/teachers': (r) => (x, s) => ({ url: pathOf(r, x, s), upload: true }),
  'GET /student/download-students': () => (x) => ({
    url: '/student/download-students',
    query: { schoolname: x.schoolname },
  }),
  'GET /student/all': () => (x) => ({
    url: '/student/all',
    query: { schoolname: x.schoolname, standard: x.standardid },
  }),
  'POST /student/create': () => (x) => ({
    url: '/student/create',
    body: {
      curriculumid: [x.curriculumid],
      schoolid: x.schoolid,
      standard: x.standardid,
      students: [
        {
          studentfirstname: 'New',
          dateofjoin: '05-01-2026',
          genderid: '1',
          city: 'Town',
          country: 'Land',
          state: 'State',
          schoolusername: user(),
          schooluserpasswordhash: 'p1',
        },
      ],
    },
  }),
  'PUT /student/update': () => (x) => ({
    url: '/student/update',
    body: {
      students: [
        {
          studentid: x.studentid,
          schooluserid: x.schooluserid,
          schoolusername: x.schoolusername,
          schoolname: x.schoolname,
          curriculums: 'Numbers',
          standard: 'Class 1',
          studentfirstname: 'Edited',
          genderid: '1',
          dateofjoin: '05-01-2026',
          city: 'Town',
          country: 'Land',
          state: 'State',
          isactive: 1,
        },
      ],
    },
  }),
  'GET /standard/all': () => (x) => ({ url: '/standard/all', query: { schoolname: x.schoolname } }),
  'POST /standard/create': () => (x) => ({
    url: '/standard/create',
    body: { standardname: fresh('Class'), schoolid: x.schoolid },
  }),
  'PUT /standard/:standardid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { standardname: fresh('Class'), schoolid: x.schoolid },
  }),
  'POST /teacher/create': () => (x) => ({
    url: '/teacher/create',
    body: { schoolname: x.schoolname, teachers: [{ schoolusername: user(), schooluserpasswordhash: 'p1' }] },
  }),
  'DELETE /teacher/:schooluserid': () => (x) => ({ url: `/teacher/${x.teacherid}` }),
  'POST /curriculumbaseline/create': () => (x) => ({
    url: '/curriculumbaseline/create',
    body: {
      baselineid: x.curriculumid,
      curriculumid: x.curriculumid,
      baselinename: fresh('Baseline'),
      baselinetype: 2,
      startdate: '2026-01-10',
      enddate: '2026-03-01',
      schoolid: [x.schoolid],
    },
  }),
  'PUT /curriculumbaseline/update/:curriculumbaselineid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { curriculumid: x.curriculumid, baselinename: fresh('Baseline'), schoolid: [x.schoolid] },
  }),
  'PUT /country/:countryid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: {
      countryname: x.countryid === s.A.countryid ? 'Ghana' : x.countryid === s.B.countryid ? 'Mali' : fresh('Land'),
      expectedusage: 1,
    },
  }),
  'POST /feedback/create': () => (x) => ({
    url: '/feedback/create',
    body: { teachername: 'T', curriculumid: x.curriculumid, general: { feedback: 'fine' } },
  }),
  // A staff account narrowed to the side's school; side B's is beyond every narrowed caller of side A.
  'POST /user/create': () => (x) => ({
    url: '/user/create',
    body: {
      lmsusername: `${user()}@scope.test`,
      lmsuserpasswordhash: 'Passw0rd!x',
      lmsuserroles: [ROLE_IDS.teacher],
      schoolids: [x.schoolid],
    },
  }),
  'PUT /user/:lmsuserid': (r) => (x, s) => ({
    url: pathOf(r, x, s),
    body: { lmsuserroles: [ROLE_IDS.teacher], schoolids: [x.schoolid] },
  }),
  'POST /roles/user-bind-role': () => (x) => ({
    url: '/roles/user-bind-role',
    body: { lmsuserid: x.lmsuserid, rolesid: [ROLE_IDS.teacher] },
  }),
  'GET /report/dashboard': () => (x) => ({ url: '/report/dashboard', query: { countryid: x.countryid } }),
  ...Object.fromEntries(
    ['gender', 'disability', 'offlineonline'].map((k) => [
      `GET /report/${k}`,
      () => (x: Side) => ({ url: `/report/${k}`, query: { countryid: x.countryid, schoolname: x.schoolname } }),
    ]),
  ),
  'GET /report/syncstatus': () => (x) => ({
    url: '/report/syncstatus',
    query: { countryid: x.countryid, schoolid: x.schoolid, schoolname: x.schoolname },
  }),
};

/** Routes declared global or ownAccount whose path names a side's row, each reviewed (the rest must narrow). */
const GLOBAL_BY_DECISION = new Set<string>([]);

/**
 * Routes whose own-id call is answered with an error on purpose even though the caller holds the
 * permission (status and message), each with the reason; every other own-id call must succeed (2xx).
 */
const OWN_REFUSED: Record<string, RegExp> = {
  // The side's school, class and country hold learners and schools: deleting them is refused by design.
  'DELETE /school/:schoolid': /^400 School has students assigned/,
  'DELETE /standard/:standardid': /^400 Standard has students assigned/,
  'DELETE /country/:countryid': /^400 Country is assigned/,
  // A clone goes into an assessment without questions; each side has one assessment, which has one.
  'POST /baselinequestion/clone': /^400 Curriculum Base Line already have question!$/,
};

/** Routes whose handler, past the gate, admits only some caller kinds (the others are refused whatever the ids). */
const HANDLER_ADMITS: Record<string, readonly Narrowed[]> = {
  'POST /feedback/create': ['schoolTeacherA'],
  // A new school is visible only to a caller holding its country whole (its `countries` list alone).
  'POST /school/create': ['adminOfCountryX'],
};

/** The top-level keys of an object schema (through optional/default/pipe wrappers); undefined for anything else. */
function keysOf(schema: ZodType | undefined): string[] | undefined {
  let x = schema as unknown as
    { shape?: Record<string, unknown>; def?: { innerType?: unknown; in?: unknown } } | undefined;
  for (let i = 0; i < 5 && x && !x.shape; i += 1) x = (x.def?.innerType ?? x.def?.in) as typeof x;
  return x?.shape ? Object.keys(x.shape) : undefined;
}

interface Entry { route: CentralRoute; key: string; build: Build }

/** Every route of the table that the catalogue must try, with its request; the problems of the ones it cannot. */
function catalogue(): { entries: Entry[]; missing: string[]; reviewedNone: number } {
  const entries: Entry[] = [];
  const missing: string[] = [];
  let reviewedNone = 0;
  for (const route of serviceRoutes) {
    const key = `${route.method} ${route.path}`;
    const rule = route.scope?.scope;
    if (!rule) { missing.push(`${key}: declares no scope`); continue; }
    // A route declared global (or the caller's own account) is not school-bound by decision, made where
    // the route is declared; `npm run routes -w central` lists them.
    const params = (route.path.match(/:\w+/g) ?? []).map((p) => p.slice(1));
    // wholeOrganisation refuses every narrowed caller outright (scope-narrowing.test.ts shows it).
    if (rule === 'wholeOrganisation') continue;
    if (rule === 'global' || rule === 'ownAccount') {
      if (params.some((p) => SIDE_PARAMS[p]) && !GLOBAL_BY_DECISION.has(key))
        missing.push(
          `${key}: declared ${rule} but names a row of a school, country, curriculum or staff account in its path`,
        );
      continue;
    }
    const unknownParams = params.filter((p) => !SIDE_PARAMS[p] && !OTHER_PARAMS[p]);
    if (unknownParams.length) {
      missing.push(`${key}: no fixture for path parameter(s) ${unknownParams.join(', ')}`);
      continue;
    }
    const queryKeys = keysOf(route.input.query) ?? [];
    const bodyKeys = keysOf(route.input.body);
    const readsBody = route.method !== 'GET' && route.method !== 'DELETE';
    const bodyNeeded = readsBody && route.input.body !== undefined && !route.input.body.safeParse({}).success;
    const idBearing =
      params.some((p) => SIDE_PARAMS[p]) ||
      queryKeys.some((k) => ID_KEYS.has(k)) ||
      (bodyKeys ?? []).some((k) => ID_KEYS.has(k)) ||
      (readsBody && route.input.body === undefined && !params.length);
    const needsCase =
      queryKeys.some((k) => ID_KEYS.has(k)) ||
      (bodyKeys ?? []).some((k) => ID_KEYS.has(k)) ||
      bodyNeeded ||
      (readsBody && route.input.body === undefined && !params.length);
    if (!idBearing) continue;
    const c = CASES[key];
    if (c && 'none' in c) { reviewedNone += 1; continue; }
    if (needsCase && !c) { missing.push(`${key}: takes ids in its query or body (or a body): add a CASE`); continue; }
    entries.push({ route, key, build: c ? c(route) : (x, s) => ({ url: pathOf(route, x, s) }) });
  }
  for (const k of Object.keys(CASES))
    if (!serviceRoutes.some((r) => `${r.method} ${r.path}` === k))
      missing.push(`${k}: a CASE for a route that does not exist`);
  return { entries, missing, reviewedNone };
}

let t: TestApp;
let s: Sides;
let as: Record<Narrowed | 'superadmin', string>;
let deps: Deps;
let app: ReturnType<typeof createApp>;
let classroom: http.Server;
/** What the stand-in classroom server was sent during the current call (files of multipart bodies, or the body). */
const pushed: Buffer[] = [];

/** The text of an answer or a push: a ZIP's entries read out, anything else as UTF-8. */
async function readable(buf: Buffer): Promise<string> {
  if (buf.subarray(0, 4).toString('latin1') !== 'PK\u0003\u0004') return buf.toString('utf8');
  const zip = await openZip({ buffer: buf });
  const parts: string[] = [];
  try {
    for await (const entry of zip.entries()) if (!entry.isDirectory) parts.push(entry.name, await entry.readText());
  } finally {
    zip.close();
  }
  return parts.join('\n');
}

beforeAll(async () => {
  // A stand-in classroom server that accepts what it is sent (pushes) and has nothing to report.
  classroom = http.createServer((req, res) => {
    const answer = () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // An assessment's results are a bare array (contract sync-formats D); everything else the envelope.
      res.end(JSON.stringify(/\/getstudentresult$/.test(req.url ?? '') ? [] : { error: false, data: [] }));
    };
    if (/^multipart\//.test(req.headers['content-type'] ?? '')) {
      const bb = busboy({ headers: req.headers });
      bb.on('file', (_name, stream) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => pushed.push(Buffer.concat(chunks)));
      });
      bb.on('close', answer);
      req.pipe(bb);
    } else {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => { pushed.push(Buffer.concat(chunks)); answer(); });
    }
  });
  await new Promise<void>((resolve) => classroom.listen(0, '127.0.0.1', resolve));
  t = await makeApp({
    RATE_LIMIT_MAX: '100000000',
    RPI_CLOUD: `http://127.0.0.1:${(classroom.address() as AddressInfo).port}`,
  });
  // A question and a document that no lesson uses yet: linking the ones both sides' trees hold already is
  // refused as a duplicate, which would hide whether the caller's own ids work.
  const seeded = await seedSides(t.tdb.db);
  s = { ...seeded, questionid: await question(t.tdb.db), documentid: await document(t.tdb.db) };
  as = await narrowedCallers(t, s);
  // One app whose database is swapped for a transaction around each call.
  deps = { db: t.tdb.db, logger: silentLogger };
  app = createApp(t.config, deps);
}, 120_000);
afterAll(async () => {
  await t.tdb.dispose();
  await new Promise<void>((resolve) => classroom.close(() => resolve()));
});

/** Side B's rows, and every row that points at them, for "nothing of side B changed". */
async function sideB(db: Knex): Promise<unknown[]> {
  const B = s.B;
  const grades = db('grades').where({ curriculumid: B.curriculumid }).select('gradeid');
  const levels = db('levels').whereIn('gradeid', grades).select('levelid');
  const lessons = db('lessons').whereIn('levelid', levels).select('lessonid');
  const baselines = db('curriculumbaseline').where({ curriculumid: B.curriculumid }).select('curriculumbaselineid');
  const sets: Array<[string, Knex.QueryBuilder]> = [
    ['schools', db('schools').where({ schoolid: B.schoolid }).orWhere({ countryid: B.countryid })],
    ['boxes', db('boxes').where({ schoolid: B.schoolid })],
    ['standards', db('standards').where({ schoolid: B.schoolid }).orWhere({ schoolname: B.schoolname })],
    ['students', db('students').where({ schoolname: B.schoolname })],
    ['schoolusers', db('schoolusers').where({ schoolname: B.schoolname })],
    ['countries', db('countries').where({ countryid: B.countryid })],
    ['curriculums', db('curriculums').where({ curriculumid: B.curriculumid })],
    [
      'curriculumcountry',
      db('curriculumcountry').where({ curriculumid: B.curriculumid }).orWhere({ countryid: B.countryid }),
    ],
    ['grades', db('grades').where({ curriculumid: B.curriculumid })],
    ['levels', db('levels').whereIn('gradeid', grades)],
    ['lessons', db('lessons').whereIn('levelid', levels)],
    ...['lessonlearnings', 'lessonplans', 'lessonpractices', 'lessonquizzes'].map((tb): [string, Knex.QueryBuilder] => [
      tb,
      db(tb).whereIn('lessonid', lessons),
    ]),
    [
      'lessonpracticequestions',
      db('lessonpracticequestions').whereIn(
        'lessonpracticeid',
        db('lessonpractices').whereIn('lessonid', lessons).select('lessonpracticeid'),
      ),
    ],
    [
      'lessonquizquestions',
      db('lessonquizquestions').whereIn(
        'lessonquizid',
        db('lessonquizzes').whereIn('lessonid', lessons).select('lessonquizid'),
      ),
    ],
    ['levelquizquestions', db('levelquizquestions').whereIn('levelid', levels)],
    ['curriculumbaseline', db('curriculumbaseline').where({ curriculumid: B.curriculumid })],
    ['baselinequestion', db('baselinequestion').whereIn('curriculumbaselineid', baselines)],
    // Feedback belongs to the teacher who wrote it (the curriculum it names is a reference).
    ['feedbacks', db('feedbacks').where({ created_by: B.teacherid })],
    ['schoolcontributedata', db('schoolcontributedata').where({ schoolid: B.schoolid })],
    // Staff accounts: side B's (and any account created or changed in the call), and their roles.
    [
      'lmsusers',
      db('lmsusers').select('lmsuserid', 'lmsusername', 'lmsuserpasswordhash', 'schools', 'countries', 'isdisabled'),
    ],
    ['lmsusers_roles', db('lmsusers_roles').select('lmsuserid', 'roleid').orderBy(2)],
  ];
  const out: unknown[] = [];
  for (const [name, q] of sets) out.push([name, await q.select().orderBy(1)]);
  return out;
}

/** What of side B an answer may not name: its ids, its school's name and its accounts' names. */
function markersOfB(): string[] {
  const B = s.B;
  return [...Object.values(B), 'teacherB', 'Mali', 'Calcul'];
}

const nowhere = (): Side => ({
  ...(Object.fromEntries(Object.keys(s.A).map((k) => [k, crypto.randomUUID()])) as unknown as Side),
  schoolname: 'Nowhere School',
});

interface Answer { status: number; message: string | undefined; text: string; changedB: boolean }

/** One call inside a transaction rolled back afterwards; for side B, whether its rows changed. */
async function callOnce(auth: string, method: string, req: Req, watchB: boolean): Promise<Answer> {
  const trx = await t.tdb.db.transaction();
  deps.db = trx;
  pushed.length = 0;
  try {
    const before = watchB ? JSON.stringify(await sideB(trx)) : '';
    let r = request(app)[method.toLowerCase() as 'get'](req.url).set('Authorization', auth);
    if (req.query) r = r.query(req.query);
    if (req.upload)
      r = r.attach(
        'importfile',
        Buffer.from('teacherusername,teacheruserpassword\nimported1,Teach123\n'),
        'teachers.csv',
      );
    else if (req.body !== undefined) r = r.send(req.body as object);
    const res = await r.buffer(true).parse((stream, cb) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    // What the caller reads, and what the call sent on to the classroom server.
    const text = [await readable(res.body as Buffer), ...(await Promise.all(pushed.map(readable)))].join('\n');
    let message: string | undefined;
    try {
      message = (JSON.parse((res.body as Buffer).toString('utf8')) as { errormessage?: string }).errormessage;
    } catch {
      message = undefined;
    }
    const changedB = watchB ? JSON.stringify(await sideB(trx)) !== before : false;
    return { status: res.status, message, text, changedB };
  } finally {
    deps.db = t.tdb.db;
    await trx.rollback().catch(() => undefined);
  }
}

/** Side B's ids under every query and body key that names a row of a side. */
function idsOf(x: Side): Record<string, unknown> {
  return {
    countryid: x.countryid,
    schoolid: x.schoolid,
    schoolname: x.schoolname,
    standardid: x.standardid,
    standard: x.standardid,
    studentid: x.studentid,
    userid: x.schooluserid,
    schooluserid: x.schooluserid,
    curriculumid: x.curriculumid,
    curid: x.curriculumid,
    curriculums: [x.curriculumid],
    gradeid: x.gradeid,
    levelid: x.levelid,
    lessonid: x.lessonid,
    curriculumbaselineid: x.curriculumbaselineid,
    clonecurriculumbaselineid: x.curriculumbaselineid,
    baselineid: x.curriculumid,
    feedbackid: x.feedbackid,
    schoolcontributeid: x.schoolcontributeid,
    lmsuserid: x.lmsuserid,
    schoolids: [x.schoolid],
    countryids: [x.countryid],
  };
}

/**
 * Global routes whose answer (or what they send on) may name side B although a narrowed caller called them,
 * each by decision: the reason stands next to the route's declaration.
 */
const GLOBAL_NAMES_OTHERS: Record<string, string> = {
  'POST /sync/cloud':
    'pushes the whole package server to server to the classroom server of every school; the caller reads nothing of it',
};

describe('scope catalogue', () => {
  it('refuses to start with a route that declares no scope, or an unknown rule, naming the route and the rules', () => {
    const bare = route('GET', '/health/ready', anyUser(), noInput, () => true);
    serviceRoutes.push(bare as CentralRoute);
    try {
      expect(() => createApp(t.config, { db: t.tdb.db, logger: silentLogger })).toThrow(
        "Route GET /health/ready declares no scope: add one of scope.global, scope.schoolsOfCaller, " +
          "scope.countriesOfCaller, scope.curriculaOfCaller, scope.ownAccount, scope.staffOfCaller, " +
            "scope.wholeOrganisation after its gate, as in route('GET', '/health/ready', <gate>, " +
              "scope.<rule>, <input>, <handler>)",
      );
      serviceRoutes[serviceRoutes.length - 1] = route(
        'GET',
        '/health/ready',
        anyUser(),
        { scope: 'everyone', doc: 'made up' },
        noInput,
        () => true,
      ) as CentralRoute;
      expect(() => createApp(t.config, { db: t.tdb.db, logger: silentLogger })).toThrow(
        "Route GET /health/ready: unknown scope rule 'everyone'",
      );
    } finally {
      serviceRoutes.pop();
    }
    expect(() => createApp(t.config, { db: t.tdb.db, logger: silentLogger })).not.toThrow();
  });

  it('has a fixture for every route with an id, and every route declares a scope', () => {
    const { missing } = catalogue();
    expect(missing).toEqual([]);
  });

  it("global routes given side B's ids in their query and body change nothing of side " +
      "B and name nothing of it", async () => {
    const problems: string[] = [];
    let calls = 0;
    const markers = markersOfB();
    for (const route of serviceRoutes) {
      if (route.scope?.scope !== 'global') continue;
      const params = (route.path.match(/:\w+/g) ?? []).map((p) => p.slice(1));
      // Paths of shared rows only (questions, tags, files): a parameter without a fixture names no side.
      if (params.some((p) => !OTHER_PARAMS[p])) continue;
      const key = `${route.method} ${route.path}`;
      const url = route.path.replace(/:(\w+)/g, (_, p: string) => encodeURIComponent(OTHER_PARAMS[p](s)));
      const ids = idsOf(s.B);
      const query = Object.fromEntries(Object.entries(ids).filter(([, v]) => typeof v === 'string')) as Record<
        string,
        string
      >;
      const readsBody = route.method !== 'GET' && route.method !== 'DELETE';
      for (const who of NARROWED) {
        calls += 1;
        const res = await callOnce(
          as[who],
          route.method,
          { url, query, body: readsBody ? { pageindex: 1, pagesize: 10, ...ids } : undefined },
          true,
        );
        const named = res.status < 400 ? markers.filter((m) => res.text.includes(m)) : [];
        if (res.status >= 500) problems.push(`${key} as ${who}: answered ${res.status} ${res.text.slice(0, 200)}`);
        if (res.changedB) problems.push(`${key} as ${who}: side B's rows changed (answer ${res.status})`);
        if (named.length && !GLOBAL_NAMES_OTHERS[key])
          problems.push(`${key} as ${who}: answered ${res.status} naming ${named.join(', ')} of side B`);
      }
    }
    process.stdout.write(`scope catalogue: ${calls} calls of global routes with side B's ids in query and body\n`);
    expect(problems).toEqual([]);
    expect(calls).toBeGreaterThan(100);
  }, 600_000);

  it('refuses or hides side B from every narrowed caller kind on every id route, and side A works', async () => {
    const { entries, reviewedNone } = catalogue();
    const problems: string[] = [];
    let tried = 0;
    let gated = 0;
    let succeeded = 0;
    const markers = markersOfB();
    for (const e of entries) {
      for (const who of NARROWED) {
        const own = await callOnce(as[who], e.route.method, e.build(s.A, s), false);
        const admitted = HANDLER_ADMITS[e.key]?.includes(who) ?? true;
        if (own.status === 401 || own.status === 403 || !admitted) {
          gated += 1;
          const other = await callOnce(as[who], e.route.method, e.build(s.B, s), true);
          if (other.status !== own.status || other.message !== own.message || other.changedB) {
            problems.push(
              `${e.key} as ${who}: own ${own.status} ${own.message} (refused whatever the ids) but side B ` +
                `${other.status} ${other.message}${other.changedB ? ', side B changed' : ''}`,
            );
          }
          continue;
        }
        tried += 1;
        const other = await callOnce(as[who], e.route.method, e.build(s.B, s), true);
        const unknown = await callOnce(as[who], e.route.method, e.build(nowhere(), s), false);
        const named = markers.filter((m) => other.text.includes(m));
        if (other.status >= 500)
          problems.push(`${e.key} as ${who}: side B answered ${other.status} ${other.text.slice(0, 200)}`);
        else if (other.status < 400 && named.length)
          problems.push(`${e.key} as ${who}: side B answered ${other.status} naming ${named.join(', ')}`);
        if (other.changedB) problems.push(`${e.key} as ${who}: side B's rows changed (answer ${other.status})`);
        if (own.status >= 500)
          problems.push(`${e.key} as ${who}: side A answered ${own.status} ${own.text.slice(0, 200)}`);
        else if (own.status >= 400 && own.status === unknown.status && own.message === unknown.message) {
          problems.push(`${e.key} as ${who}: side A is answered as an unknown id (${own.status} ${own.message})`);
        } else if (own.status >= 300 && !OWN_REFUSED[e.key]?.test(`${own.status} ${own.message}`)) {
          // The gate let the caller in: it holds the permission, so its own ids must work.
          problems.push(`${e.key} as ${who}: side A answered ${own.status} ${own.message}, not a success`);
        } else succeeded += own.status < 300 ? 1 : 0;
      }
    }
    const routes = entries.length;
    process.stdout.write(
      `scope catalogue: ${routes} id routes x ${NARROWED.length} narrowed caller kinds (${NARROWED.join(', ')}): ` +
        `${tried} calls tried with own, other and unknown ids, ` +
        `${succeeded} own calls succeeded, ${gated} left to the gate; ${reviewedNone} id-less write routes reviewed\n`,
    );
    expect(problems).toEqual([]);
    expect(routes).toBeGreaterThan(100);
    // Refusing every call at the gate would pass the checks above: most calls must get through and succeed.
    expect(tried).toBeGreaterThan(routes * 2);
    expect(succeeded).toBeGreaterThan(tried * 0.9);
  }, 600_000);
});
