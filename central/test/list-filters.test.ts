import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { MAX_FILTER_TERMS, MAX_FILTER_VALUES } from '../src/http/paging';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';

let t: TestApp;
let admin: string;
const ids = {
  ghana: crypto.randomUUID(),
  kenya: crypto.randomUUID(),
  lotus: crypto.randomUUID(),
  baobab: crypto.randomUUID(),
};

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  await db('countries').insert([
    { countryid: ids.ghana, countryname: 'Ghana', expectedusage: 5, isdeleted: false },
    { countryid: ids.kenya, countryname: 'Kenya', expectedusage: 5, isdeleted: false },
  ]);
  await db('schools').insert([
    { schoolid: ids.lotus, schoolname: 'Lotus School', countryid: ids.ghana, curriculums: '[]', isdeleted: false },
    { schoolid: ids.baobab, schoolname: 'Baobab School', countryid: ids.kenya, curriculums: '[]', isdeleted: false },
  ]);
  await createStaff(db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.superadmin] });
  admin = `Bearer ${(await staffLogin(t.app, 'admin@example.org')).accessToken}`;
});
afterAll(async () => { await t.tdb.dispose(); });

/** Every paged list and one of its contains-matched keys. */
const LISTS = [
  ['/school', 'schoolname'],
  ['/standard', 'standardname'],
  ['/student', 'studentfirstname'],
  ['/user', 'lmsusername'],
  ['/roles', 'rolename'],
  ['/teacher', 'schoolusername'],
  ['/country', 'countryname'],
  ['/question', 'questionidentifier'],
  ['/subject', 'subjectname'],
] as const;

const list = (path: string, filter: unknown) =>
  request(t.app).post(path).set('Authorization', admin).send({ pageindex: 1, pagesize: 20, filter });
const texts = (n: number, last = 'zz') => [...Array.from({ length: n - 1 }, (_, i) => `n${i}`), last];

describe('list filters stay below what the database takes', () => {
  it.each(LISTS)('POST %s: %s with 1,000 values is a 400, never a 500; the cap itself answers', async (path, key) => {
    const thousand = await list(path, [{ key, value: texts(1000) }]);
    expect(thousand.status).toBe(400);
    expect(thousand.body).toMatchObject({ error: true, data: false });

    const atCap = await list(path, [{ key, value: texts(MAX_FILTER_TERMS) }]);
    expect(atCap.status, JSON.stringify(atCap.body).slice(0, 300)).toBe(200);
    const overCap = await list(path, [{ key, value: texts(MAX_FILTER_TERMS + 1) }]);
    expect([overCap.status, overCap.body.errormessage]).toEqual([
      400,
      `Invalid filter: at most ${MAX_FILTER_TERMS} texts to search for in one list`,
    ]);

    // Comma parts count the same as array values, and the count is per request, not per filter.
    expect((await list(path, [{ key, value: texts(MAX_FILTER_TERMS).join(',') }])).status).toBe(200);
    expect((await list(path, [{ key, value: texts(MAX_FILTER_TERMS + 1).join(',') }])).status).toBe(400);
    const spread = [{ key, value: texts(MAX_FILTER_TERMS / 2) }, { key, value: texts(MAX_FILTER_TERMS / 2 + 1) }];
    expect((await list(path, spread)).status).toBe(400);
  });

  it('a long list of texts still matches: any of 100 names on /country, all comma parts on /school', async () => {
    const any = await list('/country', [{ key: 'countryname', value: texts(MAX_FILTER_TERMS, 'KEN') }]);
    expect(any.status).toBe(200);
    // The country list ANDs an array (IPaging); one name cannot contain all 100 texts.
    expect(any.body.data.total).toBe(0);
    const schools = await list('/school', [{ key: 'schoolname', value: texts(MAX_FILTER_TERMS, 'lotus') }]);
    expect(schools.status, JSON.stringify(schools.body)).toBe(200);
    // The school list takes any of an array's values (the admin UI's multi-select).
    expect(schools.body.data.data.map((s: { schoolname: string }) => s.schoolname)).toEqual(['Lotus School']);
    const allParts = await list('/school', [
      {
        key: 'schoolname',
        value: Array.from({ length: MAX_FILTER_TERMS }, (_, i) => (i % 2 ? 'lo' : 'sch')).join(','),
      },
    ]);
    expect(allParts.body.data.data.map((s: { schoolname: string }) => s.schoolname)).toEqual(['Lotus School']);
  });

  it(`ids are one IN: ${MAX_FILTER_VALUES} country ids or school ids find their rows; one more is a 400`, async () => {
    const countryIds = [...Array.from({ length: MAX_FILTER_VALUES - 1 }, () => crypto.randomUUID()), ids.kenya];
    const schools = await list('/school', [
      { key: 'countryid', value: countryIds },
      { key: 'schoolname', value: '' },
      { key: 'curriculums', value: [] },
    ]);
    expect(schools.status).toBe(200);
    expect(schools.body.data.data.map((s: { schoolname: string }) => s.schoolname)).toEqual(['Baobab School']);
    const over = await list('/school', [{ key: 'countryid', value: [...countryIds, ids.ghana] }]);
    expect([over.status, over.body]).toEqual([
      400,
      { error: true, errormessage: `"filter.0.value" must hold at most ${MAX_FILTER_VALUES} values`, data: false },
    ]);
    const long = await list('/school', [{ key: 'schoolname', value: ['x'.repeat(501)] }]);
    expect([long.status, long.body.errormessage]).toEqual([400, '"filter.0.value" must be at most 500 characters']);

    const schoolIds = [...Array.from({ length: MAX_FILTER_VALUES - 1 }, () => crypto.randomUUID()), ids.lotus];
    const classes = await list('/standard', [{ key: 'schoolid', value: schoolIds }]);
    expect(classes.status).toBe(200);
    expect((await list('/standard', [{ key: 'schoolid', value: [...schoolIds, ids.baobab] }])).status).toBe(400);
    // Ids compare whole: a fragment of an id no longer finds it.
    const fragment = await list('/school', [{ key: 'countryid', value: [ids.kenya.slice(0, 8)] }]);
    expect(fragment.body.data.total).toBe(0);
  });
});
