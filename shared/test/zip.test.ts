import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { rawZip } from './raw-zip';
import {
  CONTENT_KEY_LIST,
  ZipError,
  logWindowStart,
  openZipBuffer,
  parseContentPackage,
  parseStudentsPackage,
  parseTeachersPackage,
  readLogZip,
  readPackageJson,
  streamToBuffer,
  writeContentZip,
  writeLogZip,
  writeLogZipFromDocument,
  writeStudentsZip,
  writeTeachersZip,
  type LogBatch,
} from '../src';

async function names(buffer: Buffer, limits = {}): Promise<string[]> {
  const zip = await openZipBuffer(buffer, limits);
  try {
    const out: string[] = [];
    for await (const e of zip.entries()) {
      await e.readBuffer();
      out.push(e.name);
    }
    return out;
  } finally {
    zip.close();
  }
}

async function refusal(p: Promise<unknown>): Promise<ZipError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ZipError);
  return err as ZipError;
}

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('safe ZIP reader', () => {
  it('reads the entries of an ordinary ZIP', async () => {
    const zip = rawZip([
      { name: 'a.txt', data: Buffer.from('hello') },
      { name: 'dir/b.txt', data: Buffer.from('x'.repeat(1000)), deflate: true },
    ]);
    expect(await names(zip)).toEqual(['a.txt', 'dir/b.txt']);
  });

  it.each([
    ['../evil.txt', '..'],
    ['a/../../evil.txt', '..'],
    ['/etc/passwd', 'absolute'],
    ['C:/Windows/evil.txt', 'absolute'],
    ['c:evil.txt', 'absolute'],
    ['dir\\evil.txt', 'backslash'],
  ])('refuses the entry name %s', async (name) => {
    const err = await refusal(
      names(
        rawZip([
          { name: 'ok.txt', data: Buffer.from('1') },
          { name, data: Buffer.from('2') },
        ]),
      ),
    );
    expect(err.code).toBe('bad_name');
    expect(err.status).toBe(400);
  });

  it('refuses more entries than allowed', async () => {
    const zip = rawZip([1, 2, 3].map((n) => ({ name: `f${n}.txt`, data: Buffer.from('x') })));
    expect((await refusal(names(zip, { maxEntries: 2 }))).code).toBe('too_many_entries');
    expect(await names(zip, { maxEntries: 3 })).toHaveLength(3);
  });

  it('refuses an entry larger than the per-entry limit, declared or real', async () => {
    const zip = rawZip([{ name: 'big.txt', data: Buffer.alloc(5000, 65), deflate: true }]);
    const err = await refusal(names(zip, { maxEntryBytes: 4000 }));
    expect(err.code).toBe('entry_too_large');
    expect(err.status).toBe(413);
  });

  it('refuses when the entries together exceed the total limit', async () => {
    const zip = rawZip([1, 2, 3].map((n) => ({ name: `f${n}.txt`, data: Buffer.alloc(3000, 66), deflate: true })));
    expect((await refusal(names(zip, { maxTotalBytes: 7000 }))).code).toBe('total_too_large');
  });

  it('refuses a suspicious compression ratio (a ZIP bomb) before inflating it', async () => {
    const zip = rawZip([{ name: 'bomb.txt', data: Buffer.alloc(4 * 1024 * 1024, 0), deflate: true }]);
    const err = await refusal(names(zip, { ratioFloorBytes: 1024 * 1024, maxRatio: 100 }));
    expect(err.code).toBe('ratio');
  });

  it('refuses a header that understates or overstates the real size, stored or deflated', async () => {
    for (const deflate of [true, false]) {
      for (const declaredSize of [10, 4999, 5001]) {
        const zip = rawZip([{ name: 'lie.txt', data: Buffer.alloc(5000, 67), deflate, declaredSize }]);
        expect((await refusal(names(zip))).code, `deflate ${deflate}, declared ${declaredSize}`).toBe('corrupt');
      }
    }
    // The true size passes.
    expect(
      await names(rawZip([{ name: 'true.txt', data: Buffer.alloc(5000, 67), deflate: true, declaredSize: 5000 }])),
    ).toEqual(['true.txt']);
  });

  it('reads entries with traditional PKWARE encryption given the password, and refuses them without it', async () => {
    const text = JSON.stringify({ log: { result: [], progress: {}, access: [] } }).repeat(50);
    const zip = rawZip([
      { name: 'log.ini', data: Buffer.from(text), deflate: true, password: 'fixed-secret' },
      { name: 'plain.txt', data: Buffer.from('p') },
    ]);
    const read = async (password?: string) => {
      const z = await openZipBuffer(zip, { password });
      try {
        const out: string[] = [];
        for await (const e of z.entries()) out.push(await e.readText());
        return out;
      } finally {
        z.close();
      }
    };
    expect(await read('fixed-secret')).toEqual([text, 'p']);
    expect((await refusal(read())).code).toBe('encrypted');
    const wrong = await refusal(read('another'));
    expect(wrong.code).toBe('encrypted');
    expect(wrong.message).toMatch(/wrong password/);
  });

  it('refuses bytes that are not a ZIP', async () => {
    expect((await refusal(names(Buffer.from('definitely not a zip file')))).code).toBe('corrupt');
  });
});

