import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '@lms/db';
import { createLogger, logWindowStart, openZipBuffer } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { DailyLogFiles, dailyLogName, dailyLogStream, localDay } from '../src/logging';
import { makeApp, testDatabase, type TestApp } from './helpers';
import { syncKeyOf, tokenFor, type TestUser } from './auth-helpers';

const uuid = () => crypto.randomUUID();
const DAY = 86_400_000;

const binary = (res: NodeJS.ReadableStream, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

async function unzip(buffer: Buffer): Promise<Record<string, string>> {
  const zip = await openZipBuffer(buffer);
  const out: Record<string, string> = {};
  try {
    for await (const e of zip.entries()) out[e.name] = await e.readText();
  } finally {
    zip.close();
  }
  return out;
}

let t: TestApp;
let logDir: string;
let teacher: TestUser;
let learner: TestUser;

/** The app as server.ts builds it: the logger writes the daily files of LOG_DIR. */
async function build(dir: string): Promise<TestApp> {
  const tdb = await testDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: tdb.url,
    LOG_DIR: dir,
    SERVER_SYNC_KEY: 'sk_export_0123456789',
    JWT_SECRET: 'jwt_export_0123456789',
  });
  const devnull = fs.createWriteStream('/dev/null');
  const logger = createLogger({ name: 'classroom', level: 'info', streams: [dailyLogStream(config.logDir)] }, devnull);
  return { app: createApp(config, { db: tdb.db, logger }), config, tdb };
}

beforeAll(async () => {
  logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'classroom-logs-'));
  t = await build(logDir);
  teacher = await tokenFor(t, 3);
  learner = await tokenFor(t, 4);
});
afterAll(async () => {
  await t.tdb.dispose();
  fs.rmSync(logDir, { recursive: true, force: true });
});

const getLog = (auth?: string) => {
  const r = request(t.app).get('/export/log').buffer(true).parse(binary);
  return auth ? r.set('Authorization', auth) : r;
};

