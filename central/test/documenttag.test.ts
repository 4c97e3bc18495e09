import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { count } from './media-helpers';

let t: TestApp;
let admin: string;
let adminId: string;
beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  adminId = await createStaff(t.tdb.db, { lmsusername: 'tags@doc.test', roleids: [ROLE_IDS.admin] });
  admin = `Bearer ${(await staffLogin(t.app, 'tags@doc.test')).accessToken}`;
});
afterAll(async () => { await t.tdb.dispose(); });

const call = (method: 'get' | 'post' | 'put' | 'delete', path: string, body?: object) => {
  const r = request(t.app)[method](path).set('Authorization', admin);
  return body ? r.send(body) : r;
};
const create = (name: unknown) => call('post', '/documenttag/create', { documenttagname: name });
const tags = () => t.tdb.db('documenttags').orderBy('documenttagname');

describe('/documenttag', () => {
  it('creates a tag trimmed and lower-cased, and answers the row', async () => {
    const res = await create(' Animals ');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      documenttagid: expect.any(String),
      documenttagname: 'animals',
      isdeleted: false,
      created_by: adminId,
    });
    expect(await tags()).toHaveLength(1);
  });

  it('refuses a name already held (whatever its case), and leaves one row', async () => {
    const res = await create('ANIMALS');
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { error: true, errormessage: 'Document tag already exists', data: false },
    });
    expect(await tags()).toHaveLength(1);
  });

  it('validates the name: required, 3 to 8 letters and digits, no unknown keys', async () => {
    const cases: Array<[unknown, string]> = [
      [undefined, '"documenttagname" is required'],
      ['ab', '"documenttagname" length must be at least 3 characters long'],
      ['abcdefghi', '"documenttagname" length must be less than or equal to 8 characters long'],
      ['ab-cd', '"documenttagname" must only contain alpha-numeric characters'],
      ['   ', '"documenttagname" is not allowed to be empty'],
      [42, '"documenttagname" is required'],
    ];
    for (const [value, message] of cases) {
      const res = await create(value);
      expect([value, res.status, res.body.errormessage?.split(', ')[0]]).toEqual([value, 400, message]);
    }
    expect((await call('post', '/documenttag/create', { documenttagname: 'farm', extra: 1 })).body.errormessage).toBe(
      '"extra" is not allowed',
    );
    expect(await tags()).toHaveLength(1);
  });

  it('gets, renames (keeping case), and refuses a rename onto another tag\'s name', async () => {
    const plants = (await create('plants')).body.data;
    const got = await call('get', `/documenttag/${plants.documenttagid}`);
    expect(got.body.data).toMatchObject({ documenttagname: 'plants' });
    const renamed = await call('put', `/documenttag/${plants.documenttagid}`, { documenttagname: 'Trees' });
    expect(renamed.body.data).toMatchObject({
      documenttagid: plants.documenttagid,
      documenttagname: 'Trees',
      updated_by: adminId,
    });
    // Its own name again is not a clash.
    expect((await call('put', `/documenttag/${plants.documenttagid}`, { documenttagname: 'trees' })).status).toBe(200);
    const clash = await call('put', `/documenttag/${plants.documenttagid}`, { documenttagname: 'Animals' });
    expect({ status: clash.status, message: clash.body.errormessage }).toEqual({
      status: 400,
      message: 'Document tag already exists',
    });
    expect(
      (await t.tdb.db('documenttags').where({ documenttagid: plants.documenttagid }).first()).documenttagname,
    ).toBe('trees');
  });

  it('answers an unknown or deleted id with the contract message, and a malformed one with the GUID rule', async () => {
    const unknown = crypto.randomUUID();
    for (const [method, body] of [['get'], ['put', { documenttagname: 'abc' }], ['delete']] as const) {
      const res = await call(method, `/documenttag/${unknown}`, body);
      expect([method, res.status, res.body.errormessage]).toEqual([method, 400, 'Invalid document tag id']);
    }
    expect((await call('get', '/documenttag/nope')).body.errormessage).toBe('"documenttagid" must be a valid GUID');
  });

  it('soft-deletes; the name is free again and the list no longer shows it', async () => {
    const { documenttagid } = await t.tdb.db('documenttags').where({ documenttagname: 'animals' }).first();
    expect((await call('delete', `/documenttag/${documenttagid}`)).body).toEqual({ error: false, data: true });
    expect(await t.tdb.db('documenttags').where({ documenttagid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: adminId,
    });
    expect((await call('get', `/documenttag/${documenttagid}`)).status).toBe(400);
    expect((await create('animals')).status).toBe(200);
    expect(await count(t.tdb.db, 'documenttags', { isdeleted: false })).toBe(2);
  });

  it('lists live tags by name, paged and filtered', async () => {
    for (const n of ['zebra', 'apple', 'mango']) expect((await create(n)).status).toBe(200);
    const all = await call('post', '/documenttag', { filter: [], pageindex: 1, pagesize: 10 });
    expect(all.body.data).toMatchObject({ total: 5, pageindex: 1, pagesize: 10 });
    expect(all.body.data.data.map((r: { documenttagname: string }) => r.documenttagname)).toEqual([
      'animals',
      'apple',
      'mango',
      'trees',
      'zebra',
    ]);
    const page2 = await call('post', '/documenttag', { pageindex: 2, pagesize: 2 });
    expect(page2.body.data.data.map((r: { documenttagname: string }) => r.documenttagname)).toEqual(['mango', 'trees']);
    const filtered = await call('post', '/documenttag', { filter: [{ key: 'documenttagname', value: 'AN' }] });
    expect(filtered.body.data.data.map((r: { documenttagname: string }) => r.documenttagname)).toEqual([
      'animals',
      'mango',
    ]);
    expect((await call('post', '/documenttag', { filter: [{ key: 'questiontagname', value: 'a' }] })).status).toBe(400);
  });
});
