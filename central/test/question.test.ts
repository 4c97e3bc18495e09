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
// What the admin UI sends as the body of its bodiless PUTs: its HTTP options object.
const UI_OPTIONS = { headers: { normalizedNames: {}, lazyUpdate: null } };

const file = (filename: string) => ({
  filetype: filename.endsWith('.mp3') ? 1 : 6,
  filename,
  fileext: filename.split('.').pop(),
});
const heading = (text: string, media?: string) => ({
  headingtext: text,
  ...(media ? { headingfile: file(media) } : {}),
});

/** A question of each template type, shaped as the admin UI's editor builds it. */
function sample(templatetypeid: number, questionidentifier = `T${String(templatetypeid).padStart(2, '0')} sample`) {
  const base = {
    questionid: uuid(),
    questionidentifier,
    templatetypeid,
    isdeleted: false,
    questionstatus: true,
    questiontags: ['sample'],
    questioncorrectvalue: 0,
    questionfeedback: null,
  };
  const choice = (n: number, correct: number[], picture: boolean) =>
    Array.from({ length: n }, (_, i) => ({
      questionoptionid: uuid(),
      questionoptiontext: picture ? '' : `option ${i + 1}`,
      questionoptioniscorrect: correct.includes(i),
      ...(picture ? { questionoptionfile: file(`opt${i}.png`) } : {}),
    }));
  switch (templatetypeid) {
    case 1:
    case 3:
      return {
        ...base,
        questionheading: heading('Listen and choose', 'q.mp3'),
        questiontext: 'Which is seven?',
        questionfile: file('seven.mp3'),
        questionoptions: choice(3, templatetypeid === 1 ? [1] : [0, 2], false),
      };
    case 2:
    case 4:
      return {
        ...base,
        questionheading: heading('Choose the picture'),
        questiontext: 'Find the cat',
        questionoptions: choice(4, templatetypeid === 2 ? [2] : [1, 2], true),
      };
    case 5:
    case 6:
      return {
        ...base,
        questionheading: heading('Put in order'),
        questionoptions: Array.from({ length: 4 }, (_, i) => ({
          questionoptionid: uuid(),
          questionoptionsequence: i + 1,
          ...(templatetypeid === 6 ? { questionoptionfile: file(`step${i}.jpg`) } : { questionoptiontext: `${i + 1}` }),
        })),
      };
    case 7:
      return {
        ...base,
        questionheading: heading('Match'),
        questionoptions: ['cat', 'dog'].map((w) => ({
          questionoptionid: uuid(),
          questionoptiontext: w,
          questionassociate: {
            questionoptionid: uuid(),
            questionassociatetext: null,
            questionassociatefile: file(`${w}.png`),
          },
        })),
      };
    case 8:
      return {
        ...base, questionheading: heading('Fill in the blanks'), questiontext: 'Two ----- two is -----',
        questiondistractors: [{ questiondistractorid: uuid(), questiondistractortext: 'minus' }],
        questionoptions: [
          { questionoptionid: uuid(), questionoptiontext: 'plus', questionoptionsequence: 1 },
          { questionoptionid: uuid(), questionoptiontext: 'four', questionoptionsequence: 2 },
        ],
      };
    case 18: case 19: case 20:
      return {
        ...base,
        questionheading: heading('Count the dots'),
        questioncorrectvalue: 5,
        questionoptions: [
          {
            questionoptionid: uuid(),
            questionoptionvalue: 5,
            questionoptionisstaticfile: true,
            questionoptionfile: file('dots.png'),
          },
          { questionoptionid: uuid(), questionoptionvalue: 3, questionoptionisstaticfile: false },
        ],
      };
    case 21: case 22: case 23:
      return {
        ...base,
        questionheading: heading('Complete the fraction'),
        questionoptions: [
          {
            questionoptionid: uuid(),
            questionoptionnumeratorvalue: '1',
            questionoptionnumeratorisstatic: true,
            questionoptiondenominatorvalue: '4',
            questionoptiondenominatorisstatic: false,
          },
        ],
      };
    case 24:
      return {
        ...base,
        questionheading: heading('Which fraction is shaded?', 'pie.png'),
        questionoptions: [
          {
            questionoptionid: uuid(),
            questionoptionisfraction: true,
            questionoptionnumeratorvalue: '3',
            questionoptiondenominatorvalue: '8',
            questionoptioniscorrect: true,
            questionoptionistext: false,
          },
        ],
      };
    default: // 9..17: question and answer as text, audio or image
      return {
        ...base,
        questionheading: heading(`Template ${templatetypeid}`),
        questiontext: 'Say the word',
        questionfile: file(templatetypeid % 2 ? 'word.mp3' : 'word.png'),
        questionoptions: choice(2, [0], templatetypeid >= 12),
      };
  }
}

