import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeover } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { migrateFromMysql } from '../src/takeover/command';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { seedOriginalCentral } from './takeover-fixture';

const SERVER = takeover.testMysqlUrl();
// CI provides MariaDB (scripts/ci/ensure-mariadb.sh): there a missing server fails the file instead of skipping it.
const available = Boolean(process.env.CI) || (await takeover.mysqlAnswers(SERVER));

// A newer existing central keeps `questions.questionfeedback` (a JSON column added in August 2026); the copy keeps it.
describe.skipIf(!available)('migrate-from-mysql and question feedback', () => {
  let src: takeover.ScratchMysql;
  let t: TestApp;
  let objectDir: string;
  let ids: Awaited<ReturnType<typeof seedOriginalCentral>>;
  const feedback = { correctmessage: 'Well counted!', incorrectmessage: 'Count the dots again.' };

  beforeAll(async () => {
    src = await takeover.createScratchMysql(SERVER);
    ids = await seedOriginalCentral(src.conn);
    await src.conn.query(
      'ALTER TABLE questions ADD COLUMN questionfeedback longtext NULL CHECK (json_valid(questionfeedback))',
    );
    await src.conn.query(
      'UPDATE questions SET questionfeedback = ? WHERE questionid = ?', [JSON.stringify(feedback), ids.question],
    );
    objectDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-takeover-feedback-'));
    t = await makeApp({ OBJECT_DIR: objectDir, JWT_SECRET: 'takeover-feedback-secret' });
    const quiet = { env: { OBJECT_DIR: objectDir }, out: () => undefined, err: () => undefined };
    await migrateFromMysql(t.tdb.db, ['--source', src.url], quiet);
  }, 120_000);
  afterAll(async () => {
    await t?.tdb.dispose();
    await src?.drop();
    if (objectDir) fs.rmSync(objectDir, { recursive: true, force: true });
  });

  it("copies each question's feedback, and GET /question/:id answers it", async () => {
    const row = await t.tdb.db('questions').where({ questionid: ids.question }).first('questionfeedback');
    expect(row.questionfeedback).toEqual(feedback);
    await createStaff(t.tdb.db, { lmsusername: 'reader@takeover.test', roleids: [ROLE_IDS.superadmin] });
    const token = (await staffLogin(t.app, 'reader@takeover.test')).accessToken;
    const res = await request(t.app).get(`/question/${ids.question}`).set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json');
    expect(res.body.data.questionfeedback).toEqual(feedback);
  });
});