const result = {
  studentprogressid: id(1),
  studentid: id(2),
  ispass: true,
  studentprogressreferenceid: id(3),
  starttime: '2026-08-20T05:12:19.000Z',
  endtime: '2026-08-20T05:15:00.000Z',
  progresstype: 2,
  resultpercentage: 87.5,
  marks: 7,
  points: 10,
  scores: 1,
  fullpoints: 12,
  studentprogressquestions: [
    {
      studentprogressquestionid: id(4),
      studentprogressid: id(1),
      tries: 0,
      iscorrect: true,
      referencequestionid: id(5),
    },
  ],
};
const access = {
  rpiuseraccessid: id(6),
  userid: id(7),
  logintime: '2026-08-20T05:00:00.000Z',
  logouttime: null,
  timespent: 0,
  status: 1,
  ipaddress: '10.0.0.5',
};
const active = {
  studentactiveid: id(8),
  studentid: id(2),
  referenceid: id(3),
  referencetype: 3,
  created_at: '2026-08-20T05:15:00.000Z',
};
const emptyProgress = {
  studentactives: [],
  studentlearningprogress: [],
  studentgradesprogress: [],
  studentlevelsprogress: [],
  studentlessonsprogress: [],
  studentpoints: [],
  studentappusages: [],
};

async function readAll(buffer: Buffer, batchSize?: number) {
  const batches: LogBatch[] = [];
  const summary = await readLogZip({ buffer }, { batchSize, onBatch: (b) => void batches.push(b) });
  return { batches, summary };
}

async function logIniOf(zip: Buffer): Promise<string> {
  const z = await openZipBuffer(zip);
  try {
    for await (const e of z.entries()) if (e.name === 'log.ini') return e.readText();
  } finally {
    z.close();
  }
  throw new Error('no log.ini');
}