type Body = ReturnType<typeof sample>;
/** What the server keeps of a body: its content, option ids excepted (they are regenerated). */
const withoutOptionIds = (options: unknown) =>
  (options as Array<Record<string, unknown>>).map(({ questionoptionid: _id, questionassociate, ...rest }) => ({
    ...rest,
    ...(questionassociate
      ? { questionassociate: { ...(questionassociate as object), questionoptionid: expect.any(String) } }
      : {}),
  }));

async function createQuestion(body: Body): Promise<string> {
  const res = await post('/question/create', body);
  expect(res.body).toEqual({ error: false, data: true });
  const row = await db()('questions')
    .where({ questionidentifier: body.questionidentifier, isdeleted: false })
    .first('questionid');
  return row.questionid as string;
}

describe('/question', () => {
  it('creates and reads back a question of each of the 24 template types, its JSON parts as real JSON', async () => {
    for (let type = 1; type <= 24; type += 1) {
      const body = sample(type);
      const questionid = await createQuestion(body);
      expect(questionid).not.toBe(body.questionid);
      const res = await get(`/question/${questionid}`);
      expect(res.status).toBe(200);
      const q = res.body.data;
      expect(Object.keys(q).sort()).toEqual([
        'isdeleted', 'questioncorrectvalue', 'questiondistractors', 'questionfeedback', 'questionfile',
        'questionheading', 'questionid', 'questionidentifier', 'questionoptions', 'questionstatus', 'questiontags',
        'questiontext', 'templatetypeid',
      ].sort());
      expect(q).toMatchObject({
        questionid,
        questionidentifier: body.questionidentifier,
        templatetypeid: type,
        isdeleted: false,
        questionstatus: true,
        questiontags: ['sample'],
        questionheading: body.questionheading,
        questiontext: 'questiontext' in body ? body.questiontext : null,
        questionfile: 'questionfile' in body ? body.questionfile : null,
        questiondistractors: 'questiondistractors' in body ? body.questiondistractors : null,
        questioncorrectvalue: body.questioncorrectvalue,
      });
      expect(Array.isArray(q.questionoptions)).toBe(true);
      expect(q.questionoptions).toEqual(
        withoutOptionIds(body.questionoptions).map((o) => ({ ...o, questionoptionid: expect.any(String) })),
      );
      // Every option has a new id, and an associate carries its option's.
      for (const [i, o] of (
        q.questionoptions as Array<{ questionoptionid: string; questionassociate?: { questionoptionid: string } }>
      ).entries()) {
        expect(o.questionoptionid).not.toBe(body.questionoptions[i].questionoptionid);
        if (o.questionassociate) expect(o.questionassociate.questionoptionid).toBe(o.questionoptionid);
      }
    }
    // Stored as JSON, not as text that happens to look like it.
    const kinds =
      db().client.config.client === 'pg'
        ? (
            await db().raw(
              'select distinct jsonb_typeof(questionoptions) as o, jsonb_typeof(questionheading) as h, ' +
                'jsonb_typeof(questiontags) as t from questions',
            )
          ).rows
        : await db()('questions').distinct(
            db().raw('json_type(questionoptions) as o'),
            db().raw('json_type(questionheading) as h'),
            db().raw('json_type(questiontags) as t'),
          );
    expect(kinds).toEqual([{ o: 'array', h: 'object', t: 'array' }]);
  });

  it('round-trips Khmer identifiers, texts and tags', async () => {
    const body = { ...sample(1, KHMER.identifier), questiontext: 'តើលេខប្រាំពីរមួយណា?', questiontags: [KHMER.tag] };
    const questionid = await createQuestion(body);
    expect((await get(`/question/${questionid}`)).body.data).toMatchObject({
      questionidentifier: KHMER.identifier,
      questiontext: 'តើលេខប្រាំពីរមួយណា?',
      questiontags: [KHMER.tag],
    });
    const byTag = await post('/question', { filter: [{ key: 'questiontags', value: KHMER.tag }] });
    expect(byTag.body.data.data.map((q: { questionid: string }) => q.questionid)).toEqual([questionid]);
    expect((await get(`/question/tag/${questionid}/${encodeURIComponent('ធរណីមាត្រ')}`)).body).toEqual({
      error: false,
      data: true,
    });
    expect((await get(`/question/${questionid}`)).body.data.questiontags).toEqual([KHMER.tag, 'ធរណីមាត្រ']);
    const renamed = await put(
      `/question/${questionid}/questionidentifier/${encodeURIComponent('សំណួរថ្មី')}`,
      UI_OPTIONS,
    );
    expect(renamed.body).toEqual({ error: false, data: true });
    expect((await db()('questions').where({ questionid }).first()).questionidentifier).toBe('សំណួរថ្មី');
  });

  it('PUT replaces the content (new option ids), keeps tags and status, ' +
      'ignores what the editor sends back besides', async () => {
    const questionid = await createQuestion({
      ...sample(1, 'Editable one'),
      questiontags: ['algebra', 'algebra', 'shapes'],
    });
    await put(`/question/deactivate/${questionid}`, UI_OPTIONS);
    const read = (await get(`/question/${questionid}`)).body.data;
    expect(read.questiontags).toEqual(['algebra', 'shapes']);
    const edited = {
      ...read,
      ...sample(7, 'Edited one'),
      questiontext: null,
      questionfile: null,
      questiontags: [],
      questionstatus: true,
      isdeleted: true,
      questionid: uuid(),
      created_at: 'x',
      lastupdated: 'y',
    };
    const res = await put(`/question/${questionid}`, edited);
    expect(res.body).toEqual({
      error: false,
      data: {
        isdeleted: false,
        questionid,
        questionidentifier: 'Edited one',
        questionstatus: false,
        questiontags: ['algebra', 'shapes'],
        templatetypeid: 7,
      },
    });
    const after = (await get(`/question/${questionid}`)).body.data;
    expect(after).toMatchObject({
      templatetypeid: 7,
      questionheading: edited.questionheading,
      questiontext: null,
      questionfile: null,
      questionstatus: false,
    });
    expect(after.questionoptions).toEqual(
      withoutOptionIds(edited.questionoptions).map((o) => ({ ...o, questionoptionid: expect.any(String) })),
    );
    expect(after.questionoptions.map((o: { questionoptionid: string }) => o.questionoptionid)).not.toEqual(
      read.questionoptions.map((o: { questionoptionid: string }) => o.questionoptionid),
    );
    expect(await db()('questions').where({ questionid }).first()).toMatchObject({
      updated_by: c.adminId,
      isdeleted: false,
    });
    // A part the body leaves out is replaced by nothing.
    const { questionheading: _h, ...headless } = edited;
    expect((await put(`/question/${questionid}`, headless)).status).toBe(200);
    expect((await get(`/question/${questionid}`)).body.data.questionheading).toBeNull();
  });

  it('lists newest change first, AND-combines filters on POST /question and OR-combines ' +
      'them on /question/search', async () => {
    await db()('questions').del();
    const ids: Record<string, string> = {};
    const make = async (name: string, type: number, tags: string[]) => {
      ids[name] = await createQuestion({ ...sample(type, name), questiontags: tags });
      await new Promise((r) => setTimeout(r, 5));
    };
    await make('Add apples', 1, ['algebra']);
    await make('Add pears', 12, ['algebra', 'fruit']);
    await make('Shapes one', 2, ['geometry']);
    await make('Shapes two', 1, ['geometry', 'fruit']);
    await put(`/question/deactivate/${ids['Shapes one']}`, UI_OPTIONS);
    const names = (res: request.Response) =>
      res.body.data.data.map((q: { questionidentifier: string }) => q.questionidentifier);

    const all = await post('/question', { filter: [], pageindex: 1, pagesize: 10 });
    expect(names(all)).toEqual(['Shapes one', 'Shapes two', 'Add pears', 'Add apples']);
    expect(all.body.data).toMatchObject({ total: 4, pageindex: 1, pagesize: 10 });
    expect(
      Array.isArray(all.body.data.data[0].questionoptions) && typeof all.body.data.data[0].questionheading === 'object',
    ).toBe(true);
    expect(names(await post('/question', { pageindex: 2, pagesize: 3 }))).toEqual(['Add apples']);
    // The template filter is exact: "1" is not 12 (the question page sends the same entry twice).
    expect(
      names(
        await post('/question', {
          filter: [
            { key: 'templatetypeid', value: '1' },
            { key: 'templatetypeid', value: '1' },
          ],
        }),
      ),
    ).toEqual(['Shapes two', 'Add apples']);
    expect(
      names(
        await post('/question', {
          filter: [
            { key: 'questiontags', value: 'fruit' },
            { key: 'questionidentifier', value: 'add' },
          ],
        }),
      ),
    ).toEqual(['Add pears']);
    expect(names(await post('/question', { filter: [{ key: 'questiontags', value: 'algebra,fruit' }] }))).toEqual([
      'Add pears',
    ]);
    expect(names(await post('/question', { filter: [{ key: 'questionstatus', value: 'false' }] }))).toEqual([
      'Shapes one',
    ]);
    expect(names(await post('/question', { filter: [{ key: 'questionstatus', value: 'maybe' }] }))).toEqual([]);
    expect(names(await post('/question', { filter: [{ key: 'questionidentifier', value: '' }] }))).toHaveLength(4);
    // Search: any filter, any comma part.
    expect(
      names(
        await post('/question/search', {
          filter: [
            { key: 'questionidentifier', value: 'apples' },
            { key: 'questiontags', value: 'geometry' },
          ],
        }),
      ),
    ).toEqual(['Shapes one', 'Shapes two', 'Add apples']);
    expect(
      names(await post('/question/search', { filter: [{ key: 'questiontags', value: 'algebra,geometry' }] })),
    ).toEqual(['Shapes one', 'Shapes two', 'Add pears', 'Add apples']);
    expect(
      names(
        await post('/question/search', {
          filter: [
            { key: 'templatetypeid', value: '12' },
            { key: 'questionstatus', value: 'false' },
          ],
          pageindex: 1,
          pagesize: 1,
        }),
      ),
    ).toEqual(['Shapes one']);
    // Unknown body keys are allowed on the lists, as in the original.
    expect((await post('/question', { somethingelse: 1 })).status).toBe(200);
    // A deleted question leaves the lists.
    await del(`/question/${ids['Add pears']}`);
    expect(names(await post('/question', {}))).not.toContain('Add pears');
  });

  it('tags: GET adds once, DELETE removes; activate, ' +
      'deactivate and rename bump lastupdated; DELETE is soft', async () => {
    const questionid = await createQuestion({ ...sample(3, 'Tagged one'), questiontags: [] });
    const stamp = async () => (await db()('questions').where({ questionid }).first()).lastupdated as string;
    const t0 = await stamp();
    await new Promise((r) => setTimeout(r, 5));
    expect((await get(`/question/tag/${questionid}/algebra`)).body).toEqual({ error: false, data: true });
    expect((await get(`/question/tag/${questionid}/algebra`)).body).toEqual({ error: false, data: true });
    expect((await get(`/question/tag/${questionid}/shapes`)).status).toBe(200);
    expect((await db()('questions').where({ questionid }).first()).questiontags).toEqual(['algebra', 'shapes']);
    expect((await del(`/question/tag/${questionid}/algebra`)).body).toEqual({ error: false, data: true });
    expect((await del(`/question/tag/${questionid}/missing`)).body).toEqual({ error: false, data: true });
    expect((await get(`/question/${questionid}`)).body.data.questiontags).toEqual(['shapes']);
    const t1 = await stamp();
    expect(t1 > t0).toBe(true);

    await new Promise((r) => setTimeout(r, 5));
    expect((await put(`/question/deactivate/${questionid}`, UI_OPTIONS)).body).toEqual({ error: false, data: true });
    expect((await db()('questions').where({ questionid }).first()).questionstatus).toBe(false);
    const t2 = await stamp();
    expect(t2 > t1).toBe(true);
    expect((await put(`/question/activate/${questionid}`, UI_OPTIONS)).body).toEqual({ error: false, data: true });
    expect((await db()('questions').where({ questionid }).first()).questionstatus).toBe(true);
    expect((await put(`/question/${questionid}/questionidentifier/Tagged%20two`, UI_OPTIONS)).body).toEqual({
      error: false,
      data: true,
    });
    expect(await db()('questions').where({ questionid }).first()).toMatchObject({
      questionidentifier: 'Tagged two',
      updated_by: c.adminId,
    });

    expect((await del(`/question/${questionid}`)).body).toEqual({ error: false, data: true });
    expect(await db()('questions').where({ questionid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: c.adminId,
      deleted_at: expect.any(String),
    });
    await expectRefused(
      db(),
      ['questions'],
      [
        ['get deleted', get(`/question/${questionid}`), 400, 'Invalid question id'],
        ['update deleted', put(`/question/${questionid}`, sample(1, 'Tagged three')), 400, 'Invalid question id'],
        ['tag deleted', get(`/question/tag/${questionid}/algebra`), 400, 'Invalid question id'],
        ['untag deleted', del(`/question/tag/${questionid}/shapes`), 400, 'Invalid question id'],
        ['activate deleted', put(`/question/activate/${questionid}`, UI_OPTIONS), 400, 'Invalid question id'],
        ['deactivate deleted', put(`/question/deactivate/${questionid}`, UI_OPTIONS), 400, 'Invalid question id'],
        [
          'rename deleted',
          put(`/question/${questionid}/questionidentifier/Tagged%20four`, UI_OPTIONS),
          400,
          'Invalid question id',
        ],
        ['delete again', del(`/question/${questionid}`), 400, 'Invalid question id'],
      ],
    );
    // Its identifier is free again.
    await createQuestion(sample(3, 'Tagged two'));
  });

  it('refuses bad bodies, taken identifiers and unknown ids with the contract words, writing nothing', async () => {
    const a = await createQuestion(sample(1, 'Rule one'));
    await createQuestion(sample(1, 'Rule two'));
    const ok = sample(2, 'Rule three');
    await expectRefused(
      db(),
      ['questions'],
      [
        [
          'no identifier',
          post('/question/create', { ...ok, questionidentifier: undefined }),
          400,
          '"Question identifier" is required',
        ],
        [
          'short identifier',
          post('/question/create', { ...ok, questionidentifier: 'ab' }),
          400,
          '"Question identifier" length must be at least 3 characters long',
        ],
        [
          'long identifier',
          post('/question/create', { ...ok, questionidentifier: 'x'.repeat(101) }),
          400,
          '"Question identifier" length must be less than or equal to 100 characters long',
        ],
        [
          'blank identifier',
          post('/question/create', { ...ok, questionidentifier: '     ' }),
          400,
          'Question identifier not allowed',
        ],
        [
          'no template',
          post('/question/create', { ...ok, templatetypeid: undefined }),
          400,
          '"templatetypeid" is required',
        ],
        [
          'template 0',
          post('/question/create', { ...ok, templatetypeid: 0 }),
          400,
          '"templatetypeid" must be greater than or equal to 1',
        ],
        [
          'template 25',
          post('/question/create', { ...ok, templatetypeid: 25 }),
          400,
          '"templatetypeid" must be less than or equal to 24',
        ],
        [
          'template word',
          post('/question/create', { ...ok, templatetypeid: 'mcq' }),
          400,
          '"templatetypeid" must be a number',
        ],
        [
          'options not a list',
          post('/question/create', { ...ok, questionoptions: 'a,b' }),
          400,
          '"questionoptions" must be an array',
        ],
        [
          'option not an object',
          post('/question/create', { ...ok, questionoptions: [1] }),
          400,
          '"questionoptions.0" must be an object',
        ],
        [
          'option flag',
          post('/question/create', { ...ok, questionoptions: [{ questionoptioniscorrect: 'yes' }] }),
          400,
          '"questionoptions.0.questionoptioniscorrect" must be a boolean',
        ],
        [
          'heading text',
          post('/question/create', { ...ok, questionheading: 'Read' }),
          400,
          '"questionheading" must be an object',
        ],
        ['file', post('/question/create', { ...ok, questionfile: 'a.mp3' }), 400, '"questionfile" must be an object'],
        ['tags', post('/question/create', { ...ok, questiontags: 'algebra' }), 400, '"questiontags" must be an array'],
        ['tag', post('/question/create', { ...ok, questiontags: [7] }), 400, '"questiontags.0" must be a string'],
        [
          'correct value',
          post('/question/create', { ...ok, questioncorrectvalue: 1.5 }),
          400,
          '"questioncorrectvalue" must be an integer',
        ],
        [
          'taken',
          post('/question/create', { ...ok, questionidentifier: 'Rule two' }),
          400,
          'Question identifier already exists',
        ],
        [
          'taken on update',
          put(`/question/${a}`, { ...ok, questionidentifier: 'Rule two' }),
          400,
          'Question identifier already exists',
        ],
        [
          'taken on rename',
          put(`/question/${a}/questionidentifier/Rule%20two`, UI_OPTIONS),
          400,
          'Question identifier already exists',
        ],
        [
          'short rename',
          put(`/question/${a}/questionidentifier/ab`, UI_OPTIONS),
          400,
          '"Question identifier" length must be at least 3 characters long',
        ],
        [
          'blank rename',
          put(`/question/${a}/questionidentifier/%20%20%20%20`, UI_OPTIONS),
          400,
          'Question identifier not allowed',
        ],
        ['unknown get', get(`/question/${uuid()}`), 400, 'Invalid question id'],
        ['unknown update', put(`/question/${uuid()}`, ok), 400, 'Invalid question id'],
        ['unknown delete', del(`/question/${uuid()}`), 400, 'Invalid question id'],
        ['unknown tag', get(`/question/tag/${uuid()}/algebra`), 400, 'Invalid question id'],
        ['unknown activate', put(`/question/activate/${uuid()}`, UI_OPTIONS), 400, 'Invalid question id'],
        [
          'unknown rename',
          put(`/question/${uuid()}/questionidentifier/Fine%20name`, UI_OPTIONS),
          400,
          'Invalid question id',
        ],
        [
          'long tag',
          get(`/question/tag/${a}/${'t'.repeat(101)}`),
          400,
          '"Tag" length must be less than or equal to 100 characters long',
        ],
        [
          'bad filter key',
          post('/question', { filter: [{ key: 'questiontext', value: 'x' }] }),
          400,
          /"filter.0.key" must be one of/,
        ],
        [
          'bad page size',
          post('/question/search', { pagesize: 500 }),
          400,
          '"pagesize" must be less than or equal to 200',
        ],
      ],
    );
  });

  it('answers attacks without touching the table', async () => {
    const a = await createQuestion(sample(1, 'Attack one'));
    await expectRefused(
      db(),
      ['questions'],
      [
        [
          'oversize create',
          post('/question/create', { ...sample(1, 'Huge one'), ...oversize() }),
          413,
          'Request body is too large',
        ],
        [
          'oversize update',
          put(`/question/${a}`, { ...sample(1, 'Huge one'), ...oversize() }),
          413,
          'Request body is too large',
        ],
        ['malformed get', get('/question/abc'), 400, '"Question ID" must be a valid GUID'],
        ['malformed delete', del('/question/%27%20OR%201=1--'), 400, '"Question ID" must be a valid GUID'],
        ['malformed tag', get('/question/tag/nope/algebra'), 400, '"Question ID" must be a valid GUID'],
        [
          'malformed rename',
          put('/question/nope/questionidentifier/Fine%20name', UI_OPTIONS),
          400,
          '"Question ID" must be a valid GUID',
        ],
        ['bad escape', get('/question/%E0%A4%A'), 400, /Failed to decode param/],
        ['refresh token', post('/question/create', sample(1, 'Refresh one'), c.refresh), 401, 'Unauthorized'],
        ['teacher creates', post('/question/create', sample(1, 'Teacher one'), c.teacher), 403, 'Forbidden resource'],
        ['teacher tags', get(`/question/tag/${a}/algebra`, c.teacher), 403, 'Forbidden resource'],
        ['user lists', post('/question', {}, c.user), 403, 'Forbidden resource'],
      ],
    );
    expect((await post('/question/search', {}, c.teacher)).status).toBe(200);
  });

  it.runIf(onPostgres())("a create that races past the check ends as the rule's 400 (PostgreSQL)", async () => {
    const res = await raceWithUncommitted(
      db(),
      'questions',
      { questionid: uuid(), questionidentifier: 'Racing one', templatetypeid: 1, isdeleted: false },
      () => post('/question/create', sample(1, 'Racing one')),
    );
    expect([res.status, res.body.errormessage]).toEqual([400, 'Question identifier already exists']);
    expect(await db()('questions').where({ questionidentifier: 'Racing one' }).count({ n: '*' }).first()).toMatchObject(
      { n: 1 },
    );
  });
});
