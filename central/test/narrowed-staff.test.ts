import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { narrowedCallers, seedSides, type Narrowed, type Sides } from './scope-fixtures';

// What a staff account narrowed to some schools or countries may no longer do: run the whole-system
// maintenance routes, keep its sessions once its narrowing changes, or crash the scope check with a body
// key that Object.prototype knows.

let t: TestApp;
let s: Sides;
let as: Record<Narrowed | 'superadmin', string>;

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '1000000' });
  s = await seedSides(t.tdb.db);
  as = await narrowedCallers(t, s);
});
afterAll(async () => {
  await t.tdb.dispose();
});

const send = (auth: string, method: 'get' | 'post' | 'put' | 'delete', url: string, body?: unknown) => {
  const r = request(t.app)[method](url).set('Authorization', auth);
  return body === undefined ? r : r.send(body as object);
};
const tag = () => crypto.randomBytes(3).toString('hex');

async function superAdmin(
  o: { schools?: string[]; countries?: string[] } = {},
): Promise<{ auth: string; lmsuserid: string }> {
  const lmsusername = `super-${tag()}@narrowed.test`;
  const lmsuserid = await createStaff(t.tdb.db, { lmsusername, roleids: [ROLE_IDS.superadmin], ...o });
  return { auth: `Bearer ${(await staffLogin(t.app, lmsusername)).accessToken}`, lmsuserid };
}

describe('whole-system maintenance routes', () => {
  const MAINTENANCE = [
    '/standard/remove-standardid',
    '/standard/migrate-standardid',
    '/student/migrate-standardid',
    '/student/migrate-subject-curriculum',
  ];

  it('refuse a Super Admin narrowed to a school or a country, changing nothing', async () => {
    const db = t.tdb.db;
    // An empty class of school B: remove-standardid deletes every class without learners.
    const emptyB = crypto.randomUUID();
    await db('standards').insert({
      standardid: emptyB,
      standardname: `Empty ${tag()}`,
      schoolid: s.B.schoolid,
      schoolname: s.B.schoolname,
    });
    const before = JSON.stringify([
      await db('standards').orderBy('standardid'),
      await db('students').orderBy('studentid'),
    ]);
    for (const narrowing of [{ schools: [s.A.schoolid] }, { countries: [s.A.countryid] }]) {
      const { auth } = await superAdmin(narrowing);
      for (const url of MAINTENANCE) {
        const res = await send(auth, 'post', url);
        expect([url, res.status, res.body]).toEqual([
          url,
          403,
          { error: true, errormessage: 'Forbidden resource', data: false },
        ]);
      }
    }
    expect(
      JSON.stringify([await db('standards').orderBy('standardid'), await db('students').orderBy('studentid')]),
    ).toBe(before);
    // An unnarrowed Super Admin runs them (and the empty class goes).
    for (const url of MAINTENANCE) expect([url, (await send(as.superadmin, 'post', url)).status]).toEqual([url, 200]);
    expect(await db('standards').where({ standardid: emptyB }).first()).toBeUndefined();
  });
});

