import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';

let t: TestApp;
let admin: string;
let teacher: string;
let scoped: string;
let adminId: string;
const ids = { a: crypto.randomUUID(), b: crypto.randomUUID(), gone: crypto.randomUUID() };

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  const db = t.tdb.db;
  await db('countries').insert([
    { countryid: ids.b, countryname: 'Kenya', expectedusage: 10, isdeleted: false },
    { countryid: ids.a, countryname: 'Ghana', expectedusage: 5, isdeleted: false },
    { countryid: ids.gone, countryname: 'Atlantis', expectedusage: 0, isdeleted: true },
  ]);
  adminId = await createStaff(db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.admin] });
  await createStaff(db, { lmsusername: 'teacher@example.org', roleids: [ROLE_IDS.teacher] });
  await createStaff(db, { lmsusername: 'scoped@example.org', roleids: [ROLE_IDS.admin], countries: [ids.b] });
  admin = `Bearer ${(await staffLogin(t.app, 'admin@example.org')).accessToken}`;
  teacher = `Bearer ${(await staffLogin(t.app, 'teacher@example.org')).accessToken}`;
  scoped = `Bearer ${(await staffLogin(t.app, 'scoped@example.org')).accessToken}`;
});
afterAll(async () => { await t.tdb.dispose(); });

const names = (rows: Array<{ countryname: string }>) => rows.map((r) => r.countryname);
const count = async () => Number((await t.tdb.db('countries').count({ n: '*' }).first())?.n);