describe('GET /export/log', () => {
  it('answers log.ini = [] when there is nothing in the window', async () => {
    const res = await getLog(teacher.auth);
    expect(res.status).toBe(200);
    const files = await unzip(res.body as Buffer);
    expect(Object.keys(files)[0]).toBe('log.ini');
    expect(files['log.ini']).toBe('[]');
  });

  it('exports each collection limited to six months by its own filter column', async () => {
    const db = t.tdb.db;
    const now = Date.now();
    const boundary = logWindowStart(new Date(now)).getTime();
    const inside = new Date(boundary + 2 * DAY).toISOString();
    const outside = new Date(boundary - 2 * DAY).toISOString();
    const sid = learner.studentid!;
    const ids: Record<string, { recent: string; old: string }> = {};
    const seed = async (
      table: string,
      pk: string,
      windowColumn: string,
      row: Record<string, unknown>,
      other: Record<string, unknown> = {},
    ) => {
      ids[table] = { recent: uuid(), old: uuid() };
      // The old row is recent on every other timestamp column, so only the collection's own filter can drop it.
      await db(table).insert({ ...row, ...other, [pk]: ids[table].recent, [windowColumn]: inside });
      const oldOther = Object.fromEntries(Object.keys(other).map((k) => [k, new Date(now).toISOString()]));
      await db(table).insert({ ...row, ...oldOther, [pk]: ids[table].old, [windowColumn]: outside });
    };
    await seed(
      'studentprogress',
      'studentprogressid',
      'starttime',
      {
        studentid: sid,
        ispass: true,
        studentprogressreferenceid: uuid(),
        progresstype: 2,
        resultpercentage: 90,
        points: 10,
        fullpoints: 10,
        marks: 9,
        scores: 2,
      },
      { endtime: inside },
    );
    await db('studentprogressquestions').insert([
      {
        studentprogressquestionid: uuid(),
        studentprogressid: ids.studentprogress.recent,
        tries: 0,
        iscorrect: true,
        referencequestionid: uuid(),
      },
      {
        studentprogressquestionid: uuid(),
        studentprogressid: ids.studentprogress.old,
        tries: 0,
        iscorrect: false,
        referencequestionid: uuid(),
      },
    ]);
    await seed(
      'rpiuseraccess',
      'rpiuseraccessid',
      'logintime',
      { userid: learner.schooluserid, ipaddress: '10.0.0.9', timespent: 12.5, status: 2 },
      { logouttime: inside },
    );
    await seed('studentactives', 'studentactiveid', 'created_at', {
      studentid: sid,
      referenceid: uuid(),
      referencetype: 3,
    });
    await seed('studentpoints', 'studentpointid', 'created_at', {
      studentid: sid,
      levelid: DEMO.levelid,
      lessonid: DEMO.lessonid,
      gradepoints: 1,
      levelpoints: 1,
      levelquizscores: 0,
      lessonpoints: 1,
      learningpoints: 1,
      practicepoints: 0,
      quizpoints: 0,
      scores: 1,
    });
    await seed(
      'studentappusages',
      'studentappusageid',
      'created_at',
      { schooluserid: learner.schooluserid, time_spent: 60 },
      { last_updated: inside },
    );
    await seed('studentlearningsprogress', 'studentlearningprogressid', 'lastupdated', {
      studentid: sid,
      lessonlearningid: uuid(),
      progress: 10,
      viewed: 1,
      points: 1,
    });
    await seed('studentgradesprogress', 'studentgradeprogressid', 'lastupdated', {
      studentid: sid,
      curriculumid: DEMO.curriculumid,
      gradeid: DEMO.gradeid,
      progress: 10,
      points: 1,
      completed: false,
    });
    await seed('studentlevelsprogress', 'studentlevelprogressid', 'lastupdated', {
      studentid: sid,
      levelid: DEMO.levelid,
      gradeid: DEMO.gradeid,
      curid: DEMO.curriculumid,
      progress: 10,
      completed: false,
    });
    await seed('studentlessonsprogress', 'studentlessonprogressid', 'lastupdated', {
      studentid: sid,
      lessonid: DEMO.lessonid,
      levelid: DEMO.levelid,
      gradeid: DEMO.gradeid,
      curid: DEMO.curriculumid,
      progress: 10,
      completed: true,
    });

    const res = await getLog(teacher.auth);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="log-\d{4}-\d{2}-\d{2}-\d{6}\.zip"$/);
    const doc = JSON.parse((await unzip(res.body as Buffer))['log.ini']);
    expect(Object.keys(doc.log)).toEqual(['result', 'progress', 'access']);
    const idsOf = (rows: Array<Record<string, unknown>>, pk: string) => rows.map((r) => r[pk]);
    const expectOnlyRecent = (rows: Array<Record<string, unknown>>, table: string, pk: string) => {
      const got = idsOf(rows, pk);
      expect(got, table).toContain(ids[table].recent);
      expect(got, table).not.toContain(ids[table].old);
    };
    expectOnlyRecent(doc.log.result, 'studentprogress', 'studentprogressid');
    expectOnlyRecent(doc.log.access, 'rpiuseraccess', 'rpiuseraccessid');
    expectOnlyRecent(doc.log.progress.studentactives, 'studentactives', 'studentactiveid');
    expectOnlyRecent(doc.log.progress.studentpoints, 'studentpoints', 'studentpointid');
    expectOnlyRecent(doc.log.progress.studentappusages, 'studentappusages', 'studentappusageid');
    expectOnlyRecent(doc.log.progress.studentlearningprogress, 'studentlearningsprogress', 'studentlearningprogressid');
    expectOnlyRecent(doc.log.progress.studentgradesprogress, 'studentgradesprogress', 'studentgradeprogressid');
    expectOnlyRecent(doc.log.progress.studentlevelsprogress, 'studentlevelsprogress', 'studentlevelprogressid');
    expectOnlyRecent(doc.log.progress.studentlessonsprogress, 'studentlessonsprogress', 'studentlessonprogressid');

    const result = doc.log.result.find(
      (r: Record<string, unknown>) => r.studentprogressid === ids.studentprogress.recent,
    );
    expect(result).toMatchObject({ studentid: sid, ispass: true, progresstype: 2, starttime: inside, scores: 2 });
    // Question rows travel with their result and only with it.
    expect(result.studentprogressquestions).toHaveLength(1);
    expect(result.studentprogressquestions[0]).toMatchObject({
      studentprogressid: ids.studentprogress.recent,
      iscorrect: true,
    });
    const access = doc.log.access.find((r: Record<string, unknown>) => r.rpiuseraccessid === ids.rpiuseraccess.recent);
    expect(access).toEqual({
      rpiuseraccessid: ids.rpiuseraccess.recent,
      userid: learner.schooluserid,
      logintime: inside,
      logouttime: inside,
      timespent: '12.5',
      status: 2,
      ipaddress: '10.0.0.9',
    });
  });

  it('carries the RPI-API info and error files of the window and nothing else', async () => {
    const recent = localDay(new Date(Date.now() - 3 * DAY));
    const old = localDay(new Date(logWindowStart(new Date()).getTime() - 2 * DAY));
    fs.writeFileSync(path.join(logDir, `RPI-API-info-${recent}.log`), '{"level":"info","message":"recent day"}\n');
    fs.writeFileSync(path.join(logDir, `RPI-API-error-${recent}.log`), '{"level":"error","message":"boom"}\n');
    fs.writeFileSync(path.join(logDir, `RPI-API-info-${old}.log`), '{"level":"info","message":"before the window"}\n');
    fs.writeFileSync(path.join(logDir, `RPI-API-debug-${recent}.log`), 'debug');
    fs.writeFileSync(path.join(logDir, 'notes.txt'), 'private');
    const res = await getLog(teacher.auth);
    expect(res.status).toBe(200);
    const files = await unzip(res.body as Buffer);
    const names = Object.keys(files);
    expect(names[0]).toBe('log.ini');
    expect(names).toContain(`RPI-API-info-${recent}.log`);
    expect(names).toContain(`RPI-API-error-${recent}.log`);
    expect(names).not.toContain(`RPI-API-info-${old}.log`);
    expect(names).not.toContain(`RPI-API-debug-${recent}.log`);
    expect(names).not.toContain('notes.txt');
    expect(files[`RPI-API-error-${recent}.log`]).toBe('{"level":"error","message":"boom"}\n');
    fs.rmSync(path.join(logDir, `RPI-API-info-${old}.log`));
  });

  it('ships at most LOG_EXPORT_MAX_MB of log files, the newest days first', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'classroom-logs-bound-'));
    const small = await (async () => {
      const tdb = t.tdb;
      const config = loadConfig({
        NODE_ENV: 'test',
        DATABASE_URL: tdb.url,
        LOG_DIR: dir,
        LOG_EXPORT_MAX_MB: '1',
        SERVER_SYNC_KEY: 'sk_export_0123456789',
        JWT_SECRET: 'jwt_export_0123456789',
      });
      return createApp(config, { db: tdb.db, logger: createLogger({ name: 'x', level: 'silent' }) });
    })();
    try {
      const days = [1, 2, 3].map((n) => localDay(new Date(Date.now() - n * DAY)));
      for (const d of days) fs.writeFileSync(path.join(dir, `RPI-API-info-${d}.log`), `${'x'.repeat(450 * 1024)}\n`);
      const res = await request(small).get('/export/log').set('Authorization', teacher.auth).buffer(true).parse(binary);
      expect(res.status).toBe(200);
      const names = Object.keys(await unzip(res.body as Buffer));
      expect(names).toEqual(
        ['log.ini', `RPI-API-info-${days[1]}.log`, `RPI-API-info-${days[0]}.log`].sort((a, b) =>
          a === 'log.ini' ? -1 : b === 'log.ini' ? 1 : a < b ? -1 : 1,
        ),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes an access-log line into today's info file after the export, which the next export carries", async () => {
    const res = await getLog(teacher.auth);
    expect(res.status).toBe(200);
    const today = path.join(logDir, dailyLogName('info', new Date()));
    const lines = fs.readFileSync(today, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const line = lines.find((l) => l.message === `${teacher.schoolusername} export log`);
    expect(line).toMatchObject({
      level: 'info',
      metadata: { application: 'RPI-API', logaccesstype: 12, userid: teacher.schooluserid },
    });
    const next = await unzip((await getLog(teacher.auth)).body as Buffer);
    expect(next[path.basename(today)]).toContain(`${teacher.schoolusername} export log`);
  });

  it('answers 500 "Error read file" when a log file cannot be read', async () => {
    const broken = path.join(logDir, 'RPI-API-info-broken.log');
    fs.symlinkSync(path.join(logDir, 'missing-target'), broken);
    try {
      const res = await request(t.app).get('/export/log').set('Authorization', teacher.auth);
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ error: true, errormessage: 'Error read file', data: false });
    } finally {
      fs.rmSync(broken, { force: true });
    }
  });

  it('answers a failing database with an error envelope, not a broken ZIP', async () => {
    const other = await build(logDir);
    try {
      const staffUser = await tokenFor(other, 3);
      await other.tdb.db.schema.dropTable('studentappusages');
      const res = await request(other.app).get('/export/log').set('Authorization', staffUser.auth);
      expect(res.status).toBe(500);
      expect(res.headers['content-type']).toMatch(/json/);
      expect(res.body).toMatchObject({ error: true, data: false });
    } finally {
      await other.tdb.dispose();
    }
  });

  it('is for staff: learners 403, the sync key 403, no or bad token 401', async () => {
    expect((await getLog(learner.auth)).status).toBe(403);
    expect((await getLog(syncKeyOf(t))).status).toBe(403);
    expect((await getLog()).status).toBe(401);
    expect((await getLog('Bearer nonsense')).status).toBe(401);
    for (const role of [1, 2] as const) expect((await getLog((await tokenFor(t, role)).auth)).status).toBe(200);
  });
});

