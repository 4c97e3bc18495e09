import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KHMER,
  authoringApp,
  expectRefused,
  onPostgres,
  oversize,
  raceWithUncommitted,
  uuid,
  type Callers,
} from './authoring';

let c: Callers;
beforeAll(async () => { c = await authoringApp(); });
afterAll(async () => { await c.t.tdb.dispose(); });

const db = () => c.t.tdb.db;
const post = (url: string, body: object, who = c.admin) =>
  request(c.t.app).post(url).set('Authorization', who).send(body);
const put = (url: string, body: object, who = c.admin) =>
  request(c.t.app).put(url).set('Authorization', who).send(body);
const get = (url: string, who = c.admin) =>
  request(c.t.app).get(url).set('Authorization', who).set('Content-Type', 'application/json');
const del = (url: string, who = c.admin) =>
  request(c.t.app).delete(url).set('Authorization', who).set('Content-Type', 'application/json');
const create = async (questiontagname: string) => {
  const res = await post('/questiontag/create', { questiontagname });
  expect(res.status).toBe(200);
  return res.body.data as { questiontagid: string; questiontagname: string };
};

describe('/questiontag', () => {
  it('POST /questiontag/create stores the name lower-cased and answers the row', async () => {
    const res = await post('/questiontag/create', { questiontagname: 'Algebra' });
    expect(res.body).toEqual({
      error: false,
      data: expect.objectContaining({
        questiontagid: expect.any(String),
        questiontagname: 'algebra',
        isdeleted: false,
        created_by: c.adminId,
      }),
    });
    expect(await db()('questiontags').where({ questiontagid: res.body.data.questiontagid }).first()).toMatchObject({
      questiontagname: 'algebra',
      isdeleted: false,
    });
    // The lower-cased name is the one that is taken.
    await expectRefused(
      db(),
      ['questiontags'],
      [['case', post('/questiontag/create', { questiontagname: 'ALGEBRA' }), 400, 'Question tag already exists']],
    );
  });

  it('takes tags in Khmer (letters with their vowel signs) and round-trips them', async () => {
    const tag = await create(KHMER.tag);
    expect(tag.questiontagname).toBe(KHMER.tag);
    expect((await get(`/questiontag/${tag.questiontagid}`)).body.data.questiontagname).toBe(KHMER.tag);
    const listed = await post('/questiontag', { filter: [{ key: 'questiontagname', value: 'គណិ' }] });
    expect(listed.body.data.data.map((r: { questiontagid: string }) => r.questiontagid)).toEqual([tag.questiontagid]);
    const renamed = await put(`/questiontag/${tag.questiontagid}`, { questiontagname: 'លេខ១' });
    expect([renamed.status, renamed.body.data.questiontagname]).toEqual([200, 'លេខ១']);
  });

  it('POST /questiontag: live tags by name, paged, ' +
      'the page echoed (the question editor asks page 0, size 0)', async () => {
    for (const n of ['zeta', 'beta', 'gamma']) await create(n);
    const gone = await create('omega');
    await del(`/questiontag/${gone.questiontagid}`);
    const all = (await post('/questiontag', { pageindex: 0, pagesize: 0 })).body.data;
    const names = all.data.map((t: { questiontagname: string }) => t.questiontagname);
    expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(names).toEqual(expect.arrayContaining(['beta', 'gamma', 'zeta']));
    expect(names).not.toContain('omega');
    expect([all.total, all.pageindex, all.pagesize]).toEqual([names.length, 0, 0]);
    const page = (await post('/questiontag', { filter: [], pageindex: 2, pagesize: 1 })).body.data;
    expect([
      page.data.map((t: { questiontagname: string }) => t.questiontagname),
      page.total,
      page.pageindex,
      page.pagesize,
    ]).toEqual([[names[1]], names.length, 2, 1]);
    expect(
      (await post('/questiontag', { filter: [{ key: 'questiontagname', value: 'eta' }] })).body.data.data.map(
        (t: { questiontagname: string }) => t.questiontagname,
      ),
    ).toEqual(['beta', 'zeta']);
  });

  it('PUT renames as typed (not lower-cased); DELETE soft-deletes and frees the name', async () => {
    const tag = await create('numbers');
    const renamed = await put(`/questiontag/${tag.questiontagid}`, { questiontagname: 'Numbers' });
    expect(renamed.body.data).toMatchObject({
      questiontagid: tag.questiontagid,
      questiontagname: 'Numbers',
      updated_by: c.adminId,
    });
    expect((await del(`/questiontag/${tag.questiontagid}`)).body).toEqual({ error: false, data: true });
    expect(await db()('questiontags').where({ questiontagid: tag.questiontagid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: c.adminId,
      deleted_at: expect.any(String),
    });
    await expectRefused(
      db(),
      ['questiontags'],
      [
        ['get deleted', get(`/questiontag/${tag.questiontagid}`), 400, 'Invalid question tag id'],
        [
          'update deleted',
          put(`/questiontag/${tag.questiontagid}`, { questiontagname: 'other' }),
          400,
          'Invalid question tag id',
        ],
        ['delete again', del(`/questiontag/${tag.questiontagid}`), 400, 'Invalid question tag id'],
      ],
    );
    const again = await post('/questiontag/create', { questiontagname: 'Numbers' });
    expect([again.status, again.body.errormessage]).toEqual([200, undefined]);
  });

  it('refuses bad names, taken names and unknown ids with the contract words, writing nothing', async () => {
    const tag = await create('shapes');
    await create('time');
    await expectRefused(
      db(),
      ['questiontags'],
      [
        ['missing', post('/questiontag/create', {}), 400, '"Question Tag Name" is required'],
        [
          'short',
          post('/questiontag/create', { questiontagname: 'ab' }),
          400,
          '"Question Tag Name" length must be at least 3 characters long',
        ],
        [
          'long',
          post('/questiontag/create', { questiontagname: 'abcdefghi' }),
          400,
          '"Question Tag Name" length must be less than or equal to 8 characters long',
        ],
        [
          'space',
          post('/questiontag/create', { questiontagname: 'two word' }),
          400,
          '"Question Tag Name" must only contain alpha-numeric characters',
        ],
        [
          'symbol',
          post('/questiontag/create', { questiontagname: 'a-b_c' }),
          400,
          '"Question Tag Name" must only contain alpha-numeric characters',
        ],
        [
          'blank',
          post('/questiontag/create', { questiontagname: '    ' }),
          400,
          '"Question Tag Name" must only contain alpha-numeric characters',
        ],
        [
          'unknown key',
          post('/questiontag/create', { questiontagname: 'money', isdeleted: true }),
          400,
          '"isdeleted" is not allowed',
        ],
        ['taken', post('/questiontag/create', { questiontagname: 'Shapes' }), 400, 'Question tag already exists'],
        [
          'taken on rename',
          put(`/questiontag/${tag.questiontagid}`, { questiontagname: 'time' }),
          400,
          'Question tag already exists',
        ],
        ['unknown rename', put(`/questiontag/${uuid()}`, { questiontagname: 'money' }), 400, 'Invalid question tag id'],
        ['unknown get', get(`/questiontag/${uuid()}`), 400, 'Invalid question tag id'],
        ['unknown delete', del(`/questiontag/${uuid()}`), 400, 'Invalid question tag id'],
        ['bad page index', post('/questiontag', { pageindex: -1 }), 400, 'Invalid page index'],
        [
          'bad filter key',
          post('/questiontag', { filter: [{ key: 'isdeleted', value: 'true' }] }),
          400,
          /"filter.0.key" must be one of/,
        ],
        [
          'too many filters',
          post('/questiontag', { filter: Array.from({ length: 6 }, () => ({ key: 'questiontagname', value: 'a' })) }),
          400,
          'Invalid filter',
        ],
      ],
    );
  });

  it('answers attacks without touching the table', async () => {
    await expectRefused(
      db(),
      ['questiontags'],
      [
        ['oversize', post('/questiontag/create', oversize()), 413, 'Request body is too large'],
        ['malformed get', get('/questiontag/123'), 400, '"Question Tag ID" must be a valid GUID'],
        [
          'malformed put',
          put('/questiontag/..%2F..%2Fetc', { questiontagname: 'money' }),
          400,
          '"Question Tag ID" must be a valid GUID',
        ],
        ['malformed delete', del(`/questiontag/${uuid()}x`), 400, '"Question Tag ID" must be a valid GUID'],
        ['refresh token', post('/questiontag/create', { questiontagname: 'money' }, c.refresh), 401, 'Unauthorized'],
        [
          'teacher creates',
          post('/questiontag/create', { questiontagname: 'money' }, c.teacher),
          403,
          'Forbidden resource',
        ],
        ['user lists', post('/questiontag', {}, c.user), 403, 'Forbidden resource'],
      ],
    );
  });

  it.runIf(onPostgres())("a create that races past the check ends as the rule's 400 (PostgreSQL)", async () => {
    const res = await raceWithUncommitted(
      db(),
      'questiontags',
      { questiontagid: uuid(), questiontagname: 'race', isdeleted: false },
      () => post('/questiontag/create', { questiontagname: 'Race' }),
    );
    expect([res.status, res.body.errormessage]).toEqual([400, 'Question tag already exists']);
    expect(await db()('questiontags').where({ questiontagname: 'race' }).count({ n: '*' }).first()).toMatchObject({
      n: 1,
    });
  });
});