describe("a changed narrowing ends the account's sessions", () => {
  it('PUT /user/:id with other schoolids or countryids revokes the old tokens; the same lists keep them', async () => {
    const { auth, lmsuserid } = await superAdmin({ schools: [s.A.schoolid] });
    const own = `/school/${s.A.schoolid}`;
    expect((await send(auth, 'get', own)).status).toBe(200);

    // Sending the lists it already has (in another order, or only the name) changes nothing: the token lives.
    expect((await send(as.superadmin, 'put', `/user/${lmsuserid}`, { schoolids: [s.A.schoolid] })).status).toBe(200);
    expect((await send(auth, 'get', own)).status).toBe(200);

    expect((await send(as.superadmin, 'put', `/user/${lmsuserid}`, { schoolids: [s.B.schoolid] })).status).toBe(200);
    const after = await send(auth, 'get', own);
    expect([after.status, after.body.errormessage]).toEqual([401, expect.any(String)]);
    expect(await t.tdb.db('tokens').where({ lmsuserid }).count({ n: '*' }).first()).toMatchObject({ n: 0 });

    // A new sign-in carries the new narrowing.
    const { lmsusername } = await t.tdb.db('lmsusers').where({ lmsuserid }).first('lmsusername');
    const fresh = `Bearer ${(await staffLogin(t.app, lmsusername)).accessToken}`;
    expect((await send(fresh, 'get', `/school/${s.B.schoolid}`)).status).toBe(200);
    expect((await send(fresh, 'get', own)).status).toBe(400);

    // Countries alike.
    expect(
      (await send(as.superadmin, 'put', `/user/${lmsuserid}`, { schoolids: [], countryids: [s.B.countryid] })).status,
    ).toBe(200);
    expect((await send(fresh, 'get', `/school/${s.B.schoolid}`)).status).toBe(401);
  });
});

describe('body keys that Object.prototype knows', () => {
  const KEYS = ['toString', 'constructor', 'valueOf', '__proto__', 'hasOwnProperty'];

  it('are ignored by the scope check on routes whose body is not strictly checked (no 500)', async () => {
    const routes: Array<['put' | 'post', string]> = [
      ['put', `/lesson/quiz/deactivate/${s.A.lessonquizid}`],
      ['put', `/lesson/quiz/activate/${s.A.lessonquizid}`],
      ['put', `/lesson/practice/deactivate/${s.A.lessonpracticeid}`],
      ['put', `/level/activate/${s.A.levelid}`],
      ['put', `/grade/deactivate/${s.A.gradeid}`],
    ];
    for (const [method, url] of routes) {
      for (const key of KEYS) {
        for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
          // Sent as raw JSON: `{"__proto__": …}` is an own key once parsed.
          const res = await request(t.app)
            [method](url)
            .set('Authorization', as[who])
            .set('Content-Type', 'application/json')
            .send(`{"${key}": "x", "levelid": "${s.B.levelid}"}`);
          expect([url, key, who, res.status, res.body.errormessage]).toEqual([url, key, who, 400, 'Invalid Level id']);
          const own = await request(t.app)
            [method](url)
            .set('Authorization', as[who])
            .set('Content-Type', 'application/json')
            .send(`{"${key}": "x"}`);
          expect([url, key, who, own.status]).toEqual([url, key, who, 200]);
        }
      }
    }
  });
});