describe('GET /export/system-log/files and /export/report-data', () => {
  it('zips the RPI-API files of the log directory for staff', async () => {
    const res = await request(t.app)
      .get('/export/system-log/files')
      .set('Authorization', teacher.auth)
      .buffer(true)
      .parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="logfiles-Demo_Primary_School-\d{4}-\d{2}-\d{2}-\d{6}\.zip"$/,
    );
    const names = Object.keys(await unzip(res.body as Buffer));
    expect(names).toContain(`RPI-API-debug-${localDay(new Date(Date.now() - 3 * DAY))}.log`);
    expect(names).not.toContain('notes.txt');
    expect(names).not.toContain('log.ini');
    expect((await request(t.app).get('/export/system-log/files').set('Authorization', learner.auth)).status).toBe(403);
  });

  it('packs learners (without password hashes) and their windowed activity into syncfile.ini', async () => {
    const res = await request(t.app)
      .get('/export/report-data')
      .set('Authorization', teacher.auth)
      .buffer(true)
      .parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="sync-data.zip"');
    const doc = JSON.parse((await unzip(res.body as Buffer))['syncfile.ini']);
    expect(Object.keys(doc)).toEqual(['students', 'studentprogress', 'studentresult', 'studentaccess']);
    const me = doc.students.find((s: Record<string, unknown>) => s.schooluserid === learner.schooluserid);
    expect(me.student).toMatchObject({ studentid: learner.studentid });
    expect(me).not.toHaveProperty('schooluserpasswordhash');
    expect(doc.studentresult.length).toBeGreaterThan(0);
    expect((await request(t.app).get('/export/report-data').set('Authorization', learner.auth)).status).toBe(403);
  });
});

