import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import bcrypt from 'bcryptjs';
import busboy from 'busboy';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { ROLE_IDS, readPackageJson } from '@lms/shared';
import { hashPassword } from '../src/auth/passwords';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';

const md5hex = (s: string) => crypto.createHash('md5').update(s, 'utf8').digest('hex');

/** The existing system's one password check (both of its servers): bcrypt over the MD5 hex, else bare MD5 hex. */
async function originalAccepts(stored: string, plain: string): Promise<boolean> {
  if (!stored) return false;
  if (stored.startsWith('$2')) return bcrypt.compare(md5hex(plain), stored);
  return stored === md5hex(plain);
}

/** A classroom box that keeps the files pushed to it. */
function captureBox() {
  const files: Array<{ url: string; bytes: Buffer }> = [];
  const server = http.createServer((req, res) => {
    const bb = busboy({ headers: req.headers });
    bb.on('file', (_name, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => files.push({ url: req.url ?? '', bytes: Buffer.concat(chunks) }));
    });
    bb.on('close', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"error":false,"data":true}'));
    req.pipe(bb);
  });
  return {
    files,
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const SYNC_KEY = 'sync-key-for-format-test';
const box = captureBox();
let legacy: TestApp;
let modern: TestApp;
let legacyAdmin: string;
let modernAdmin: string;

beforeAll(async () => {
  const cloud = await box.start();
  legacy = await makeApp({ SCHOOLUSER_PASSWORD_FORMAT: 'bcrypt-md5', RPI_CLOUD: cloud, SERVER_SYNC_KEY: SYNC_KEY });
  modern = await makeApp({ RPI_CLOUD: cloud, SERVER_SYNC_KEY: SYNC_KEY });
  for (const t of [legacy, modern]) {
    await seedDemoContent(t.tdb.db);
    await createStaff(t.tdb.db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.superadmin] });
  }
  legacyAdmin = (await staffLogin(legacy.app, 'admin@example.org')).accessToken;
  modernAdmin = (await staffLogin(modern.app, 'admin@example.org')).accessToken;
});
afterAll(async () => {
  await box.stop();
  await legacy.tdb.dispose();
  await modern.tdb.dispose();
});

const hashOf = async (t: TestApp, schoolusername: string) =>
  String(
    (await t.tdb.db('schoolusers').where({ schoolusername }).first('schooluserpasswordhash'))?.schooluserpasswordhash,
  );
const schoolLogin = (t: TestApp, name: string, password: string) =>
  request(t.app).post('/auth/school/login').send({ lmsusername: name, lmsuserpassword: password });

async function addTeacher(t: TestApp, schoolusername: string, hash: string) {
  await t.tdb.db('schoolusers').insert({
    schooluserid: crypto.randomUUID(),
    schoolusername,
    schooluserpasswordhash: hash,
    schooluserrole: 3,
    schooluserstatus: true,
    schoolname: DEMO.schoolname,
  });
}

