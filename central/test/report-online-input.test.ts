import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';

// The online reports send the caller's IMultiPaging on to the classroom server with the server key: only
// its three keys travel, checked first; anything else is the caller's 400 and reaches no classroom.

let t: TestApp;
let classroom: Server;
let auth = '';
const asked: Array<{ path: string; body: unknown }> = [];

beforeAll(async () => {
  const fake = express();
  fake.use(express.json({ limit: '10mb' }));
  fake.post(/.*/, (req, res) => {
    asked.push({ path: req.path, body: req.body });
    if (req.path.endsWith('/download')) res.json({ error: false, data: [] });
    else res.json({ error: false, data: { data: [{ studentid: 's1' }], total: 1, pageindex: 1, pagesize: 10 } });
  });
  classroom = fake.listen(0, '127.0.0.1');
  await new Promise((r) => classroom.once('listening', r));
  t = await makeApp({
    RATE_LIMIT_MAX: '100000',
    RPI_CLOUD: `http://127.0.0.1:${(classroom.address() as AddressInfo).port}`,
  });
  await createStaff(t.tdb.db, { lmsusername: 'admin@online.test', roleids: [ROLE_IDS.admin] });
  auth = `Bearer ${(await staffLogin(t.app, 'admin@online.test')).accessToken}`;
});
afterAll(async () => {
  await new Promise((r) => classroom.close(r));
  await t.tdb.dispose();
});
beforeEach(() => {
  asked.length = 0;
});

const post = (url: string, body: unknown) =>
  request(t.app).post(url).set('Authorization', auth).set('Content-Type', 'application/json').send(body as object);

/** `{"a":{"a":…}}` nested `depth` levels, as raw JSON text. */
const nested = (depth: number, leaf = '1') => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
/** `[[[…]]]` nested `depth` levels. */
const nestedList = (depth: number) => '['.repeat(depth) + '"x"' + ']'.repeat(depth);

const PAGE = '/report/online/studentprogress';
const DOWNLOAD = '/report/online/studentprogress/download';

describe('online report bodies', () => {
  const refused: Array<[string, string]> = [
    ['an unknown key nested 5,000 deep', `{"pageindex":1,"deep":${nested(5000)}}`],
    ['a filter value nested 5,000 deep', `{"filter":[{"key":"studentid","value":${nestedList(5000)}}]}`],
    ['an object as a filter value', `{"filter":[{"key":"studentid","value":${nested(5000)}}]}`],
    ['an unknown key in a filter entry', '{"filter":[{"key":"studentid","value":"x","extra":{"a":1}}]}'],
    ['a filter value too long', `{"filter":[{"key":"studentid","value":"${'x'.repeat(501)}"}]}`],
    ['a list too long', `{"filter":[{"key":"studentid","value":${JSON.stringify(Array(1001).fill('x'))}}]}`],
    ['too many filters', JSON.stringify({ filter: Array.from({ length: 21 }, (_, i) => ({ key: `k${i}` })) })],
    ['a page size too large', '{"pagesize":1001}'],
    ['a page index beyond a million', '{"pageindex":1000001}'],
    ['an empty filter key', '{"filter":[{"key":"","value":"x"}]}'],
  ];
  for (const url of [PAGE, DOWNLOAD]) {
    for (const [what, body] of refused) {
      it(`${url}: ${what} is a 400 and the classroom is asked nothing`, async () => {
        const res = await post(url, body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error: true, data: false });
        expect(typeof res.body.errormessage).toBe('string');
        expect(asked).toEqual([]);
      });
    }
  }

  it('a normal body reaches the classroom as its three keys and the page comes back', async () => {
    const body = {
      pageindex: 2,
      pagesize: 50,
      filter: [
        { key: 'studentid', value: 's1' },
        { key: 'standard', value: ['a', 'b'] },
        { key: 'levelid', value: '' },
        { key: 'gradeid' },
        { key: 'n', value: 3 },
        { key: 'flag', value: null },
      ],
    };
    const res = await post(PAGE, body);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ data: [{ studentid: 's1' }], total: 1, pageindex: 2, pagesize: 50 });
    expect(asked).toEqual([{ path: '/report/studentprogress', body }]);
  });

  it('an empty body and a page size of 0 (the default page) are asked as the default page', async () => {
    expect((await post(PAGE, {})).status).toBe(200);
    const res = await post(PAGE, { pageindex: 1, pagesize: 0, filter: [] });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ pageindex: 1, pagesize: 0 });
    expect(asked.map((a) => a.body)).toEqual([{}, { pageindex: 1, filter: [] }]);
  });

  it('a download with a normal body is forwarded and answers CSV', async () => {
    const res = await post(DOWNLOAD, { filter: [{ key: 'studentid', value: 's1' }] });
    expect(res.status).toBe(200);
    const body = { filter: [{ key: 'studentid', value: 's1' }] };
    expect(asked).toEqual([{ path: '/report/studentprogress/download', body }]);
  });
});
