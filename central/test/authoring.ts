import crypto from 'node:crypto';
import request from 'supertest';
import { expect } from 'vitest';
import type { Knex } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';

/** The callers the authoring tests use; `refresh` is a refresh token sent where an access token belongs. */
export interface Callers {
  t: TestApp;
  admin: string;
  adminId: string;
  teacher: string;
  user: string;
  refresh: string;
}

export async function authoringApp(): Promise<Callers> {
  const t = await makeApp({ RATE_LIMIT_MAX: '1000000' });
  const db = t.tdb.db;
  const adminId = await createStaff(db, { lmsusername: 'admin@authoring.test', roleids: [ROLE_IDS.admin] });
  await createStaff(db, { lmsusername: 'teacher@authoring.test', roleids: [ROLE_IDS.teacher] });
  await createStaff(db, { lmsusername: 'user@authoring.test', roleids: [ROLE_IDS.user] });
  const pair = await staffLogin(t.app, 'admin@authoring.test');
  return {
    t,
    adminId,
    admin: `Bearer ${pair.accessToken}`,
    refresh: `Bearer ${pair.refreshToken}`,
    teacher: `Bearer ${(await staffLogin(t.app, 'teacher@authoring.test')).accessToken}`,
    user: `Bearer ${(await staffLogin(t.app, 'user@authoring.test')).accessToken}`,
  };
}

/** A staff account of `role` narrowed to `countries`, signed in. */
export async function scopedStaff(
  t: TestApp,
  name: string,
  countries: string[],
  role: string = ROLE_IDS.admin,
): Promise<string> {
  await createStaff(t.tdb.db, { lmsusername: `${name}@authoring.test`, roleids: [role], countries });
  return `Bearer ${(await staffLogin(t.app, `${name}@authoring.test`)).accessToken}`;
}

/** Every row of the tables, in a stable order: compared before and after refused requests. */
export async function snapshot(db: Knex, tables: string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of tables) {
    const rows = (await db(table).select()) as Array<Record<string, unknown>>;
    out[table] = rows.map((r) => JSON.stringify(r, Object.keys(r).sort())).sort();
  }
  return out;
}

export type Case = [name: string, req: request.Test, status: number, message: string | RegExp];

/** Runs refused requests one by one: each answers its status and message, and none changes `tables`. */
export async function expectRefused(db: Knex, tables: string[], cases: Case[]): Promise<void> {
  const before = await snapshot(db, tables);
  for (const [name, req, status, message] of cases) {
    const res = await req;
    expect([name, res.status, res.body.error, res.body.errormessage]).toEqual([
      name,
      status,
      true,
      typeof message === 'string' ? message : expect.stringMatching(message),
    ]);
  }
  expect(await snapshot(db, tables)).toEqual(before);
}

/** A JSON body just over the 1 MB default limit. */
export const oversize = () => ({ padding: 'x'.repeat(1024 * 1024 + 10) });

export const uuid = () => crypto.randomUUID();

/** Khmer: "mathematics", "grade one", "the first lesson" (combining vowel signs and coeng included). */
export const KHMER = {
  subject: 'គណិតវិទ្យា',
  curriculum: 'កម្មវិធីសិក្សាគណិតវិទ្យា',
  grade: 'ថ្នាក់ទី១',
  tag: 'គណិត',
  identifier: 'មេរៀនទី១ សំណួរ',
};

export const onPostgres = () => !!process.env.TEST_DATABASE_URL;

/**
 * The race an "already exists" check cannot see (PostgreSQL, where writers run side by side): another
 * transaction has written the clashing row and not committed yet when `send` checks. The request's
 * insert then waits on the unique index and fails once the other commits; the answer must be the rule's
 * 400. Returns that answer.
 */
export async function raceWithUncommitted(
  db: Knex,
  table: string,
  row: Record<string, unknown>,
  send: () => request.Test,
): Promise<request.Response> {
  const trx = await db.transaction();
  await trx(table).insert(row);
  const answer = send().then((r) => r);
  await new Promise((r) => setTimeout(r, 300));
  await trx.commit();
  return answer;
}