describe('SCHOOLUSER_PASSWORD_FORMAT=bcrypt-md5', () => {
  it('stores teachers created here in the existing system\'s form, and pushes that hash to the box', async () => {
    const before = box.files.length;
    const res = await request(legacy.app)
      .post('/teacher/create?cloud=true')
      .set('Authorization', `Bearer ${legacyAdmin}`)
      .send({
        schoolname: DEMO.schoolname,
        teachers: [{ schoolusername: 'fmtteacher', schooluserpasswordhash: 'Pass42' }],
      });
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    const stored = await hashOf(legacy, 'fmtteacher');
    expect(stored).toMatch(/^\$2b\$10\$.{53}$/);
    expect(await originalAccepts(stored, 'Pass42')).toBe(true);
    expect(await originalAccepts(stored, 'Pass43')).toBe(false);
    const pushed = box.files.slice(before);
    expect(pushed.map((f) => f.url)).toEqual(['/import/teachers']);
    const { json } = await readPackageJson({ buffer: pushed[0].bytes });
    const row = (json as Array<{ schoolusername: string; schooluserpasswordhash: string }>).find(
      (r) => r.schoolusername === 'fmtteacher',
    );
    expect(row?.schooluserpasswordhash).toBe(stored);
    expect(await originalAccepts(row!.schooluserpasswordhash, 'Pass42')).toBe(true);
    expect((await schoolLogin(legacy, 'fmtteacher', 'Pass42')).status).toBe(200);
  });

  it('creates learners in that form too, and a reset password keeps it', async () => {
    const student = {
      studentfirstname: 'Ana',
      studentlastname: 'Format',
      dateofbirth: '02-03-2016',
      dateofjoin: '05-01-2026',
      genderid: '1',
      city: 'Accra',
      country: 'Ghana',
      state: 'Greater Accra',
      schoolusername: 'fmtlearner',
      schooluserpasswordhash: 'abc123',
    };
    const before = box.files.length;
    const created = await request(legacy.app)
      .post('/student/create?cloud=true')
      .set('Authorization', `Bearer ${legacyAdmin}`)
      .send({
        curriculumid: [DEMO.curriculumid],
        schoolid: DEMO.schoolid,
        standard: DEMO.standardid,
        students: [student],
      });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const first = await hashOf(legacy, 'fmtlearner');
    expect(first).toMatch(/^\$2b\$10\$/);
    expect(await originalAccepts(first, 'abc123')).toBe(true);
    // The roster the box receives carries that hash verbatim: a box running the existing system signs the learner in.
    const pushed = box.files.slice(before);
    expect(pushed.map((f) => f.url)).toEqual(['/import/students']);
    const { json } = await readPackageJson({ buffer: pushed[0].bytes });
    const users = (json as { studentusers: Array<{ schoolusername: string; schooluserpasswordhash: string }> })
      .studentusers;
    expect(users.map((u) => [u.schoolusername, u.schooluserpasswordhash])).toEqual([['fmtlearner', first]]);
    expect(await originalAccepts(users[0].schooluserpasswordhash, 'abc123')).toBe(true);
    const ids = await legacy.tdb
      .db('students as s')
      .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .where('u.schoolusername', 'fmtlearner')
      .first('s.studentid', 'u.schooluserid');
    const reset = await request(legacy.app)
      .put('/student/update')
      .set('Authorization', `Bearer ${legacyAdmin}`)
      .send({
        students: [
          {
            ...ids,
            schoolusername: 'fmtlearner',
            schoolname: DEMO.schoolname,
            curriculums: DEMO.curriculumname,
            standard: DEMO.standardname,
            studentfirstname: 'Ana',
            studentlastname: 'Format',
            genderid: '1',
            dateofjoin: '05-01-2026',
            city: 'Accra',
            country: 'Ghana',
            state: 'Greater Accra',
            isactive: 1,
            schooluserpasswordhash: 'xyz789',
          },
        ],
      });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    const second = await hashOf(legacy, 'fmtlearner');
    expect(second).toMatch(/^\$2b\$10\$/);
    expect(await originalAccepts(second, 'xyz789')).toBe(true);
    expect(await originalAccepts(second, 'abc123')).toBe(false);
  });

  it('at sign-in wraps a bare MD5 row into bcrypt and turns an argon2id row back into ' +
      'bcrypt, never into argon2id', async () => {
    await addTeacher(legacy, 'md5teacher', md5hex('Old1'));
    await addTeacher(legacy, 'argonteacher', await hashPassword('New1'));
    expect((await schoolLogin(legacy, 'md5teacher', 'Old1')).status).toBe(200);
    expect((await schoolLogin(legacy, 'argonteacher', 'New1')).status).toBe(200);
    for (const [name, pw] of [['md5teacher', 'Old1'], ['argonteacher', 'New1']]) {
      const h = await hashOf(legacy, name);
      expect(h).toMatch(/^\$2b\$10\$/);
      expect(await originalAccepts(h, pw)).toBe(true);
      expect((await schoolLogin(legacy, name, pw)).status).toBe(200);
    }
  });

  it('leaves a bcrypt row as it is at sign-in, and a wrong password changes nothing', async () => {
    const original = await bcrypt.hash(md5hex('Keep1'), 10);
    await addTeacher(legacy, 'bcryptteacher', original);
    expect((await schoolLogin(legacy, 'bcryptteacher', 'Keep1')).status).toBe(200);
    expect(await hashOf(legacy, 'bcryptteacher')).toBe(original);
    await addTeacher(legacy, 'wrongteacher', md5hex('Right1'));
    expect((await schoolLogin(legacy, 'wrongteacher', 'Wrong1')).status).toBe(400);
    expect(await hashOf(legacy, 'wrongteacher')).toBe(md5hex('Right1'));
  });

  it('keeps staff on argon2id: their hashes never leave central', async () => {
    const id = crypto.randomUUID();
    await legacy.tdb.db('lmsusers').insert({
      lmsuserid: id,
      lmsusername: 'oldstaff@example.org',
      lmsuserpasswordhash: await bcrypt.hash(md5hex('Staff1234'), 10),
      firstname: 'O',
      lastname: 'S',
      lmsuserrole: ROLE_IDS.superadmin,
      isverified: true,
      isdisabled: false,
    });
    await staffLogin(legacy.app, 'oldstaff@example.org', 'Staff1234');
    expect((await legacy.tdb.db('lmsusers').where({ lmsuserid: id }).first()).lmsuserpasswordhash).toMatch(
      /^\$argon2id\$/,
    );
  });
});

describe('SCHOOLUSER_PASSWORD_FORMAT=argon2id (the default)', () => {
  it('stores new teachers as argon2id and replaces a legacy row at sign-in', async () => {
    const res = await request(modern.app)
      .post('/teacher/create')
      .set('Authorization', `Bearer ${modernAdmin}`)
      .send({
        schoolname: DEMO.schoolname,
        teachers: [{ schoolusername: 'newteacher', schooluserpasswordhash: 'Pass42' }],
      });
    expect(res.status).toBe(200);
    expect(await hashOf(modern, 'newteacher')).toMatch(/^\$argon2id\$/);
    await addTeacher(modern, 'legacyteacher', await bcrypt.hash(md5hex('Old1'), 10));
    expect((await schoolLogin(modern, 'legacyteacher', 'Old1')).status).toBe(200);
    expect(await hashOf(modern, 'legacyteacher')).toMatch(/^\$argon2id\$/);
    expect((await schoolLogin(modern, 'legacyteacher', 'Old1')).status).toBe(200);
  });

  it('refuses a value it does not know at start-up', async () => {
    await expect(makeApp({ SCHOOLUSER_PASSWORD_FORMAT: 'md5' })).rejects.toThrow(/SCHOOLUSER_PASSWORD_FORMAT/);
  });
});
