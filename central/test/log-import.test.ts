import crypto from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import request from 'supertest';
import yazl from 'yazl';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO, repoRoot, seedDemoContent, type Knex, type TestDatabase } from '@lms/db';
import { writeLogZipFromDocument, type LogDocument } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createObjectStore, type ObjectStore, type StoredObject } from '../src/objects';
import { PASSWORD, createSchoolUser, createStaff, schoolLogin, staffLogin } from './accounts';
import { silentLogger, testDatabase } from './helpers';
import { startS3Sandbox, type S3Sandbox } from './s3';

const IMPORT_TABLES = [
  'rpiuseraccess',
  'studentprogress',
  'studentprogressquestions',
  'studentactives',
  'studentlearningsprogress',
  'studentgradesprogress',
  'studentlevelsprogress',
  'studentlessonsprogress',
  'studentpoints',
  'studentappusages',
] as const;
const ALL_TABLES = [...IMPORT_TABLES, 'syncs', 'logfiles', 'logimportpending'] as const;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A ZIP with exactly these entries and bytes (to send what a real classroom server wrote, quirks included). */
async function rawZip(entries: Array<[string, string | Buffer]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of entries) zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name);
  zip.end();
  return readAll(zip.outputStream as unknown as Readable);
}

const uuid = () => crypto.randomUUID();
const iso = (d: string) => new Date(d).toISOString();

interface People {
  teacherid: string;
  teacherToken: string;
  students: Array<{ studentid: string; schooluserid: string }>;
}

async function insertLearner(
  db: Knex,
  username: string,
  schoolname: string,
): Promise<{ studentid: string; schooluserid: string }> {
  const schooluserid = uuid();
  await db('schoolusers').insert({
    schooluserid,
    schoolusername: username,
    schooluserpasswordhash: 'x',
    schooluserrole: 4,
    schoolname,
  });
  const studentid = uuid();
  await db('students').insert({
    studentid,
    studentfirstname: username,
    genderid: 1,
    city: 'C',
    country: 'X',
    state: 'S',
    curriculumid: DEMO.curriculumid,
    schooluserid,
    schoolname,
  });
  return { studentid, schooluserid };
}

async function seedPeople(db: Knex, app: Parameters<typeof request>[0]): Promise<People> {
  await seedDemoContent(db);
  const teacherid = await createSchoolUser(db, { schoolusername: 'teacher1', role: 3, schoolname: DEMO.schoolname });
  const students: People['students'] = [];
  for (let i = 0; i < 2; i += 1) students.push(await insertLearner(db, `learner${i}`, DEMO.schoolname));
  const { accessToken } = await schoolLogin(app, 'teacher1');
  return { teacherid, teacherToken: accessToken, students };
}