describe('activity-log ZIP', () => {
  it('writes log.ini first, then the log files, with the spec shape and wire types', async () => {
    const zip = await streamToBuffer(
      writeLogZipFromDocument(
        {
          log: { result: [result], progress: { ...emptyProgress, studentactives: [active] }, access: [access] },
        } as never,
        [{ name: 'RPI-API-info-2026-08-20.log', content: '{"level":"info"}\n' }],
      ),
    );
    expect(await names(zip)).toEqual(['log.ini', 'RPI-API-info-2026-08-20.log']);
    const doc = JSON.parse(await logIniOf(zip));
    expect(Object.keys(doc.log)).toEqual(['result', 'progress', 'access']);
    expect(Object.keys(doc.log.progress)).toEqual(Object.keys(emptyProgress));
    expect(doc.log.result[0]).toEqual(result);
    // DECIMAL travels as a string, as the original wire carries it.
    expect(doc.log.access[0]).toEqual({ ...access, timespent: '0' });
    expect(doc.log.progress.studentactives).toEqual([active]);
  });

  it('writes [] as log.ini when there is nothing to export', async () => {
    const zip = await streamToBuffer(
      writeLogZipFromDocument({ log: { result: [], progress: emptyProgress, access: [] } } as never),
    );
    expect(await logIniOf(zip)).toBe('[]');
  });

  it('reads back what it wrote, results before their questions', async () => {
    const zip = await streamToBuffer(
      writeLogZipFromDocument(
        {
          log: { result: [result], progress: { ...emptyProgress, studentactives: [active] }, access: [access] },
        } as never,
        [{ name: 'RPI-API-error-2026-08-20.log', content: 'x' }],
      ),
    );
    const { batches, summary } = await readAll(zip);
    expect(batches.map((b) => b.table)).toEqual([
      'studentprogress',
      'studentprogressquestions',
      'studentactives',
      'rpiuseraccess',
    ]);
    const { studentprogressquestions, ...plain } = result;
    expect(batches[0].rows).toEqual([plain]);
    expect(batches[1].rows).toEqual(studentprogressquestions);
    expect(batches[3].rows).toEqual([access]);
    expect(summary.logIni).toMatchObject({ shape: 'log', present: { result: true, progress: true, access: true } });
    expect(summary.logFiles).toEqual([{ name: 'RPI-API-error-2026-08-20.log', size: 1 }]);
  });

  it('tolerates what real classroom servers write: 0/1 booleans, DECIMAL strings, epoch ms, no question rows, ' +
    'a BOM', async () => {
    const doc = {
      log: {
        result: [
          {
            ...result,
            ispass: 1,
            starttime: Date.parse('2026-08-20T05:12:19.000Z'),
            resultpercentage: '87.50',
            studentprogressquestions: undefined,
            extra: 'x',
          },
        ],
        progress: {
          studentgradesprogress: [
            {
              studentgradeprogressid: id(9),
              studentid: id(2),
              completed: 'false',
              progress: '12.5',
              lastupdated: '2026-08-20 05:00:00',
            },
          ],
        },
        access: [{ ...access, timespent: '12.75', status: '2' }],
      },
    };
    const zip = rawZip([
      {
        name: 'log.ini',
        data: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(doc))]),
        deflate: true,
      },
    ]);
    const { batches, summary } = await readAll(zip);
    expect(batches.map((b) => b.table)).toEqual(['studentprogress', 'studentgradesprogress', 'rpiuseraccess']);
    expect(batches[0].rows[0]).toMatchObject({
      ispass: true,
      starttime: '2026-08-20T05:12:19.000Z',
      resultpercentage: 87.5,
    });
    expect(batches[0].rows[0]).not.toHaveProperty('extra');
    expect(batches[1].rows[0]).toEqual({
      studentgradeprogressid: id(9),
      studentid: id(2),
      completed: false,
      progress: 12.5,
      lastupdated: '2026-08-20T05:00:00.000Z',
    });
    expect(batches[2].rows[0]).toMatchObject({ timespent: 12.75, status: 2 });
    expect(summary.logIni?.counts.studentprogressquestions).toBe(0);
  });

  it.each([['[]'], ['{}'], ['{"log":{}}']])('accepts %s as log.ini and yields nothing', async (text) => {
    const { batches, summary } = await readAll(rawZip([{ name: 'log.ini', data: Buffer.from(text) }]));
    expect(batches).toEqual([]);
    expect(summary.logIni?.shape).toBe('empty');
    expect(summary.logIni?.present).toEqual({ result: false, progress: false, access: false });
  });

  it('reports a document without access as incomplete', async () => {
    const { summary } = await readAll(
      rawZip([{ name: 'log.ini', data: Buffer.from(JSON.stringify({ log: { result: [], progress: {} } })) }]),
    );
    expect(summary.logIni?.present).toEqual({ result: true, progress: true, access: false });
  });

  it('yields batches of the requested size, so a large log is never held at once', async () => {
    const many = Array.from({ length: 7 }, (_, i) => ({
      ...result,
      studentprogressid: id(100 + i),
      studentprogressquestions: [],
    }));
    const zip = rawZip([
      {
        name: 'log.ini',
        data: Buffer.from(JSON.stringify({ log: { result: many, progress: emptyProgress, access: [] } })),
        deflate: true,
      },
    ]);
    const { batches, summary } = await readAll(zip, 3);
    expect(batches.map((b) => b.rows.length)).toEqual([3, 3, 1]);
    expect(summary.logIni?.counts.studentprogress).toBe(7);
  });

  it('refuses an empty ZIP, a foreign entry, bad JSON and malformed rows', async () => {
    expect((await refusal(readAll(rawZip([])))).message).toBe('Invalid file (Zip-file is empty)');
    expect(
      (
        await refusal(
          readAll(
            rawZip([
              { name: 'log.ini', data: Buffer.from('[]') },
              { name: 'notes.txt', data: Buffer.from('x') },
            ]),
          ),
        )
      ).message,
    ).toBe('There is invalid file inside zip-file');
    expect((await refusal(readAll(rawZip([{ name: 'log.ini', data: Buffer.from('{"log":{"result":[') }])))).code).toBe(
      'bad_document',
    );
    expect(
      (
        await refusal(
          readAll(rawZip([{ name: 'log.ini', data: Buffer.from('{"log":{"result":[{"studentid":"x"}]}}') }])),
        )
      ).message,
    ).toMatch(/studentprogressid/);
    expect(
      (await refusal(readAll(rawZip([{ name: 'log.ini', data: Buffer.from('{"log":{"access":{}}}') }])))).message,
    ).toMatch(/must be an array/);
    expect(
      (
        await refusal(
          readAll(
            rawZip([
              { name: 'log.ini', data: Buffer.from('{"log":{"access":[{"rpiuseraccessid":"a","status":"open"}]}}') },
            ]),
          ),
        )
      ).code,
    ).toBe('bad_document');
  });

  it('closes its sources when the reader goes away (a download cut short)', async () => {
    let returned = false;
    async function* rows() {
      try {
        for (let i = 0; ; i += 1) yield { ...access, rpiuseraccessid: id(1000 + i) };
      } finally {
        returned = true;
      }
    }
    const file = Readable.from([Buffer.alloc(1024)]);
    const none = () => [];
    const out = writeLogZip(
      {
        result: none(),
        access: rows(),
        progress: Object.fromEntries(Object.keys(emptyProgress).map((k) => [k, none()])) as never,
      },
      [{ name: 'RPI-API-info-x.log', stream: file }],
    );
    await new Promise((r) => out.once('data', r));
    out.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(file.destroyed).toBe(true);
    expect(returned).toBe(true);
  });

  it('computes the six-month window in calendar months', () => {
    expect(logWindowStart(new Date('2026-11-21T10:00:00.000Z')).toISOString()).toBe('2026-05-21T10:00:00.000Z');
    expect(logWindowStart(new Date('2026-08-31T00:00:00.000Z')).toISOString()).toBe('2026-02-28T00:00:00.000Z');
  });
});

