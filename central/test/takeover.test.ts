import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeover } from '@lms/db';
import { createObjectStore, createS3Store, type ObjectStore } from '../src/objects';
import { migrateFromMysql } from '../src/takeover/command';
import { makeApp, type TestApp } from './helpers';
import { S3_KEY, startS3Sandbox, type S3Sandbox } from './s3';
import { PASSWORDS, md5hex, seedOriginalCentral } from './takeover-fixture';

const SERVER = takeover.testMysqlUrl();
// CI provides MariaDB (scripts/ci/ensure-mariadb.sh): there a missing server fails the file instead of skipping it.
const available = Boolean(process.env.CI) || (await takeover.mysqlAnswers(SERVER));

const OBJECTS: Record<string, Buffer> = {
  'counting.mp4': Buffer.alloc(300_000, 7),
  'song.mp3': Buffer.from('ID3 a song'),
  'feedback/u1_1_1795620886920.jpg': Buffer.from('jpeg bytes'),
  'logupload-1795620886920.zip': Buffer.from('PK zip bytes'),
  // A key this service refuses to serve (a dot-leading segment): reported, not copied.
  'scratch/.hidden': Buffer.from('x'),
};

let src: takeover.ScratchMysql;
let s3: S3Sandbox;
let ids: Awaited<ReturnType<typeof seedOriginalCentral>>;
let t: TestApp;
let objectDir: string;
let first: Awaited<ReturnType<typeof migrateFromMysql>>;
const lines: string[] = [];
const progress: string[] = [];

const sourceBucket = () => `s3://${S3_KEY}:${S3_KEY}@${new URL(s3.origin).host}/lms-src`;