/** One row in every collection for each learner; fixed ids so tests can look the rows up. */
function logDocument(p: People, ids = { suffix: '' }): LogDocument & { log: object } {
  const [a, b] = p.students;
  const id = (n: string) => `${n}${ids.suffix}`.padEnd(36, '0').slice(0, 36);
  return {
    log: {
      result: [
        {
          studentprogressid: id('sp-a'),
          studentid: a.studentid,
          ispass: true,
          studentprogressreferenceid: DEMO.lessonid,
          starttime: iso('2026-08-20T05:12:19Z'),
          endtime: iso('2026-08-20T05:14:00Z'),
          progresstype: 2,
          resultpercentage: 80,
          marks: 4,
          points: 40,
          scores: 2,
          fullpoints: 50,
          studentprogressquestions: [
            {
              studentprogressquestionid: id('q-a1'),
              studentprogressid: id('sp-a'),
              tries: 1,
              iscorrect: true,
              referencequestionid: uuid(),
            },
            {
              studentprogressquestionid: id('q-a2'),
              studentprogressid: id('sp-a'),
              tries: 2,
              iscorrect: false,
              referencequestionid: uuid(),
            },
          ],
        },
        {
          studentprogressid: id('sp-b'),
          studentid: b.studentid,
          ispass: false,
          studentprogressreferenceid: DEMO.levelid,
          starttime: iso('2026-08-21T05:12:19Z'),
          endtime: null,
          progresstype: 3,
          resultpercentage: 20,
          marks: 1,
          points: 10,
          scores: 0,
          fullpoints: 50,
        },
      ],
      progress: {
        studentactives: [
          {
            studentactiveid: id('act-a'),
            studentid: a.studentid,
            referenceid: DEMO.lessonid,
            referencetype: 3,
            created_at: iso('2026-08-20T05:00:00Z'),
          },
        ],
        studentlearningprogress: [
          {
            studentlearningprogressid: id('learn-a'),
            studentid: a.studentid,
            userid: null,
            lessonlearningid: uuid(),
            points: 5,
            progress: 30,
            progress_percentage: 50,
            content_length: 60,
            viewed: 1,
            lastupdated: iso('2026-08-20T05:01:00Z'),
          },
        ],
        studentgradesprogress: [
          {
            studentgradeprogressid: id('grade-a'),
            studentid: a.studentid,
            curriculumid: DEMO.curriculumid,
            gradeid: DEMO.gradeid,
            progress: 10,
            points: 40,
            scores: 2,
            lastupdated: iso('2026-08-20T05:02:00Z'),
            completed: false,
          },
        ],
        studentlevelsprogress: [
          {
            studentlevelprogressid: id('level-a'),
            studentid: a.studentid,
            levelid: DEMO.levelid,
            gradeid: DEMO.gradeid,
            curid: DEMO.curriculumid,
            progress: 10,
            points: 40,
            scores: 2,
            lastupdated: iso('2026-08-20T05:03:00Z'),
            completed: false,
            added_default_score: false,
          },
        ],
        studentlessonsprogress: [
          {
            studentlessonprogressid: id('lesson-a'),
            studentid: a.studentid,
            lessonid: DEMO.lessonid,
            levelid: DEMO.levelid,
            gradeid: DEMO.gradeid,
            curid: DEMO.curriculumid,
            progress: 100,
            points: 40,
            scores: 2,
            lastupdated: iso('2026-08-20T05:04:00Z'),
            completed: true,
            added_completed_scores: true,
          },
        ],
        studentpoints: [
          {
            studentpointid: id('points-a'),
            studentid: a.studentid,
            levelid: DEMO.levelid,
            lessonid: DEMO.lessonid,
            gradepoints: 40,
            totalgradepoints: 400,
            levelpoints: 40,
            totallevelpoints: 200,
            levelquizscores: 0,
            lessonpoints: 40,
            learningpoints: 5,
            practicepoints: 0,
            quizpoints: 35,
            totallearningpoints: 10,
            totalpracticepoints: 10,
            totalquizpoints: 50,
            scores: 2,
            created_at: iso('2026-08-20T05:05:00Z'),
          },
        ],
        studentappusages: [
          {
            studentappusageid: id('usage-a'),
            schooluserid: a.schooluserid,
            time_spent: 600,
            last_updated: iso('2026-08-20T05:06:00Z'),
            created_at: iso('2026-08-20T05:00:00Z'),
          },
        ],
      },
      access: [
        {
          rpiuseraccessid: id('acc-a'),
          userid: a.schooluserid,
          logintime: iso('2026-08-20T04:59:00Z'),
          logouttime: null,
          timespent: '0',
          status: 1,
          ipaddress: '10.0.0.5',
        },
        {
          rpiuseraccessid: id('acc-t'),
          userid: p.teacherid,
          logintime: iso('2026-08-20T04:50:00Z'),
          logouttime: iso('2026-08-20T06:00:00Z'),
          timespent: '4200',
          status: 2,
          ipaddress: '10.0.0.2',
        },
      ],
    },
  } as LogDocument & { log: object };
}

const LOG_FILES = [
  {
    name: 'RPI-API-info-2026-08-20.log',
    content:
      '{"level":"info","message":"teacher1 export log","metadata":{"application":"RPI-API","logaccesstype":12}}\n',
  },
  { name: 'RPI-API-error-2026-08-20.log', content: '' },
];

async function zipOf(doc: LogDocument, files = LOG_FILES): Promise<Buffer> {
  return readAll(writeLogZipFromDocument(doc, files));
}

async function counts(db: Knex): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ALL_TABLES) {
    const [{ n }] = await db(t).count({ n: '*' });
    out[t] = Number(n);
  }
  return out;
}

async function snapshot(db: Knex): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of IMPORT_TABLES) {
    const pk =
      t === 'studentlearningsprogress'
        ? 'studentlearningprogressid'
        : t === 'studentgradesprogress'
          ? 'studentgradeprogressid'
          : t === 'studentlevelsprogress'
            ? 'studentlevelprogressid'
            : t === 'studentlessonsprogress'
              ? 'studentlessonprogressid'
              : t === 'studentprogressquestions'
                ? 'studentprogressquestionid'
                : t === 'studentactives'
                  ? 'studentactiveid'
                  : t === 'studentpoints'
                    ? 'studentpointid'
                    : t === 'studentappusages'
                      ? 'studentappusageid'
                      : `${t}id`;
    out[t] = await db(t).orderBy(pk).select();
  }
  return out;
}

const EMPTY_COUNTS = Object.fromEntries(ALL_TABLES.map((t) => [t, 0]));

/** An object store that can be told to fail, to check that the database and the store stay in step. */
function faultyStore(inner: ObjectStore) {
  const faults = { put: false, corruptMeta: false };
  const store: ObjectStore = {
    kind: inner.kind,
    async put(key, body, options) {
      if (faults.put) {
        (body as Readable).resume?.();
        throw new Error('object store unavailable');
      }
      const stored = await inner.put(key, body, options);
      // A metadata value the logfiles insert cannot serialise: the transaction fails after the object exists.
      return faults.corruptMeta ? ({ ...stored, size: BigInt(stored.size) } as unknown as StoredObject) : stored;
    },
    get: (k) => inner.get(k),
    stat: (k) => inner.stat(k),
    delete: (k) => inner.delete(k),
    list: (p) => inner.list(p),
    probe: () => inner.probe(),
  };
  return { store, faults };
}