const emptyContent = () =>
  Object.fromEntries(CONTENT_KEY_LIST.map((k) => [k, [] as unknown[]])) as
    Record<(typeof CONTENT_KEY_LIST)[number], unknown[]>;

describe('curriculum and roster packages', () => {
  it('writes syncfile.ini with the 19 keys in order and reads it back as classroom rows', async () => {
    const content = emptyContent();
    content.questions = [
      {
        questionid: id(1),
        questionheading: '{"text":"2+2"}',
        questionoptions: [1, 2],
        templatetypeid: '3',
        isdeleted: 0,
        created_by: 'x',
        questionobject: {},
      },
    ];
    content.schools = [{ schoolid: id(2), schoolname: 'Demo', curriculums: `["${id(3)}"]`, isdeleted: false }];
    const zip = await streamToBuffer(writeContentZip(content));
    const { name, json } = await readPackageJson({ buffer: zip });
    expect(name).toBe('syncfile.ini');
    expect(Object.keys(json as object)).toEqual(CONTENT_KEY_LIST);
    const pkg = parseContentPackage(json);
    expect(pkg.questions).toEqual([
      {
        questionid: id(1),
        questionheading: { text: '2+2' },
        questionoptions: [1, 2],
        templatetypeid: 3,
        isdeleted: false,
      },
    ]);
    expect(pkg.schools[0].curriculums).toEqual([id(3)]);
  });

  it('refuses the 16-key GET /sync format and a document that is not an object', () => {
    const old = emptyContent() as Record<string, unknown>;
    delete old.baselinequestion;
    delete old.lessonplans;
    delete old.subjects;
    expect(() => parseContentPackage(old)).toThrow(/baselinequestion/);
    expect(() => parseContentPackage([])).toThrow(ZipError);
  });

  it('reads the first entry whatever its name, and refuses an empty ZIP or bad JSON', async () => {
    expect(
      (await readPackageJson({ buffer: rawZip([{ name: 'anything.json', data: Buffer.from('[1]') }]) })).json,
    ).toEqual([1]);
    expect((await refusal(readPackageJson({ buffer: rawZip([]) }))).code).toBe('empty');
    expect((await refusal(readPackageJson({ buffer: rawZip([{ name: 'x', data: Buffer.from('{') }]) }))).code).toBe(
      'bad_document',
    );
  });

  it('round-trips the learner and teacher rosters', async () => {
    const user = {
      schooluserid: id(1),
      schoolusername: 'demo.student',
      schooluserpasswordhash: '$argon2id$x',
      schooluserrole: 4,
      schooluserstatus: 1,
      isdisabled: 0,
      isdeleted: 0,
    };
    const student = {
      studentid: id(2),
      studentfirstname: 'Ada',
      genderid: 2,
      city: 'c',
      country: 'k',
      state: 's',
      curriculumid: id(3),
      curriculumids: [id(3)],
      isactive: true,
    };
    const students = await readPackageJson({
      buffer: await streamToBuffer(writeStudentsZip({ studentusers: [{ ...user, student }] })),
    });
    expect(students.name).toBe('students.ini');
    const parsed = parseStudentsPackage(students.json);
    expect(parsed.studentusers[0].schooluser).toMatchObject({
      schooluserid: id(1),
      schooluserstatus: true,
      isdeleted: false,
    });
    expect(parsed.studentusers[0].student).toMatchObject({ ...student, schooluserid: id(1) });
    expect(() => parseStudentsPackage({ studentusers: [user] })).toThrow(/student/);

    const teachers = await readPackageJson({
      buffer: await streamToBuffer(writeTeachersZip([{ ...user, schooluserrole: 3 }])),
    });
    expect(teachers.name).toBe('teachers.ini');
    expect(parseTeachersPackage(teachers.json)).toEqual([
      { ...user, schooluserrole: 3, schooluserstatus: true, isdisabled: false, isdeleted: false },
    ]);
    expect(() => parseTeachersPackage({})).toThrow(ZipError);
  });
});