describe.skipIf(!available)('npm run migrate-from-mysql -w central', () => {
  beforeAll(async () => {
    src = await takeover.createScratchMysql(SERVER);
    ids = await seedOriginalCentral(src.conn);
    s3 = await startS3Sandbox('lms-takeover-');
    // Written with the plain S3 client: the original's bucket may hold keys our own store refuses to write.
    const client = new Client({
      endPoint: '127.0.0.1',
      port: Number(new URL(s3.origin).port),
      useSSL: false,
      accessKey: S3_KEY,
      secretKey: S3_KEY,
    });
    await client.makeBucket('lms-src');
    for (const [key, bytes] of Object.entries(OBJECTS)) await client.putObject('lms-src', key, bytes);
    objectDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-takeover-objects-'));
    t = await makeApp({ OBJECT_DIR: objectDir, JWT_SECRET: 'takeover-test-secret' });
    first = await migrateFromMysql(t.tdb.db, ['--source', src.url, '--objects-from', sourceBucket()], {
      env: { OBJECT_DIR: objectDir }, out: (l) => lines.push(l), err: (l) => progress.push(l),
    });
  }, 120_000);
  afterAll(async () => {
    await t?.tdb.dispose();
    await src?.drop();
    await s3?.close();
    if (objectDir) fs.rmSync(objectDir, { recursive: true, force: true });
  });

  const table = (name: string) => first.tables.tables.find((x) => x.table === name)!;

  it('reports each table: read, copied, transformed, refused with reason and id', () => {
    expect(table('lmsusers')).toMatchObject({ read: 2, copied: 2, refused: 0 });
    expect(table('syncs')).toMatchObject({ source: 'syncrecords', read: 1, copied: 1 });
    expect(table('studentprogressquestions')).toMatchObject({ source: null, read: 0, copied: 0 });
    expect(table('studentprogressquestions').notes).toEqual([
      'no table studentprogressquestions in the source: taken as empty',
    ]);
    expect(table('documents')).toMatchObject({
      read: 2,
      copied: 2,
      transformed: 1,
      changes: { 'double-encoded JSON unwrapped': 1 },
    });
    expect(table('rpiuseraccess')).toMatchObject({
      copied: 1,
      transformed: 1,
      changes: { 'decimal text read as a number': 1 },
    });
    expect(table('students')).toMatchObject({
      read: 2,
      copied: 2,
      changes: { 'double-encoded JSON unwrapped': 1, 'zero date stored as NULL': 1 },
    });
    // Duplicate results are no conflict here (central has no unique rule on them): both are copied.
    expect(table('studentprogress')).toMatchObject({ read: 3, copied: 2, refused: 1 });
    expect(first.tables.refusedRows).toEqual(
      expect.arrayContaining([
        {
          table: 'lessonlearnings',
          id: ids.orphanLearning,
          reason: expect.stringMatching(/^orphan: lessonid [0-9a-f-]{36} names no lessons row$/),
        },
        {
          table: 'studentprogress',
          id: ids.orphanResult,
          reason: expect.stringMatching(/^orphan: studentid .* names no students row$/),
        },
        {
          table: 'lmsusers_roles',
          id: `${ids.admin} zr5ER4QD`,
          reason: 'the same row twice',
          resolved: expect.stringContaining('collapsed'),
        },
      ]),
    );
    const twin = first.tables.refusedRows.find((r) => r.table === 'subjects');
    expect(twin).toEqual({
      table: 'subjects',
      id: expect.any(String),
      reason: expect.stringMatching(/^duplicate under a unique rule of this service \(.+\)$/),
    });
    expect([ids.subject, ids.twinSubject]).toContain(twin!.id);
    expect(table('subjects')).toMatchObject({ read: 2, copied: 1, refused: 1 });
    expect(first.tables.refusedRows).toHaveLength(4);
    expect(first.code).toBe(1);
    const text = lines.join('\n');
    expect(text).toMatch(/^lessonlearnings\s+2\s+1\s+0\s+0\s+1\s+0\s+0$/m);
    expect(text).toContain(`lessonlearnings ${ids.orphanLearning}: orphan: lessonid`);
    expect(text).toContain('lmsusers: the superadmin@superadmin.com account seeded here gave way to the source\'s');
    expect(text).toContain('permissions the source lacks, kept as seeded here with their grants: view_map');
    // A warning comes first: the tests' source URL carries its password.
    expect(progress.find((l) => l.startsWith('progress'))).toMatch(
      /^progress: 0 of \d+ rows \(0%\), 0\.0 MB read, \d+:\d\d elapsed, about 0:00 left$/,
    );
  });

  it('keeps the original\'s ids, its permissions and roles, and transforms only what must be', async () => {
    const db = t.tdb.db;
    const supers = await db('lmsusers')
      .where({ lmsusername: 'superadmin@superadmin.com' })
      .select('lmsuserid', 'lmsuserpasswordhash');
    expect(supers).toEqual([{ lmsuserid: ids.superadmin, lmsuserpasswordhash: md5hex(PASSWORDS.superadmin) }]);
    const perms = await db('permissions').count({ n: '*' }).first();
    expect(Number(perms?.n)).toBe(190);
    const srcIds = new Set(
      (await src.conn.query('SELECT permissionid FROM permissions'))[0] as unknown as Array<{ permissionid: string }>,
    ).size;
    expect(srcIds).toBe(189);
    const [[auditorGrant]] = (await src.conn.query(
      'SELECT rp.permissionid FROM roles_permissions rp WHERE rp.roleid = ?',
      [ids.auditor],
    )) as unknown as [[{ permissionid: string }]];
    expect(
      (await db('roles_permissions').where({ roleid: ids.auditor }).select('permissionid')).map((r) => r.permissionid),
    ).toEqual([auditorGrant.permissionid]);
    expect(await db('roles').where({ roleid: ids.auditor }).first('rolename')).toEqual({ rolename: 'Auditor' });
    const doc = await db('documents').where({ documentid: ids.document }).first();
    expect([doc.documents3meta, doc.documenttags]).toEqual([{ ETag: '"x"', Key: 'counting.mp4' }, []]);
    const q = await db('questions').where({ questionid: ids.question }).first();
    expect([q.questionheading, q.questionoptions, q.questiontags, q.questionstatus]).toEqual([
      { heading: 'Count' },
      [{ option: '3' }],
      ['count'],
      true,
    ]);
    const learner = await db('students').where({ studentid: ids.learner }).first();
    expect([learner.curriculumids, learner.dateofbirth, learner.isactive]).toEqual([[ids.curriculum], null, true]);
    expect((await db('students').where({ studentid: ids.goneLearner }).first()).isdeleted).toBe(true);
    expect(Number((await db('rpiuseraccess').first()).timespent)).toBe(42);
    expect((await db('rpiuseraccess').first()).logintime).toBe('2026-05-01T09:00:00.000Z');
    expect((await db('studentprogress').where({ studentprogressid: ids.result1 }).first()).starttime).toBe(
      '2026-05-01T09:30:00.000Z',
    );
    expect(await db('syncs').where({ syncid: ids.sync }).first('filename', 'rowcount')).toEqual({
      filename: 'logupload-1795620886920.zip',
      rowcount: null,
    });
    expect((await db('schoolusers').where({ schooluserid: ids.goneUser }).first()).isdeleted).toBe(true);
    // The serial column continues after the largest copied id.
    await db('databuild').insert({ buildname: 'next', builddate: new Date().toISOString(), builduser: ids.admin });
    expect((await db('databuild').max({ m: 'databuildid' }).first())?.m).toBe(8);
  });

  it('lets everyone sign in with the password they had: staff in both formats, a teacher', async () => {
    const login = (lmsusername: string, lmsuserpassword: string) =>
      request(t.app).post('/auth/login').send({ lmsusername, lmsuserpassword });
    expect((await login('superadmin@superadmin.com', PASSWORDS.superadmin)).status).toBe(200);
    expect((await login('admin@org.example', PASSWORDS.admin)).status).toBe(200);
    expect((await login('admin@org.example', 'Wrong1234')).status).toBe(400);
    const teacher = await request(t.app)
      .post('/auth/school/login')
      .send({ lmsusername: 'teachold', lmsuserpassword: PASSWORDS.teacher });
    expect(teacher.status).toBe(200);
    const gone = await request(t.app)
      .post('/auth/school/login')
      .send({ lmsusername: 'goneteacher', lmsuserpassword: 'Gone1' });
    expect(gone.status).toBe(400);
  });

  it("answers the list routes with the counts the source's rows give", async () => {
    const token = (
      await request(t.app)
        .post('/auth/login')
        .send({ lmsusername: 'superadmin@superadmin.com', lmsuserpassword: PASSWORDS.superadmin })
    ).body.data.accessToken;
    const get = (url: string) => request(t.app).get(url).set('Authorization', `Bearer ${token}`);
    const post = (url: string, body: object) =>
      request(t.app).post(url).set('Authorization', `Bearer ${token}`).send(body);
    const live = async (sql: string) =>
      Number(((await src.conn.query(sql))[0] as unknown as Array<{ n: number }>)[0].n);
    expect((await get('/country/all')).body.data).toHaveLength(
      await live('SELECT COUNT(*) n FROM countries WHERE isdeleted = 0'),
    );
    expect((await get('/school/all')).body.data).toHaveLength(
      await live('SELECT COUNT(*) n FROM schools WHERE isdeleted = 0'),
    );
    expect((await get('/curriculum/all')).body.data).toHaveLength(
      await live('SELECT COUNT(*) n FROM curriculums WHERE isdeleted = 0'),
    );
    expect((await post('/user', { pageindex: 1, pagesize: 50 })).body.data.total).toBe(
      await live('SELECT COUNT(*) n FROM lmsusers'),
    );
    expect((await post('/question', { pageindex: 1, pagesize: 50 })).body.data.total).toBe(
      await live('SELECT COUNT(*) n FROM questions WHERE isdeleted = 0'),
    );
    expect((await post('/document', { pageindex: 1, pagesize: 50 })).body.data.total).toBe(
      await live('SELECT COUNT(*) n FROM documents WHERE isdeleted = 0'),
    );
  });

  it('copies every object with its key unchanged, verified by size and checksum', async () => {
    expect(first.objects).toMatchObject({
      listed: 5,
      copied: 4,
      verified: 4,
      unchanged: 0,
      bytes: 300_000 + 10 + 10 + 12,
    });
    expect(first.objects!.refused).toEqual([
      { key: 'scratch/.hidden', reason: expect.stringContaining('this service cannot serve that key') },
    ]);
    const store = createObjectStore({ kind: 'folder', dir: objectDir });
    for (const [key, bytes] of Object.entries(OBJECTS)) {
      if (key.includes('/.')) continue;
      const chunks: Buffer[] = [];
      for await (const c of await store.get(key)) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    }
    expect(lines.join('\n')).toContain('objects from s3://127.0.0.1');
  });

  it('refuses to copy into a database that already holds a copy, unless --again', async () => {
    await expect(
      migrateFromMysql(t.tdb.db, ['--source', src.url], { out: () => undefined, err: () => undefined }),
    ).rejects.toThrow(/already holds a copy .*use --again/);
  });

  const twin = () => first.tables.refusedRows.find((r) => r.table === 'subjects')!.id;

  it('refuses a target that holds data of its own, ' +
      'and --again on a target without a copy, writing nothing', async () => {
    const used = await makeApp();
    try {
      await used.tdb.db('countries').insert({ countryid: crypto.randomUUID(), countryname: 'Here already' });
      const quiet = { out: () => undefined, err: () => undefined };
      await expect(migrateFromMysql(used.tdb.db, ['--source', src.url], quiet)).rejects.toThrow(
        'this database already holds data (countries: 1 rows)',
      );
      await expect(migrateFromMysql(used.tdb.db, ['--source', src.url, '--again'], quiet)).rejects.toThrow(
        /records no previous copy; run without --again first/,
      );
      await used.tdb.db('countries').del();
      await used.tdb
        .db('lmsusers')
        .insert({
          lmsuserid: crypto.randomUUID(),
          lmsusername: 'someone@org.example',
          lmsuserpasswordhash: 'x',
          firstname: 'S',
          lmsuserrole: 'Mapyr2Pw',
        });
      await expect(migrateFromMysql(used.tdb.db, ['--source', src.url], quiet)).rejects.toThrow(
        'this database already holds data (lmsusers: 1 accounts besides the seeded superadmin)',
      );
      expect(Number((await used.tdb.db('permissions').count({ n: '*' }).first())?.n)).toBe(190);
      expect(await used.tdb.db('lmsusers').where({ lmsuserid: ids.superadmin }).first()).toBeUndefined();
    } finally {
      await used.tdb.dispose();
    }
  });

  it('--again copies exactly what changed in the source since', async () => {
    const newCountry = crypto.randomUUID();
    await src.conn.query('INSERT INTO countries (countryid, countryname, isdeleted) VALUES (?, ?, 0)', [
      newCountry,
      'Togo',
    ]);
    await src.conn.query('UPDATE schools SET schoolname = ? WHERE schoolid = ?', ['Accra Primary One', ids.school]);
    await src.conn.query('UPDATE schoolusers SET isdeleted = 1 WHERE schooluserid = ?', [ids.teacher]);
    await src.conn.query('DELETE FROM lessonlearnings WHERE lessonlearningid = ?', [ids.learning]);
    // A result that failed after all: the learner's best attempt at the quiz is now the other one.
    const kept = () =>
      t.tdb.db('studentquizresults').where({ studentid: ids.learner }).select('bestprogressid', 'lastprogressid');
    const [first, second] = [ids.result1, ids.result2].sort();
    expect(await kept()).toEqual([{ bestprogressid: first, lastprogressid: second }]);
    await src.conn.query('UPDATE studentprogress SET ispass = 0 WHERE studentprogressid = ?', [first]);
    // The learner's app time: one row longer in the source now, the other gone.
    const total = () =>
      t.tdb.db('studentappusagetotals').where({ schooluserid: ids.learnerUser }).select('time_spent', 'usages');
    expect((await total()).map((r) => [Number(r.time_spent), Number(r.usages)])).toEqual([[720, 2]]);
    await src.conn.query('UPDATE studentappusages SET time_spent = 900 WHERE studentappusageid = ?', [ids.usage]);
    await src.conn.query('DELETE FROM studentappusages WHERE studentappusageid = ?', [ids.usage2]);
    await createS3Store(s3.s3('lms-src')).put('new-picture.png', Buffer.from('png'));
    const again = await migrateFromMysql(t.tdb.db, ['--source', src.url, '--objects-from', sourceBucket(), '--again'], {
      env: { OBJECT_DIR: objectDir },
      out: () => undefined,
      err: () => undefined,
    });
    const copied = Object.fromEntries(
      again.tables.tables.filter((x) => x.copied || x.deleted).map((x) => [x.table, [x.copied, x.deleted]]),
    );
    expect(copied).toEqual({
      countries: [1, 0],
      schools: [1, 0],
      schoolusers: [1, 0],
      lessonlearnings: [0, 1],
      studentprogress: [1, 0],
      studentappusages: [1, 1],
    });
    expect(await kept()).toEqual([{ bestprogressid: second, lastprogressid: second }]);
    expect((await total()).map((r) => [Number(r.time_spent), Number(r.usages)])).toEqual([[900, 1]]);
    // The orphans are still orphans, and are named again.
    expect(again.tables.refusedRows.map((r) => r.id).sort()).toEqual(
      [ids.orphanLearning, ids.orphanResult, twin()].sort(),
    );
    expect(again.objects).toMatchObject({ listed: 6, copied: 1, unchanged: 4, bytes: 3 });
    const db = t.tdb.db;
    expect((await db('countries').where({ countryid: newCountry }).first())?.countryname).toBe('Togo');
    expect((await db('schools').where({ schoolid: ids.school }).first()).schoolname).toBe('Accra Primary One');
    expect(await db('lessonlearnings').where({ lessonlearningid: ids.learning }).first()).toBeUndefined();
    expect(
      (
        await request(t.app)
          .post('/auth/school/login')
          .send({ lmsusername: 'teachold', lmsuserpassword: PASSWORDS.teacher })
      ).status,
    ).toBe(400);
    const quiet = await migrateFromMysql(t.tdb.db, ['--source', src.url, '--again'], {
      out: () => undefined,
      err: () => undefined,
    });
    expect(quiet.tables.tables.reduce((n, x) => n + x.copied + x.deleted, 0)).toBe(0);
  });

  it('--dry-run reads and checks everything and writes nothing, objects included', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-takeover-dry-'));
    const fresh = await makeApp({ OBJECT_DIR: dir });
    try {
      const out: string[] = [];
      const dry = await migrateFromMysql(
        fresh.tdb.db,
        ['--source', src.url, '--objects-from', sourceBucket(), '--dry-run'],
        { env: { OBJECT_DIR: dir }, out: (l) => out.push(l), err: () => undefined },
      );
      expect(out[0]).toMatch(/^central: dry run \(nothing written\) from mysql:\/\/\w+@127\.0\.0\.1:3306\/lms_src_/);
      expect(dry.tables.tables.find((x) => x.table === 'lmsusers')).toMatchObject({ read: 2, copied: 2 });
      expect(dry.objects).toMatchObject({ listed: 6, copied: 5, verified: 5 });
      const db = fresh.tdb.db;
      expect((await db('lmsusers').select('lmsusername')).map((r) => r.lmsusername)).toEqual([
        'superadmin@superadmin.com',
      ]);
      for (const name of ['countries', 'students', 'studentprogress'])
        expect(Number((await db(name).count({ n: '*' }).first())?.n)).toBe(0);
      expect(await db.schema.hasTable('takeover_runs')).toBe(false);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      await fresh.tdb.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bucket that does not exist is an error naming it, before any row is copied, and is not created', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-takeover-nobucket-'));
    const fresh = await makeApp({ OBJECT_DIR: dir });
    const client = new Client({
      endPoint: '127.0.0.1',
      port: Number(new URL(s3.origin).port),
      useSSL: false,
      accessKey: S3_KEY,
      secretKey: S3_KEY,
    });
    try {
      const wrong = `s3://${S3_KEY}:${S3_KEY}@${new URL(s3.origin).host}/lms-srcc`;
      for (const extra of [['--dry-run'], []]) {
        const run = migrateFromMysql(fresh.tdb.db, ['--source', src.url, '--objects-from', wrong, ...extra], {
          env: { OBJECT_DIR: dir },
          out: () => undefined,
          err: () => undefined,
        });
        await expect(run).rejects.toThrow(
          `--objects-from s3://${new URL(s3.origin).host}/lms-srcc: no bucket lms-srcc at ${s3.origin}`,
        );
      }
      expect(await client.bucketExists('lms-srcc')).toBe(false);
      expect(await fresh.tdb.db.schema.hasTable('takeover_runs')).toBe(false);
      expect(Number((await fresh.tdb.db('countries').count({ n: '*' }).first())?.n)).toBe(0);
    } finally {
      await fresh.tdb.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a classroom box\'s database, naming the tables it lacks, and writes nothing', async () => {
    const box = await takeover.createScratchMysql(SERVER, 'lms_box');
    const fresh = await makeApp();
    try {
      await takeover.createOriginalSchema(box.conn, { service: 'classroom' });
      const lines: string[] = [];
      const run = migrateFromMysql(fresh.tdb.db, ['--source', box.url], {
        out: (l) => lines.push(l),
        err: (l) => lines.push(l),
      });
      await expect(run).rejects.toThrow(
        new RegExp(
          /is not a central database of the existing system: /.source +
            /it lacks roles, permissions, roles_permissions, syncrecords \(a classroom database/.source,
        ),
      );
      expect(lines.join('\n')).not.toContain('taken as empty');
      expect(await fresh.tdb.db.schema.hasTable('takeover_runs')).toBe(false);
    } finally {
      await fresh.tdb.dispose();
      await box.drop();
    }
  });

  it('takes the database password and the S3 secret from the environment, ' +
      'keeping them off the command line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-takeover-env-'));
    const fresh = await makeApp({ OBJECT_DIR: dir });
    try {
      const bare = new URL(src.url);
      const password = decodeURIComponent(bare.password);
      bare.password = '';
      const bucket = `s3://${S3_KEY}@${new URL(s3.origin).host}/lms-src`;
      const args = ['--source', bare.toString(), '--objects-from', bucket, '--dry-run'];
      const err: string[] = [];
      const env = { OBJECT_DIR: dir, TAKEOVER_SOURCE_PASSWORD: password, TAKEOVER_OBJECTS_SECRET: S3_KEY };
      const run = await migrateFromMysql(fresh.tdb.db, args, { env, out: () => undefined, err: (l) => err.push(l) });
      expect(run.tables.tables.find((x) => x.table === 'lmsusers')).toMatchObject({ read: 2, copied: 2 });
      expect(run.objects).toMatchObject({ copied: 5, refused: [expect.anything()] });
      expect(err.filter((l) => l.startsWith('warning'))).toEqual([]);
      const inline = await migrateFromMysql(fresh.tdb.db, ['--source', src.url, '--dry-run'], {
        env: {},
        out: () => undefined,
        err: (l) => err.push(l),
      });
      expect(inline.tables.tables.find((x) => x.table === 'lmsusers')).toMatchObject({ copied: 2 });
      // A password in --source is warned about; the local server's passwordless root (no TEST_MYSQL_URL) has none.
      expect(err.filter((l) => l.startsWith('warning'))).toEqual(
        new URL(src.url).password
          ? [expect.stringContaining('TAKEOVER_SOURCE_PASSWORD or --source-password-file')]
          : [],
      );
    } finally {
      await fresh.tdb.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('copies the objects into an S3 store as well', async () => {
    const fresh = await makeApp();
    try {
      const target = s3.s3('lms-dst');
      const env = { S3_ENDPOINT: target.endpoint, S3_ACCESS_KEY: S3_KEY, S3_SECRET_KEY: S3_KEY, S3_BUCKET: 'lms-dst' };
      const run = await migrateFromMysql(fresh.tdb.db, ['--source', src.url, '--objects-from', sourceBucket()], {
        env,
        out: () => undefined,
        err: () => undefined,
      });
      expect(run.objects).toMatchObject({ listed: 6, copied: 5, verified: 5 });
      const store: ObjectStore = createS3Store(target);
      expect((await store.list('')).map((o) => [o.key, o.size])).toEqual([
        ['counting.mp4', 300_000],
        ['feedback/u1_1_1795620886920.jpg', 10],
        ['logupload-1795620886920.zip', 12],
        ['new-picture.png', 3],
        ['song.mp3', 10],
      ]);
    } finally {
      await fresh.tdb.dispose();
    }
  });
});