describe('what a narrowed Admin may not reach beyond its narrowing', () => {
  it('creates a school only in a country it holds whole, and no country at all', async () => {
    const db = t.tdb.db;
    const body = (countryid: string) => ({ schoolname: `School ${tag()}`, countryid, curriculums: [s.A.curriculumid] });
    // Narrowed to school A: a new school would be outside its own narrowing, invisible to it.
    const refused = body(s.A.countryid);
    const bySchool = await send(as.adminOfSchoolA, 'post', '/school/create', refused);
    expect([bySchool.status, bySchool.body]).toEqual([
      400,
      { error: true, errormessage: 'Invalid country id', data: false },
    ]);
    expect(await db('schools').where({ schoolname: refused.schoolname }).first()).toBeUndefined();
    // Narrowed to country X: it creates there, and then sees what it made.
    const made = await send(as.adminOfCountryX, 'post', '/school/create', body(s.A.countryid));
    expect(made.status).toBe(200);
    expect((await send(as.adminOfCountryX, 'get', `/school/${made.body.data.schoolid}`)).status).toBe(200);
    expect((await send(as.adminOfCountryX, 'post', '/school/create', body(s.B.countryid))).body.errormessage).toBe(
      'Invalid country id',
    );

    const countries = await db('countries').count({ n: '*' }).first();
    for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
      const res = await send(as[who], 'post', '/country/create', { countryname: `Land ${tag()}`, expectedusage: 1 });
      expect([who, res.status, res.body.errormessage]).toEqual([who, 403, 'Forbidden resource']);
    }
    expect(await db('countries').count({ n: '*' }).first()).toEqual(countries);
    expect(
      (await send(as.superadmin, 'post', '/country/create', { countryname: `Land ${tag()}`, expectedusage: 1 })).status,
    ).toBe(200);
  });

  it("removes or deactivates a shared question or document only when no other country's lesson uses it", async () => {
    const db = t.tdb.db;
    // s.questionid and s.documentid are used by both sides' lessons.
    const attempts: Array<['put' | 'delete', string]> = [
      ['put', `/question/deactivate/${s.questionid}`],
      ['delete', `/question/${s.questionid}`],
      ['delete', `/document/${s.documentid}`],
    ];
    for (const [method, url] of attempts) {
      for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
        const res = await send(as[who], method, url);
        expect([url, who, res.status, res.body.errormessage]).toEqual([
          url,
          who,
          400,
          expect.stringMatching(/is used by curricula outside your countries/),
        ]);
      }
    }
    expect(await db('questions').where({ questionid: s.questionid }).first('isdeleted', 'questionstatus')).toEqual({
      isdeleted: false,
      questionstatus: true,
    });
    expect(await db('documents').where({ documentid: s.documentid }).first('isdeleted')).toEqual({ isdeleted: false });

    // Used by side A's lessons only: the narrowed Admin of A removes it.
    await db('lessonquizquestions').where({ lessonquizquestionid: s.B.lessonquizquestionid }).del();
    await db('lessonpracticequestions').where({ lessonpracticequestionid: s.B.lessonpracticequestionid }).del();
    await db('levelquizquestions').where({ levelquizquestionid: s.B.levelquizquestionid }).del();
    await db('baselinequestion').where({ baselinequestionid: s.B.baselinequestionid }).del();
    await db('lessonlearnings').where({ lessonlearningid: s.B.lessonlearningid }).del();
    await db('lessonplans').where({ lessonplanid: s.B.lessonplanid }).del();
    expect((await send(as.adminOfCountryX, 'put', `/question/deactivate/${s.questionid}`)).status).toBe(200);
    expect((await send(as.adminOfSchoolA, 'delete', `/question/${s.questionid}`)).status).toBe(200);
    expect((await send(as.adminOfSchoolA, 'delete', `/document/${s.documentid}`)).status).toBe(200);
    expect(await db('documents').where({ documentid: s.documentid }).first('isdeleted')).toEqual({ isdeleted: true });
  });

  it('leaves the whole-system points recomputation to callers that nothing narrows', async () => {
    const db = t.tdb.db;
    const before = JSON.stringify(await db('levels').orderBy('levelid').select('levelid', 'quiz_points', 'updated_by'));
    for (const url of ['/level/update_quiz_points', '/lesson/update_reward_points']) {
      for (const who of ['adminOfSchoolA', 'adminOfCountryX'] as const) {
        const res = await send(as[who], 'post', url);
        expect([url, who, res.status, res.body.errormessage]).toEqual([url, who, 403, 'Forbidden resource']);
      }
    }
    expect(JSON.stringify(await db('levels').orderBy('levelid').select('levelid', 'quiz_points', 'updated_by'))).toBe(
      before,
    );
    for (const url of ['/level/update_quiz_points', '/lesson/update_reward_points'])
      expect((await send(as.superadmin, 'post', url)).status).toBe(201);
  });

  it('gives an account at most 200 schools or countries (its tokens carry them)', async () => {
    const many = Array.from({ length: 201 }, () => crypto.randomUUID());
    const res = await send(as.superadmin, 'post', '/user/create', {
      lmsusername: `wide-${tag()}@narrowed.test`,
      lmsuserpasswordhash: 'Passw0rd!x',
      lmsuserroles: [ROLE_IDS.teacher],
      schoolids: many,
    });
    expect([res.status, res.body.error]).toEqual([400, true]);
    expect(res.body.errormessage).toMatch(/at most 200 ids/);
  });
});