describe('/country', () => {
  it('GET /country/all: live countries by name, narrowed by `country` and by the token\'s countries', async () => {
    const all = await request(t.app).get('/country/all').set('Authorization', teacher);
    expect(all.status).toBe(200);
    expect(names(all.body.data)).toEqual(['Ghana', 'Kenya']);
    expect(
      names((await request(t.app).get('/country/all?country=%20Ken%20').set('Authorization', teacher)).body.data),
    ).toEqual(['Kenya']);
    // What the admin UI's student page sends.
    expect((await request(t.app).get('/country/all?country=string').set('Authorization', teacher)).body.data).toEqual(
      [],
    );
    expect(names((await request(t.app).get('/country/all').set('Authorization', scoped)).body.data)).toEqual(['Kenya']);
    expect((await request(t.app).get('/country/all')).status).toBe(401);
  });

  it('GET /country/:countryid: the row, null when unknown, 400 for a bad id, 403 without view_country', async () => {
    const one = await request(t.app).get(`/country/${ids.a}`).set('Authorization', teacher);
    expect([one.status, one.body.data]).toEqual([
      200,
      expect.objectContaining({ countryid: ids.a, countryname: 'Ghana', expectedusage: 5, isdeleted: false }),
    ]);
    expect((await request(t.app).get(`/country/${crypto.randomUUID()}`).set('Authorization', teacher)).body).toEqual({
      error: false,
      data: null,
    });
    expect((await request(t.app).get(`/country/${ids.gone}`).set('Authorization', teacher)).body).toEqual({
      error: false,
      data: null,
    });
    expect((await request(t.app).get('/country/nope').set('Authorization', teacher)).status).toBe(400);
  });

  it('POST /country: paged, filtered by countryname, page echoed', async () => {
    const page = await request(t.app)
      .post('/country')
      .set('Authorization', admin)
      .send({ filter: [], pageindex: 1, pagesize: 1 });
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual({
      data: [expect.objectContaining({ countryname: 'Ghana' })],
      total: 2,
      pageindex: 1,
      pagesize: 1,
    });
    const second = await request(t.app)
      .post('/country')
      .set('Authorization', admin)
      .send({ pageindex: 2, pagesize: 1 });
    expect(names(second.body.data.data)).toEqual(['Kenya']);
    const filtered = await request(t.app)
      .post('/country')
      .set('Authorization', admin)
      .send({ filter: [{ key: 'countryname', value: 'Gha' }] });
    expect([filtered.body.data.total, names(filtered.body.data.data)]).toEqual([1, ['Ghana']]);
    const bad = await request(t.app)
      .post('/country')
      .set('Authorization', admin)
      .send({ filter: [{ key: 'other', value: 'x' }] });
    expect(bad.status).toBe(400);
  });

  it('creates, updates and soft-deletes a country, with the caller in the audit columns', async () => {
    const created = await request(t.app)
      .post('/country/create')
      .set('Authorization', admin)
      .send({ countryname: 'Uganda', expectedusage: 12 });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({
      countryname: 'Uganda',
      expectedusage: 12,
      isdeleted: false,
      created_by: adminId,
    });
    const id = created.body.data.countryid as string;

    const updated = await request(t.app)
      .put(`/country/${id}`)
      .set('Authorization', admin)
      .send({ countryname: 'Uganda Rep' });
    expect(updated.status).toBe(200);
    // A missing expectedusage becomes 0, as in the original.
    expect(updated.body.data).toMatchObject({
      countryid: id,
      countryname: 'Uganda Rep',
      expectedusage: 0,
      updated_by: adminId,
    });

    // A deleted school no longer holds its country.
    await t.tdb
      .db('schools')
      .insert({
        schoolid: crypto.randomUUID(),
        schoolname: 'Closed School',
        countryid: id,
        curriculums: JSON.stringify([]),
        isdeleted: true,
      });
    const deleted = await request(t.app).delete(`/country/${id}`).set('Authorization', admin);
    expect([deleted.status, deleted.body]).toEqual([200, { error: false, data: true }]);
    expect(await t.tdb.db('countries').where({ countryid: id }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: adminId,
    });
    expect(names((await request(t.app).get('/country/all').set('Authorization', admin)).body.data)).not.toContain(
      'Uganda Rep',
    );
  });

  it('refuses bad bodies, taken names, unknown ids and a country with schools, writing nothing', async () => {
    await t.tdb
      .db('schools')
      .insert({
        schoolid: crypto.randomUUID(),
        schoolname: 'Accra Primary',
        countryid: ids.a,
        curriculums: JSON.stringify([]),
      });
    const before = await count();
    const snapshot = await t.tdb.db('countries').orderBy('countryid').select();
    const cases: Array<[request.Test, number, string | RegExp]> = [
      [request(t.app).post('/country/create').set('Authorization', admin).send({}), 400, '"countryname" is required'],
      [
        request(t.app).post('/country/create').set('Authorization', admin).send({ countryname: '   ' }),
        400,
        '"countryname" not allowed',
      ],
      [
        request(t.app)
          .post('/country/create')
          .set('Authorization', admin)
          .send({ countryname: 'x'.repeat(46) }),
        400,
        /less than or equal to 45/,
      ],
      [
        request(t.app)
          .post('/country/create')
          .set('Authorization', admin)
          .send({ countryname: 'Mali', expectedusage: -1 }),
        400,
        /greater than or equal to 0/,
      ],
      [
        request(t.app).post('/country/create').set('Authorization', admin).send({ countryname: 'Mali', extra: 1 }),
        400,
        '"extra" is not allowed',
      ],
      [
        request(t.app).post('/country/create').set('Authorization', admin).send({ countryname: 'Kenya' }),
        400,
        'Country already exists',
      ],
      // A deleted country still holds its name.
      [
        request(t.app).post('/country/create').set('Authorization', admin).send({ countryname: 'Atlantis' }),
        400,
        'Country already exists',
      ],
      [
        request(t.app).put(`/country/${ids.a}`).set('Authorization', admin).send({ countryname: 'Kenya' }),
        400,
        'Country already exists',
      ],
      [
        request(t.app).put(`/country/${crypto.randomUUID()}`).set('Authorization', admin).send({ countryname: 'Mali' }),
        400,
        'Invalid country id',
      ],
      [
        request(t.app).put(`/country/${ids.gone}`).set('Authorization', admin).send({ countryname: 'Mali' }),
        400,
        'Invalid country id',
      ],
      [
        request(t.app).delete(`/country/${ids.a}`).set('Authorization', admin),
        400,
        'Country is assigned. Country cannot be deleted',
      ],
      [request(t.app).delete(`/country/${ids.gone}`).set('Authorization', admin), 400, 'Invalid country id'],
      [
        request(t.app).post('/country/create').set('Authorization', teacher).send({ countryname: 'Mali' }),
        403,
        'Forbidden resource',
      ],
      [
        request(t.app).put(`/country/${ids.b}`).set('Authorization', teacher).send({ countryname: 'Mali' }),
        403,
        'Forbidden resource',
      ],
      [request(t.app).delete(`/country/${ids.b}`).set('Authorization', teacher), 403, 'Forbidden resource'],
    ];
    for (const [req, status, message] of cases) {
      const res = await req;
      expect(res.status).toBe(status);
      expect(res.body.errormessage).toMatch(message);
    }
    expect(await count()).toBe(before);
    expect(await t.tdb.db('countries').orderBy('countryid').select()).toEqual(snapshot);
  });
});