let sandbox: S3Sandbox;
let tmp: string;

beforeAll(async () => {
  sandbox = await startS3Sandbox('lms-logimport-test-');
  tmp = sandbox.tmp;
});

afterAll(async () => {
  await sandbox?.close();
});

let storeCounter = 0;
const storeKinds = [
  {
    name: 'folder',
    make: () =>
      createObjectStore({ kind: 'folder', dir: path.relative(repoRoot, path.join(tmp, `objects-${++storeCounter}`)) }),
  },
  {
    name: 's3',
    make: () => createObjectStore(sandbox.s3(`lms-log-${++storeCounter}`)),
  },
] as const;

describe.each(storeKinds)('PUT /log/import with the $name object store', (kind) => {
  let tdb: TestDatabase;
  let db: Knex;
  let app: ReturnType<typeof createApp>;
  let objects: ObjectStore;
  let faults: ReturnType<typeof faultyStore>['faults'];
  let people: People;
  let env: Record<string, string>;

  const upload = (zip: Buffer, token = people.teacherToken, query = '') =>
    request(app)
      .put(`/log/import${query}`)
      .set('Authorization', `Bearer ${token}`)
      .attach('importfile', zip, 'studentlog');

  beforeAll(async () => {
    tdb = await testDatabase();
    db = tdb.db;
    env = {
      NODE_ENV: 'test',
      DATABASE_URL: tdb.url,
      LOG_IMPORT_ENABLED: 'true',
      MAX_UPLOAD_MB: '2',
      RATE_LIMIT_MAX: '100000',
    };
  });
  afterAll(async () => {
    await tdb.dispose();
  });
  beforeEach(async () => {
    for (const t of [...ALL_TABLES].reverse().concat(['students', 'tokens'])) await db(t).del();
    await db('schoolusers').del();
    const f = faultyStore(kind.make());
    objects = f.store;
    faults = f.faults;
    app = createApp(loadConfig(env), { db, logger: silentLogger, objects });
    people = await seedPeople(db, app);
  });

  it('imports every collection, records the sync, the text logs and the archive, ' +
      'and answers {error:false, data:true}', async () => {
    const zip = await zipOf(logDocument(people));
    const res = await upload(zip, people.teacherToken, '?offline=true');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ error: false, data: true });

    expect(await counts(db)).toEqual({
      ...EMPTY_COUNTS,
      rpiuseraccess: 2,
      studentprogress: 2,
      studentprogressquestions: 2,
      studentactives: 1,
      studentlearningsprogress: 1,
      studentgradesprogress: 1,
      studentlevelsprogress: 1,
      studentlessonsprogress: 1,
      studentpoints: 1,
      studentappusages: 1,
      syncs: 1,
      logfiles: 3,
    });
    const sync = await db('syncs').first();
    expect(sync).toMatchObject({
      type: 1,
      offlineonline: true,
      created_by: people.teacherid,
      filename: expect.stringMatching(/^logupload-\d{13}\.zip$/),
    });
    // The rows it wrote, for the sync-status report.
    expect(sync.rowcount).toBe(13);
    expect(Math.abs(Number(sync.filename.slice(10, 23)) - Date.now())).toBeLessThan(60_000);

    const archive = await db('logfiles').where({ type: 2 }).first();
    expect(archive).toMatchObject({ logfilename: sync.filename, parentfileid: null, isdeleted: false });
    expect(archive.logfilemeta).toMatchObject({
      Key: sync.filename,
      size: zip.length,
      ETag: crypto.createHash('md5').update(zip).digest('hex'),
    });
    const texts = await db('logfiles').where({ type: 1 }).orderBy('logfilename').select();
    expect(texts.map((t) => [t.logfilename, t.parentfileid])).toEqual([
      ['RPI-API-error-2026-08-20.log', archive.logfileid],
      ['RPI-API-info-2026-08-20.log', archive.logfileid],
    ]);
    expect(await readAll(await objects.get(sync.filename))).toEqual(zip);
    expect((await objects.list()).map((o) => o.key)).toEqual([sync.filename]);

    const sp = await db('studentprogress')
      .where({ studentprogressid: 'sp-a'.padEnd(36, '0') })
      .first();
    expect(sp).toMatchObject({
      studentid: people.students[0].studentid,
      ispass: true,
      progresstype: 2,
      resultpercentage: 80,
      starttime: '2026-08-20T05:12:19.000Z',
    });
    const acc = await db('rpiuseraccess').where({ userid: people.teacherid }).first();
    expect(acc).toMatchObject({ timespent: 4200, status: 2, logouttime: '2026-08-20T06:00:00.000Z' });
    const summary = JSON.parse(res.headers['x-log-import']);
    expect(summary).toMatchObject({
      syncid: sync.syncid,
      archive: sync.filename,
      pending: 0,
      logfiles: 2,
      logIniImported: true,
    });
    expect(summary.imported.studentprogressquestions).toBe(2);
  });

  it('is idempotent: the same ZIP again changes no imported row (it is one more ' +
      'sync with its own archive)', async () => {
    const zip = await zipOf(logDocument(people));
    const first = await upload(zip);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.headers['x-log-import']).changed).toBe(13);
    const before = await snapshot(db);
    // On PostgreSQL every rewrite of a row makes a new row version: an unchanged row must keep its own.
    const versions = async () =>
      db.client.config.client === 'pg'
        ? (
            (await db.raw('SELECT xmin::text AS v FROM studentprogress ORDER BY studentprogressid')) as {
              rows: unknown[];
            }
          ).rows
        : [];
    const versionsBefore = await versions();
    const res = await upload(zip);
    expect(res.status).toBe(200);
    // Every row written again, none of them changed: what the teacher's page reports as "nothing changed".
    expect(JSON.parse(res.headers['x-log-import'])).toMatchObject({
      changed: 0,
      learners: { written: 2, unknown: 0, otherSchool: 0 },
    });
    expect(
      Object.values(JSON.parse(res.headers['x-log-import']).imported as Record<string, number>).reduce(
        (a, b) => a + b,
        0,
      ),
    ).toBe(13);
    expect(await snapshot(db)).toEqual(before);
    expect(await versions()).toEqual(versionsBefore);
    expect((await counts(db)).syncs).toBe(2);
    const names = (await db('syncs').orderBy('filename').pluck('filename')) as string[];
    expect(new Set(names).size).toBe(2);
    expect((await objects.list()).map((o) => o.key).sort()).toEqual([...names].sort());
  });

  it('on a duplicate key overwrites exactly the merge columns and keeps the others', async () => {
    const doc = logDocument(people);
    expect((await upload(await zipOf(doc))).status).toBe(200);
    const levelid = 'level-a'.padEnd(36, '0');
    const lessonid = 'lesson-a'.padEnd(36, '0');
    // Set by central after the first import; the classroom's copy says otherwise.
    await db('studentlevelsprogress')
      .where({ studentlevelprogressid: levelid })
      .update({ added_default_score: true, scores: 1 });
    await db('studentlessonsprogress')
      .where({ studentlessonprogressid: lessonid })
      .update({ added_completed_scores: false, progress: 5 });
    expect((await upload(await zipOf(doc))).status).toBe(200);
    expect(await db('studentlevelsprogress').where({ studentlevelprogressid: levelid }).first()).toMatchObject({
      added_default_score: true,
      scores: 2,
    });
    expect(await db('studentlessonsprogress').where({ studentlessonprogressid: lessonid }).first()).toMatchObject({
      added_completed_scores: false,
      progress: 100,
    });

    const changed = logDocument(people);
    changed.log.result[0].marks = 5;
    changed.log.result[0].studentprogressquestions![0].iscorrect = false;
    changed.log.access[0].status = 3;
    expect((await upload(await zipOf(changed))).status).toBe(200);
    expect(
      await db('studentprogress')
        .where({ studentprogressid: 'sp-a'.padEnd(36, '0') })
        .first(),
    ).toMatchObject({ marks: 5 });
    expect(
      await db('studentprogressquestions')
        .where({ studentprogressquestionid: 'q-a1'.padEnd(36, '0') })
        .first(),
    ).toMatchObject({ iscorrect: false });
    expect(
      await db('rpiuseraccess')
        .where({ rpiuseraccessid: 'acc-a'.padEnd(36, '0') })
        .first(),
    ).toMatchObject({ status: 3 });
  });

  it('accepts a ZIP exactly as the original classroom server writes it', async () => {
    const [a] = people.students;
    // 0/1 booleans, DECIMAL as a string, MySQL datetimes, no
    // studentprogressquestions key, columns central does not have.
    const text = JSON.stringify({
      log: {
        result: [
          {
            studentid: a.studentid,
            ispass: 1,
            studentprogressreferenceid: DEMO.lessonid,
            starttime: '2026-08-20T05:12:19.000Z',
            endtime: '2026-08-20 05:14:00',
            studentprogressid: 'orig-sp-1'.padEnd(36, '0'),
            progresstype: 1,
            resultpercentage: '66.67',
            marks: 2,
            points: 20,
            scores: 0,
            fullpoints: 30,
            answer: 'x',
            verified: 0,
          },
          {
            studentid: a.studentid,
            ispass: 0,
            studentprogressreferenceid: DEMO.levelid,
            starttime: 1787375539000,
            endtime: null,
            studentprogressid: 'orig-sp-2'.padEnd(36, '0'),
            progresstype: 3,
            resultpercentage: 10,
            marks: 1,
            points: 5,
            scores: 0,
            fullpoints: 50,
            studentprogressquestions: [
              {
                studentprogressid: 'orig-sp-2'.padEnd(36, '0'),
                studentprogressquestionid: 'orig-q-1'.padEnd(36, '0'),
                tries: 0,
                iscorrect: 1,
                referencequestionid: uuid(),
              },
            ],
          },
        ],
        progress: {
          studentactives: [],
          studentlearningprogress: [],
          studentgradesprogress: [],
          studentlevelsprogress: [
            {
              studentlevelprogressid: 'orig-lv-1'.padEnd(36, '0'),
              studentid: a.studentid,
              levelid: DEMO.levelid,
              gradeid: DEMO.gradeid,
              curid: DEMO.curriculumid,
              progress: 50,
              points: null,
              scores: null,
              lastupdated: '2026-08-20T05:03:00.000Z',
              completed: 0,
              added_default_score: 1,
            },
          ],
          studentlessonsprogress: [],
          studentpoints: [],
          studentappusages: [],
        },
        access: [
          {
            userid: a.schooluserid,
            logintime: '2026-08-20T04:59:00.000Z',
            logouttime: null,
            timespent: '12.5',
            status: 1,
            ipaddress: '::1',
            rpiuseraccessid: 'orig-acc-1',
          },
        ],
      },
    });
    const zip = await rawZip([
      ['log.ini', text],
      ['RPI-API-error-2026-08-20.log', ''],
      ['RPI-API-info-2026-08-20.log', '{"level":"info"}\n'],
    ]);
    const res = await upload(zip);
    expect(res.body).toEqual({ error: false, data: true });
    expect(
      await db('studentprogress')
        .where({ studentprogressid: 'orig-sp-1'.padEnd(36, '0') })
        .first(),
    ).toMatchObject({
      ispass: true,
      resultpercentage: 66.67,
      endtime: '2026-08-20T05:14:00.000Z',
    });
    expect(
      await db('studentprogress')
        .where({ studentprogressid: 'orig-sp-2'.padEnd(36, '0') })
        .first(),
    ).toMatchObject({ ispass: false, starttime: new Date(1787375539000).toISOString() });
    expect(await db('studentprogressquestions').first()).toMatchObject({
      studentprogressid: 'orig-sp-2'.padEnd(36, '0'),
      iscorrect: true,
    });
    expect(await db('studentlevelsprogress').first()).toMatchObject({
      completed: false,
      added_default_score: true,
      points: null,
    });
    expect(await db('rpiuseraccess').first()).toMatchObject({ rpiuseraccessid: 'orig-acc-1', timespent: 12.5 });
    expect((await counts(db)).logfiles).toBe(3);
  });

  it('parks rows whose learner central does not know, imports the rest, ' +
      'and moves them in once the learner exists', async () => {
    const doc = logDocument(people);
    const ghost = { studentid: uuid(), schooluserid: uuid() };
    doc.log.result.push({
      ...doc.log.result[0],
      studentprogressid: 'ghost-sp'.padEnd(36, '0'),
      studentid: ghost.studentid,
      studentprogressquestions: [
        {
          studentprogressquestionid: 'ghost-q'.padEnd(36, '0'),
          studentprogressid: 'ghost-sp'.padEnd(36, '0'),
          tries: 1,
          iscorrect: true,
          referencequestionid: uuid(),
        },
      ],
    });
    doc.log.progress.studentpoints.push({
      ...doc.log.progress.studentpoints[0],
      studentpointid: 'ghost-pt'.padEnd(36, '0'),
      studentid: ghost.studentid,
    });
    doc.log.progress.studentappusages.push({
      ...doc.log.progress.studentappusages[0],
      studentappusageid: 'ghost-use'.padEnd(36, '0'),
      schooluserid: ghost.schooluserid,
    });
    doc.log.access.push({ ...doc.log.access[0], rpiuseraccessid: 'ghost-acc', userid: ghost.schooluserid });
    const zip = await zipOf(doc);

    const res = await upload(zip);
    expect(res.body).toEqual({ error: false, data: true });
    expect(JSON.parse(res.headers['x-log-import'])).toMatchObject({
      pending: 5,
      learners: { written: 2, unknown: 1, otherSchool: 0 },
    });
    const c = await counts(db);
    expect(c).toMatchObject({
      studentprogress: 2,
      studentprogressquestions: 2,
      studentpoints: 1,
      studentappusages: 1,
      rpiuseraccess: 2,
      logimportpending: 5,
    });
    const parked = await db('logimportpending').orderBy(['tablename', 'rowid']).select();
    expect(parked.map((r) => [r.tablename, r.rowid, r.learnerid, r.reason])).toEqual([
      ['rpiuseraccess', 'ghost-acc', ghost.schooluserid, 'unknown school user'],
      ['studentappusages', 'ghost-use'.padEnd(36, '0'), ghost.schooluserid, 'unknown school user'],
      ['studentpoints', 'ghost-pt'.padEnd(36, '0'), ghost.studentid, 'unknown student'],
      ['studentprogress', 'ghost-sp'.padEnd(36, '0'), ghost.studentid, 'unknown student'],
      ['studentprogressquestions', 'ghost-q'.padEnd(36, '0'), null, 'result parked'],
    ]);
    expect(parked[3].rowdata).toMatchObject({
      studentprogressid: 'ghost-sp'.padEnd(36, '0'),
      marks: 4,
      starttime: '2026-08-20T05:12:19.000Z',
    });

    // The same upload again: still five parked rows, not ten.
    expect((await upload(zip)).status).toBe(200);
    expect((await counts(db)).logimportpending).toBe(5);

    // The roster reaches central; the next upload carrying those rows imports them and clears the parking.
    await db('schoolusers').insert({
      schooluserid: ghost.schooluserid,
      schoolusername: 'ghost',
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
      schoolname: DEMO.schoolname,
    });
    await db('students').insert({
      studentid: ghost.studentid,
      studentfirstname: 'Ghost',
      genderid: 1,
      city: 'C',
      country: 'X',
      state: 'S',
      curriculumid: DEMO.curriculumid,
      schooluserid: ghost.schooluserid,
      schoolname: DEMO.schoolname,
    });
    const again = await upload(zip);
    expect(JSON.parse(again.headers['x-log-import']).pending).toBe(0);
    expect(await counts(db)).toMatchObject({
      studentprogress: 3,
      studentprogressquestions: 3,
      studentpoints: 2,
      studentappusages: 2,
      rpiuseraccess: 3,
      logimportpending: 0,
    });
  });

  it("refuses rows of another school's learners: " +
      "nothing of theirs is written or parked, and the count says so", async () => {
    const other = await insertLearner(db, 'elsewhere', 'Another School');
    const doc = logDocument({ ...people, students: [other, people.students[1]] });
    const res = await upload(await zipOf(doc));
    expect(res.status).toBe(200);
    // Learner a's rows (one result with two questions, one row in each progress collection, one access and one usage)
    // name the other school's learner; learner b's result and the teacher's own access row are ours.
    const summary = JSON.parse(res.headers['x-log-import']);
    expect(summary.refused).toBe(11);
    expect(summary.pending).toBe(0);
    expect(summary.learners).toEqual({ written: 1, unknown: 0, otherSchool: 1 });
    expect(await db('studentprogress').where({ studentid: other.studentid }).count({ n: '*' }).first()).toMatchObject({
      n: 0,
    });
    expect(await counts(db)).toMatchObject({
      studentprogress: 1,
      studentprogressquestions: 0,
      studentactives: 0,
      studentpoints: 0,
      studentappusages: 0,
      rpiuseraccess: 1,
      logimportpending: 0,
    });
  });

  it('never moves an existing row to another learner, even of the same school', async () => {
    expect((await upload(await zipOf(logDocument(people)))).status).toBe(200);
    const spa = 'sp-a'.padEnd(36, '0');
    const before = await db('studentprogress').where({ studentprogressid: spa }).first();
    // The same result id, now claiming learner b with a perfect score.
    const forged = logDocument({ ...people, students: [people.students[1], people.students[0]] });
    forged.log.result[0].ispass = true;
    forged.log.result[0].resultpercentage = 100;
    expect((await upload(await zipOf(forged))).status).toBe(200);
    expect(await db('studentprogress').where({ studentprogressid: spa }).first()).toEqual(before);
  });

  it('writes nothing from a log.ini that lacks log.access, ' +
      'log.result or log.progress, and still answers 200', async () => {
    const doc = logDocument(people) as { log: Record<string, unknown> };
    delete doc.log.access;
    const text = JSON.stringify(doc);
    const res = await upload(await rawZip([['log.ini', text]]));
    expect(res.body).toEqual({ error: false, data: true });
    expect(await counts(db)).toEqual({ ...EMPTY_COUNTS, syncs: 1, logfiles: 1 });
    for (const empty of ['[]', '{}', '{"log":{}}']) {
      expect((await upload(await rawZip([['log.ini', empty]]))).body).toEqual({ error: false, data: true });
    }
    expect(await counts(db)).toEqual({ ...EMPTY_COUNTS, syncs: 4, logfiles: 4 });
    expect(JSON.parse((await upload(await zipOf([]))).headers['x-log-import'])).toMatchObject({
      logIniImported: false,
      imported: {},
    });
  });

  describe('refusals: the answer, and nothing written to the database or the object store', () => {
    const expectNothingWritten = async () => {
      expect(await counts(db)).toEqual(EMPTY_COUNTS);
      expect(await objects.list()).toEqual([]);
    };

    it('an empty ZIP', async () => {
      const res = await upload(await rawZip([]));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: true, errormessage: 'Invalid file (Zip-file is empty)', data: false });
      await expectNothingWritten();
    });

    it('an entry that is neither log.ini nor an RPI-API file, even after a valid log.ini', async () => {
      const doc = await zipOf(logDocument(people), [...LOG_FILES, { name: 'notes.txt', content: 'hello' }]);
      const res = await upload(doc);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: true, errormessage: 'There is invalid file inside zip-file', data: false });
      await expectNothingWritten();
    });

    // Results written last, and the second one without its NOT NULL progresstype: the database refuses that row
    // after every earlier batch of the import went in.
    const uploadRefusedResult = async (edit: (doc: ReturnType<typeof logDocument>) => void) => {
      const doc = logDocument(people);
      edit(doc);
      delete (doc.log.result[1] as { progresstype?: number }).progresstype;
      const reordered =
        `{"log":{"progress":${JSON.stringify(doc.log.progress)},` +
        `"access":${JSON.stringify(doc.log.access)},"result":${JSON.stringify(doc.log.result)}}}`;
      const res = await upload(
        await rawZip([['log.ini', reordered], ...LOG_FILES.map((f) => [f.name, f.content] as [string, string])]),
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: true, errormessage: 'Invalid File', data: false });
      // A refusal of the file itself: nothing tells the client to send it again.
      expect(res.headers['retry-after']).toBeUndefined();
      await expectNothingWritten();
    };

    it('a failure in the middle of log.ini (a row the database refuses after ' +
        'earlier batches were written)', async () => {
      await uploadRefusedResult((doc) => {
        doc.log.progress.studentactives = Array.from({ length: 2500 }, (_, i) => ({
          ...doc.log.progress.studentactives[0],
          studentactiveid: `bulk-${i}`.padEnd(36, '0'),
        }));
      });
    });

    it('a failure in the last statement of log.ini (its answer comes after every batch was read)', async () => {
      await uploadRefusedResult((doc) => {
        doc.log.progress.studentactives = Array.from({ length: 1200 }, (_, i) => ({
          ...doc.log.progress.studentactives[0],
          studentactiveid: `last-${i}`.padEnd(36, '0'),
        }));
        // Without questions after it, the batch with the refused row is the last upsert of the import.
        delete (doc.log.result[0] as { studentprogressquestions?: unknown }).studentprogressquestions;
      });
      // The connection is clean for the next import.
      expect((await upload(await zipOf(logDocument(people)))).status).toBe(200);
    });

    it('a failure after the archive was stored: the archive is deleted again', async () => {
      faults.corruptMeta = true;
      const res = await upload(await zipOf(logDocument(people)));
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toBe('Invalid File');
      await expectNothingWritten();
    });

    it('an object store that cannot take the archive: nothing is committed', async () => {
      faults.put = true;
      const res = await upload(await zipOf(logDocument(people)));
      expect(res.status).toBe(400);
      await expectNothingWritten();
    });

    it('log.ini that is not JSON, and a row without its key', async () => {
      let res = await upload(await rawZip([['log.ini', '{"log":{"result":[{"studentprogressid":']]));
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toMatch(/^Invalid File \(log\.ini is not valid JSON/);
      const doc = logDocument(people);
      delete (doc.log.access[0] as Partial<(typeof doc.log.access)[0]>).rpiuseraccessid;
      res = await upload(await rawZip([['log.ini', JSON.stringify(doc)]]));
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toBe('Invalid File (rpiuseraccess: "rpiuseraccessid" is required)');
      await expectNothingWritten();
    });

    it('a ZIP bomb, quickly', async () => {
      const bomb = await rawZip([['log.ini', Buffer.alloc(100 * 1024 * 1024, 0x20)]]);
      expect(bomb.length).toBeLessThan(1024 * 1024);
      const started = Date.now();
      const res = await upload(bomb);
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toMatch(/^Invalid File \(ZIP entry log\.ini has a suspicious compression ratio\)/);
      expect(Date.now() - started).toBeLessThan(2000);
      await expectNothingWritten();
    });

    it('an entry whose name climbs out of the archive', async () => {
      const zip = await rawZip([['log.ini', '[]'], ['xx/RPI-API-info.log', 'x']]);
      // yazl refuses to write such a name; patch it into both the local header and the central directory.
      const patched = Buffer.from(
        zip.toString('latin1').split('xx/RPI-API-info.log').join('../RPI-API-info.log'),
        'latin1',
      );
      expect(patched.length).toBe(zip.length);
      const res = await upload(patched);
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toMatch(/^Invalid File \(Unsafe entry name/);
      await expectNothingWritten();
    });

    it('an upload over MAX_UPLOAD_MB (413), a request without importfile, a bad offline flag', async () => {
      let res = await upload(crypto.randomBytes(2 * 1024 * 1024 + 10));
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ error: true, errormessage: 'Invalid File (the upload is larger than 2 MB)' });
      res = await request(app)
        .put('/log/import')
        .set('Authorization', `Bearer ${people.teacherToken}`)
        .field('other', 'x');
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toBe('Invalid File (no file in field importfile)');
      res = await request(app)
        .put('/log/import')
        .set('Authorization', `Bearer ${people.teacherToken}`)
        .send({ importfile: 'x' });
      expect(res.status).toBe(400);
      res = await upload(await zipOf(logDocument(people)), people.teacherToken, '?offline=maybe');
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toMatch(/offline/);
      res = await upload(await rawZip([['log.ini', '[]']]), people.teacherToken, '?offline=false');
      expect(res.status).toBe(200);
      expect(await db('syncs').first()).toMatchObject({ offlineonline: false });
    });

    it('who may import: no token 401, a staff token 400, a school user central no longer has 400', async () => {
      const zip = await zipOf(logDocument(people));
      let res = await request(app).put('/log/import').attach('importfile', zip, 'studentlog');
      expect(res.status).toBe(401);
      await createStaff(db, { lmsusername: 'admin@example.org', password: PASSWORD });
      const staff = await staffLogin(app, 'admin@example.org');
      res = await upload(zip, staff.accessToken);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: true, errormessage: 'Please login as a teacher!', data: false });
      await createSchoolUser(db, { schoolusername: 'teacher2', role: 3 });
      const gone = await schoolLogin(app, 'teacher2');
      await db('schoolusers').where({ schoolusername: 'teacher2' }).del();
      res = await upload(zip, gone.accessToken);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: true, errormessage: 'Teacher does not exist!', data: false });
      await db('tokens').del();
      await expectNothingWritten();
    });
  });

  it('two uploads of the same ZIP at once (two teachers of the school) both succeed and leave one ' +
      'consistent copy of every row', async () => {
    const zip = await zipOf(logDocument(people));
    // One account imports one log at a time (a second at once is a 429, log-import-limits.test.ts).
    const colleague = `teacher-${uuid()}`;
    await createSchoolUser(db, { schoolusername: colleague, role: 3, schoolname: DEMO.schoolname });
    const [r1, r2] = await Promise.all([upload(zip), upload(zip, (await schoolLogin(app, colleague)).accessToken)]);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    const c = await counts(db);
    expect(c).toMatchObject({
      studentprogress: 2,
      studentprogressquestions: 2,
      rpiuseraccess: 2,
      syncs: 2,
      logfiles: 6,
    });
    const archives = (await db('logfiles').where({ type: 2 }).pluck('logfilename')) as string[];
    expect(new Set(archives).size).toBe(2);
    expect((await objects.list()).map((o) => o.key).sort()).toEqual([...archives].sort());
  });

  it('two logs of one school at once that hold the same rows in opposite orders both succeed ' +
      '(no deadlock between their row locks)', async () => {
    // Two classroom servers' logs, or a log re-sent with rows in another order: each import locks its rows
    // as it writes them, batch by batch, so running side by side they would meet in the middle.
    const doc = logDocument(people);
    const [a] = doc.log.result;
    const results = Array.from({ length: 3000 }, (_, i) => ({
      ...a,
      studentid: people.students[i % 2].studentid,
      studentprogressid: `cross-${String(i).padStart(6, '0')}`.padEnd(36, '0'),
      studentprogressquestions: [],
    }));
    const forward = await zipOf({ ...doc, log: { ...doc.log, result: results } });
    const backward = await zipOf({ ...doc, log: { ...doc.log, result: [...results].reverse() } });
    const colleague = `teacher-${uuid()}`;
    await createSchoolUser(db, { schoolusername: colleague, role: 3, schoolname: DEMO.schoolname });
    const [r1, r2] = await Promise.all([
      upload(forward),
      upload(backward, (await schoolLogin(app, colleague)).accessToken),
    ]);
    expect([r1.status, r1.body, r2.status, r2.body]).toEqual([200, { error: false, data: true }, 200, {
      error: false,
      data: true,
    }]);
    const crossed = await db('studentprogress').where('studentprogressid', 'like', 'cross-%').count({ n: '*' }).first();
    expect(Number(crossed?.n)).toBe(3000);
    expect(Number((await db('syncs').count({ n: '*' }).first())?.n)).toBe(2);
  });
});

describe('PUT /log/import when LOG_IMPORT_ENABLED is off', () => {
  it('answers 404 before authentication and before reading the upload', async () => {
    const tdb = await testDatabase();
    try {
      const app = createApp(loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url }), {
        db: tdb.db,
        logger: silentLogger,
      });
      const res = await request(app).put('/log/import').attach('importfile', Buffer.from('PK'), 'studentlog');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: true, data: false });
      const withToken = await request(app).put('/log/import').set('Authorization', 'Bearer nonsense').send('x');
      expect(withToken.status).toBe(404);
      expect(Number((await tdb.db('syncs').count({ n: '*' }))[0].n)).toBe(0);
    } finally {
      await tdb.dispose();
    }
  });
});