describe('daily log files', () => {
  const lines = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  it('keeps per-request lines out of the info file by default (an hourly summary instead), ' +
    '5xx in the error file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'daily-req-'));
    try {
      let now = new Date(2026, 10, 21, 9, 0);
      const files = new DailyLogFiles({ dir, now: () => now });
      const logger = createLogger(
        { name: 'x', level: 'info', streams: [{ level: 'info', stream: files }] },
        fs.createWriteStream('/dev/null'),
      );
      const request = (statusCode: number) =>
        logger[statusCode >= 500 ? 'error' : statusCode >= 400 ? 'warn' : 'info'](
          { req: { method: 'GET', url: '/lesson/x' }, res: { statusCode }, responseTime: 3 },
          'request completed',
        );
      for (let i = 0; i < 50; i++) request(200);
      request(401);
      request(500);
      logger.info({ logaccesstype: 1 }, 'demo.sophea signed in');
      now = new Date(2026, 10, 21, 10, 1);
      request(200);
      const info = lines(path.join(dir, 'RPI-API-info-2026-11-21.log'));
      expect(info.map((l) => l.message)).toEqual(['demo.sophea signed in', 'requests summary']);
      expect(info[1].metadata).toMatchObject({ requests: 52, status2xx: 51, status4xx: 1 });
      expect(lines(path.join(dir, 'RPI-API-error-2026-11-21.log')).map((l) => l.message)).toEqual([
        'request completed',
      ]);

      const all = new DailyLogFiles({ dir: path.join(dir, 'all'), now: () => now, requests: true });
      const verbose = createLogger(
        { name: 'x', level: 'info', streams: [{ level: 'info', stream: all }] },
        fs.createWriteStream('/dev/null'),
      );
      verbose.info({ req: { method: 'GET', url: '/' }, res: { statusCode: 200 } }, 'request completed');
      expect(lines(path.join(dir, 'all', 'RPI-API-info-2026-11-21.log')).map((l) => l.message)).toEqual([
        'request completed',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('as the server wires it: requests are counted, not logged, and summarised in the info file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'daily-app-'));
    try {
      const daily = dailyLogStream(dir);
      const logger = createLogger(
        { name: 'classroom', level: 'info', streams: [daily] },
        fs.createWriteStream('/dev/null'),
      );
      const app = createApp(t.config, {
        db: t.tdb.db,
        logger,
        countRequest: (status) => daily.stream.countRequest(status),
      });
      for (let i = 0; i < 5; i++) expect((await request(app).get('/')).status).toBe(200);
      expect((await request(app).get('/lesson/all')).status).toBe(401);
      daily.stream.flushSummary();
      const info = lines(path.join(dir, dailyLogName('info', new Date())));
      expect(info.map((l) => l.message)).toEqual(['requests summary']);
      expect(info[0].metadata).toMatchObject({ requests: 6, status2xx: 5, status4xx: 1 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('caps each file by size, saying so once, and keeps files for the export window by default', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'daily-cap-'));
    try {
      const now = new Date(2026, 10, 21, 9, 0);
      fs.writeFileSync(path.join(dir, 'RPI-API-info-2026-06-01.log'), 'inside the window\n');
      fs.writeFileSync(path.join(dir, 'RPI-API-info-2026-05-01.log'), 'before it\n');
      const files = new DailyLogFiles({ dir, now: () => now, maxFileBytes: 4096 });
      expect(fs.existsSync(path.join(dir, 'RPI-API-info-2026-06-01.log'))).toBe(true);
      expect(fs.existsSync(path.join(dir, 'RPI-API-info-2026-05-01.log'))).toBe(false);
      const logger = createLogger(
        { name: 'x', level: 'info', streams: [{ level: 'info', stream: files }] },
        fs.createWriteStream('/dev/null'),
      );
      for (let i = 0; i < 200; i++) logger.info({ i }, `line ${i} ${'y'.repeat(50)}`);
      const file = path.join(dir, 'RPI-API-info-2026-11-21.log');
      expect(fs.statSync(file).size).toBeLessThan(4096 + 400);
      const written = lines(file);
      expect(written.filter((l) => /size limit reached/.test(l.message))).toHaveLength(1);
      expect(written.length).toBeLessThan(40);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes info and warn to the info file, error to the error file, and drops files past retention', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'daily-'));
    try {
      fs.writeFileSync(path.join(dir, 'RPI-API-info-2020-01-01.log'), 'old\n');
      fs.writeFileSync(path.join(dir, 'keep.txt'), 'x');
      let now = new Date(2026, 10, 21, 9, 30);
      const files = new DailyLogFiles({ dir, now: () => now, retentionDays: 7 });
      const logger = createLogger(
        { name: 'x', level: 'debug', streams: [{ level: 'info', stream: files }] },
        fs.createWriteStream('/dev/null'),
      );
      logger.debug('not kept');
      logger.info({ schooluserid: 'u1', logaccesstype: 1 }, 'sign-in');
      logger.warn('careful');
      logger.error('broken');
      const info = fs
        .readFileSync(path.join(dir, 'RPI-API-info-2026-11-21.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(info.map((l) => [l.level, l.message])).toEqual([['info', 'sign-in'], ['warn', 'careful']]);
      expect(info[0].metadata).toMatchObject({ application: 'RPI-API', userid: 'u1', logaccesstype: 1 });
      expect(info[0].metadata.timestamp).toMatch(/Z$/);
      const errors = fs
        .readFileSync(path.join(dir, 'RPI-API-error-2026-11-21.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(errors.map((l) => l.message)).toEqual(['broken']);
      expect(fs.existsSync(path.join(dir, 'RPI-API-info-2020-01-01.log'))).toBe(false);
      expect(fs.existsSync(path.join(dir, 'keep.txt'))).toBe(true);
      now = new Date(2026, 10, 22, 0, 5);
      logger.info('next day');
      expect(fs.readFileSync(path.join(dir, 'RPI-API-info-2026-11-22.log'), 'utf8')).toContain('"message":"next day"');
      expect(fs.readFileSync(path.join(dir, 'RPI-API-info-2026-11-21.log'), 'utf8')).not.toContain('next day');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('GET /export/log/summary', () => {
  it('counts what the export holds, measures its exact size, and names the last completed export', async () => {
    const s = await makeApp();
    try {
      const db = s.tdb.db;
      const staffUser = await tokenFor(s, 3);
      const one = await tokenFor(s, 4);
      const two = await tokenFor(s, 4);
      const now = Date.now();
      const at = (ms: number) => new Date(ms).toISOString();
      const outside = logWindowStart(new Date(now)).getTime() - 2 * DAY;
      const result = (studentid: string, starttime: string) => ({
        studentprogressid: uuid(),
        studentid,
        ispass: true,
        studentprogressreferenceid: uuid(),
        progresstype: 2,
        resultpercentage: 90,
        points: 10,
        fullpoints: 10,
        marks: 9,
        scores: 2,
        starttime,
        endtime: starttime,
      });
      const results = [
        result(one.studentid!, at(now - 3 * DAY)),
        result(one.studentid!, at(now - DAY)),
        result(two.studentid!, at(outside)),
      ];
      await db('studentprogress').insert(results);
      await db('studentprogressquestions').insert(
        [results[0], results[0], results[2]].map((r) => ({
          studentprogressquestionid: uuid(),
          studentprogressid: r.studentprogressid,
          tries: 0,
          iscorrect: true,
          referencequestionid: uuid(),
        })),
      );
      await db('studentpoints').insert({
        studentpointid: uuid(),
        studentid: two.studentid,
        levelid: DEMO.levelid,
        lessonid: DEMO.lessonid,
        gradepoints: 1,
        levelpoints: 1,
        levelquizscores: 0,
        lessonpoints: 1,
        learningpoints: 1,
        practicepoints: 0,
        quizpoints: 0,
        scores: 1,
        created_at: at(now - 2 * DAY),
      });
      await db('rpiuseraccess').insert({
        rpiuseraccessid: uuid(),
        userid: one.schooluserid,
        ipaddress: '10.0.0.9',
        timespent: 1,
        status: 2,
        logintime: at(now - 5 * DAY),
      });

      const summary = async () => request(s.app).get('/export/log/summary').set('Authorization', staffUser.auth);
      const before = await summary();
      expect(before.status).toBe(200);
      expect(before.body.data).toMatchObject({
        learners: 2,
        results: 2,
        answers: 2,
        progress: 1,
        access: 1,
        first: at(now - 5 * DAY),
        last: at(now - DAY),
        logfiles: 0,
        lastexport: null,
      });

      const exported = await request(s.app)
        .get('/export/log')
        .set('Authorization', staffUser.auth)
        .buffer(true)
        .parse(binary);
      expect(exported.status).toBe(200);
      expect((exported.body as Buffer).length).toBe(before.body.data.bytes);
      const after = await summary();
      expect(after.body.data.lastexport).toEqual({
        at: expect.any(String),
        bytes: before.body.data.bytes,
        by: staffUser.schoolusername,
      });
      expect(Date.now() - Date.parse(after.body.data.lastexport.at)).toBeLessThan(60_000);
      expect(Number((await db('logexports').count({ n: '*' }))[0].n)).toBe(1);
    } finally {
      await s.tdb.dispose();
    }
  });

  it('is for staff: learners 403, the sync key 403, no token 401; a summary records no export', async () => {
    const ask = (auth?: string) => {
      const r = request(t.app).get('/export/log/summary');
      return auth ? r.set('Authorization', auth) : r;
    };
    const rows = Number((await t.tdb.db('logexports').count({ n: '*' }))[0].n);
    expect((await ask(learner.auth)).status).toBe(403);
    expect((await ask(syncKeyOf(t))).status).toBe(403);
    expect((await ask()).status).toBe(401);
    expect((await ask(teacher.auth)).status).toBe(200);
    expect(Number((await t.tdb.db('logexports').count({ n: '*' }))[0].n)).toBe(rows);
  });
});