describe('a staff account restricted to some countries', () => {
  it('lists, reads, changes and deletes only those: another country answers as if it did not exist', async () => {
    const page = await request(t.app).post('/country').set('Authorization', scoped).send({});
    expect(names(page.body.data.data)).toEqual(['Kenya']);
    expect(page.body.data.total).toBe(1);
    expect((await request(t.app).get(`/country/${ids.b}`).set('Authorization', scoped)).body.data.countryname).toBe(
      'Kenya',
    );
    const other = await request(t.app).get(`/country/${ids.a}`).set('Authorization', scoped);
    expect([other.status, other.body.data]).toEqual([200, null]);
    const upd = await request(t.app)
      .put(`/country/${ids.a}`)
      .set('Authorization', scoped)
      .send({ countryname: 'Ghana 2' });
    expect([upd.status, upd.body.errormessage]).toEqual([400, 'Invalid country id']);
    const del = await request(t.app).delete(`/country/${ids.a}`).set('Authorization', scoped);
    expect([del.status, del.body.errormessage]).toEqual([400, 'Invalid country id']);
    expect(await t.tdb.db('countries').where({ countryid: ids.a }).first()).toMatchObject({
      countryname: 'Ghana',
      isdeleted: false,
    });
  });
});

describe('bounded and literal list filters', () => {
  it('matches % and _ literally, refuses absurd paging and oversized filter ' +
      'lists with a 400, never a 500', async () => {
    await t.tdb
      .db('countries')
      .insert({ countryid: crypto.randomUUID(), countryname: 'Per_cent%land', expectedusage: 1, isdeleted: false });
    const list = (filter: unknown, extra: object = {}) =>
      request(t.app)
        .post('/country')
        .set('Authorization', admin)
        .send({ filter, ...extra });
    expect(names((await list([{ key: 'countryname', value: '%' }])).body.data.data)).toEqual(['Per_cent%land']);
    expect(names((await list([{ key: 'countryname', value: 'r_c' }])).body.data.data)).toEqual(['Per_cent%land']);
    expect(names((await list([{ key: 'countryname', value: '_' }])).body.data.data)).toEqual(['Per_cent%land']);
    // Case does not matter on either database.
    expect(names((await list([{ key: 'countryname', value: 'GHANA' }])).body.data.data)).toEqual(['Ghana']);
    const huge = await list([], { pageindex: 1e20 });
    expect([huge.status, huge.body.errormessage]).toEqual([400, 'Invalid page index']);
    const manyIds = await request(t.app).post('/report/studentstatus').set('Authorization', admin)
      .send({ filter: [{ key: 'studentid', value: Array.from({ length: 40_000 }, () => crypto.randomUUID()) }] });
    // 40,000 ids are over the body limit already; 2,000 fit in it and are over the filter's bound.
    expect(manyIds.status).toBe(413);
    const twoThousand = await request(t.app).post('/report/studentstatus').set('Authorization', admin)
      .send({ filter: [{ key: 'studentid', value: Array.from({ length: 2_000 }, () => crypto.randomUUID()) }] });
    expect(twoThousand.status).toBe(400);
    expect(twoThousand.body).toMatchObject({ error: true, data: false });
    const longText = await list([{ key: 'countryname', value: 'x'.repeat(501) }]);
    expect(longText.status).toBe(400);
    await t.tdb.db('countries').where({ countryname: 'Per_cent%land' }).del();
  });
});
