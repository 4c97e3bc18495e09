import fsp from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classroom, createTestDatabase, repoRoot, type Knex, type TestDatabase } from '@lms/db';
import { LOG_COLUMNS, LOG_PRIMARY_KEYS, type LogTable } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createObjectStore } from '../src/objects';
import { seedDemo } from '../src/seed/demo';
import { silentLogger, testDatabase } from './helpers';
import { createApp as createClassroomApp } from '../../classroom/src/app';
import { loadConfig as loadClassroomConfig } from '../../classroom/src/config';
import { CLASSROOM_DEMO, seedDemo as seedClassroomDemo } from '../../classroom/src/seed/demo';
import { syncLog, type SyncIo } from '../../scripts/src/sync-log/sync';

// The whole classroom-to-cloud loop on loopback: a learner works on the classroom server, the teacher's
// device tool moves the log, and central ends up holding exactly the classroom's rows.

const TABLES = Object.keys(LOG_COLUMNS) as LogTable[];

async function listen(app: object): Promise<{ server: Server; origin: string }> {
  const server = (app as unknown as { listen(port: number, host: string): Server }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The import tables as rows of their contract columns, in key order, with numbers compared as numbers. */
async function rowsOf(db: Knex): Promise<Record<string, Array<Record<string, unknown>>>> {
  const out: Record<string, Array<Record<string, unknown>>> = {};
  for (const table of TABLES) {
    const spec = LOG_COLUMNS[table] as Record<string, string>;
    const cols = Object.keys(spec);
    const rows = (await db(table).orderBy(LOG_PRIMARY_KEYS[table]).select(cols)) as Array<Record<string, unknown>>;
    out[table] = rows.map((r) =>
      Object.fromEntries(
        cols.map((c) => [c, ['decimal', 'number', 'int'].includes(spec[c]) && r[c] !== null ? Number(r[c]) : r[c]]),
      ),
    );
  }
  return out;
}

/** Central's rows without the results its demo seed wrote before any log arrived. */
function withoutSeededResults(
  rows: Record<string, Array<Record<string, unknown>>>,
  seeded: Record<string, Array<Record<string, unknown>>>,
): Record<string, Array<Record<string, unknown>>> {
  const key = (table: string, r: Record<string, unknown>) => r[LOG_PRIMARY_KEYS[table as LogTable]];
  return Object.fromEntries(Object.entries(rows).map(([table, list]) => {
    const before = new Set(seeded[table].map((r) => key(table, r)));
    return [table, list.filter((r) => !before.has(key(table, r)))];
  }));
}

describe('classroom-to-cloud log sync, end to end', () => {
  let centralDb: TestDatabase;
  let classroomDb: TestDatabase;
  let central: { server: Server; origin: string };
  let room: { server: Server; origin: string };
  let tmp: string;
  let seeded: Record<string, Array<Record<string, unknown>>>;

  beforeAll(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-e2e-log-'));
    centralDb = await testDatabase();
    classroomDb = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
    await seedDemo(centralDb.db);
    seeded = await rowsOf(centralDb.db);
    await seedClassroomDemo(classroomDb.db);
    const objects = createObjectStore({ kind: 'folder', dir: path.relative(repoRoot, path.join(tmp, 'objects')) });
    central = await listen(
      createApp(
        loadConfig({
          NODE_ENV: 'test',
          DATABASE_URL: centralDb.url,
          LOG_IMPORT_ENABLED: 'true',
          RATE_LIMIT_MAX: '100000',
        }),
        {
          db: centralDb.db,
          logger: silentLogger,
          objects,
        },
      ),
    );
    room = await listen(
      createClassroomApp(loadClassroomConfig({ NODE_ENV: 'test', DATABASE_URL: classroomDb.url }), {
        db: classroomDb.db,
        logger: silentLogger,
      }),
    );
  });

  afterAll(async () => {
    central?.server.close();
    room?.server.close();
    await centralDb?.dispose();
    await classroomDb?.dispose();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('moves what a learner did on the classroom server into central, and a second upload changes nothing', async () => {
    const c = CLASSROOM_DEMO;
    const login = await fetch(`${room.origin}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ studentusername: c.students[0].schoolusername, studentpassword: c.password }),
    });
    expect(login.status).toBe(200);
    const learner = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
    const submit = (url: string, body: unknown) =>
      fetch(`${room.origin}${url}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${learner}` },
        body: JSON.stringify(body),
      });
    const started = Date.now() - 60_000;
    const quiz = await submit(`/result/lesson/quiz/${c.quizid}`, {
      starttime: started,
      endtime: started + 30_000,
      result: c.quizquestions.map((q, i) => ({
        iscorrect: i !== 2,
        questionid: c.questions[i],
        lessonquizid: c.quizid,
        lessonquizquestionid: q,
      })),
    });
    expect(quiz.status).toBe(200);
    const practice = await submit(`/result/lesson/practice/${c.practiceid}`, {
      starttime: started + 40_000,
      endtime: started + 50_000,
      result: c.practicequestions.map((q, i) => ({
        iscorrect: true,
        questionid: c.questions[i],
        lessonpracticeid: c.practiceid,
        lessonpracticequestionid: q,
        tries: i + 1,
      })),
    });
    expect(practice.status).toBe(200);

    const progress: Array<[string, number, number]> = [];
    const lines: string[] = [];
    const io: SyncIo = {
      log: (l) => lines.push(l),
      progress: (what, done, total) => progress.push([what, done, total]),
    };
    const zip = path.join(tmp, 'studentlog.zip');
    const summary = await syncLog(
      {
        classroom: room.origin,
        central: central.origin,
        user: c.teacher.schoolusername,
        password: c.password,
        out: zip,
        offline: true,
        keep: true,
      },
      io,
    );

    const onClassroom = await rowsOf(classroomDb.db);
    const answers = c.quizquestions.length + c.practicequestions.length;
    expect(onClassroom.studentprogress).toHaveLength(2);
    expect(onClassroom.studentprogressquestions).toHaveLength(answers);
    expect(onClassroom.rpiuseraccess.length).toBeGreaterThanOrEqual(2); // the learner's and the teacher's sign-ins
    const inCentral = await rowsOf(centralDb.db);
    expect(withoutSeededResults(inCentral, seeded)).toEqual(onClassroom);
    expect(inCentral.studentprogress).toHaveLength(onClassroom.studentprogress.length + seeded.studentprogress.length);
    expect(Number((await centralDb.db('logimportpending').count({ n: '*' }))[0].n)).toBe(0);
    expect(await centralDb.db('syncs').first()).toMatchObject({
      created_by: c.teacher.schooluserid,
      offlineonline: true,
      type: 1,
    });
    expect(summary.imported).toMatchObject({ studentprogress: 2, studentprogressquestions: answers });

    // What the teacher saw: both transfers ran to their end, and the import was reported.
    const size = (await fsp.stat(zip)).size;
    expect(progress.filter(([w]) => w === 'upload').at(-1)).toEqual(['upload', size, size]);
    expect(progress.filter(([w]) => w === 'download').at(-1)?.[1]).toBe(size);
    expect(lines.join('\n')).toMatch(new RegExp(`studentprogressquestions\\s+${answers} rows`));

    // The same file again (the tool's retry path): one more sync record, not one changed row.
    await syncLog(
      {
        central: central.origin,
        user: c.teacher.schoolusername,
        password: c.password,
        out: zip,
        zip,
        offline: false,
        keep: false,
      },
      io,
    );
    expect(await rowsOf(centralDb.db)).toEqual(inCentral);
    expect(Number((await centralDb.db('syncs').count({ n: '*' }))[0].n)).toBe(2);
    await expect(fsp.stat(zip)).rejects.toThrow(); // removed once central holds it
  });

  it('keeps the ZIP and exits with a clear message when the upload is refused', async () => {
    const zip = path.join(tmp, 'kept.zip');
    const err = await syncLog(
      {
        classroom: room.origin,
        central: central.origin,
        user: CLASSROOM_DEMO.teacher.schoolusername,
        password: 'wrong',
        out: zip,
        offline: false,
        keep: false,
      },
      { log: () => undefined, progress: () => undefined },
    ).then(() => null, (e: Error) => e);
    expect(err?.message).toMatch(/sign-in on the classroom server failed/);

    // Downloaded fine, but central is unreachable: the ZIP stays for a retry.
    const dead = 'http://127.0.0.1:9';
    const err2 = await syncLog(
      {
        classroom: room.origin,
        central: dead,
        user: CLASSROOM_DEMO.teacher.schoolusername,
        password: CLASSROOM_DEMO.password,
        out: zip,
        offline: false,
        keep: false,
      },
      { log: () => undefined, progress: () => undefined },
    ).then(
      () => null,
      (e: Error) => e,
    );
    expect(err2?.message).toMatch(
      new RegExp(
        /cannot reach the central API[\s\S]*the log is kept in .*kept\.zip; /.source +
          /send it again with: npm run sync-log -- --central/.source,
      ),
    );
    expect((await fsp.stat(zip)).size).toBeGreaterThan(0);
  });
});
