import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isZipError, readLogIni, readLogZip, startLogReader, type LogBatch, type LogZipHandlers } from '../src';
import { rawZip } from './raw-zip';

// log.ini arrives in chunks cut anywhere (inside a string, an escape, a number, a multi-byte character):
// the reader must give the same batches and summary whatever the cut, normalise what classroom servers
// really write, and refuse what is not a log.

async function run(reader: typeof readLogIni, text: string | Buffer, chunk: number, batchSize = 2) {
  const buf = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const parts: Buffer[] = [];
  for (let i = 0; i < buf.length; i += chunk) parts.push(buf.subarray(i, i + chunk));
  const batches: LogBatch[] = [];
  const gen = reader(Readable.from(parts), { batchSize });
  try {
    for (;;) {
      const next = await gen.next();
      if (next.done) return { batches, summary: next.value };
      batches.push(next.value);
    }
  } catch (err) {
    return { error: (err as Error).message, code: (err as { code?: string }).code };
  }
}

const sid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const full = JSON.stringify(
  {
    version: { nested: [1, { deep: ['x', null, true] }] },
    log: {
      extra: 'ignored "quoted" {not a row}',
      result: [
        {
          studentprogressid: sid(1),
          studentid: sid(9),
          ispass: 1,
          starttime: '2026-08-20 05:12:19',
          endtime: null,
          progresstype: '2',
          resultpercentage: '66.5',
          marks: 2,
          points: 20,
          scores: 0,
          fullpoints: 30,
          note: 'brace } bracket ] quote \\" backslash \\\\ unicode é 😀',
          studentprogressquestions: [
            {
              studentprogressquestionid: sid(11),
              studentprogressid: 'other',
              tries: 1,
              iscorrect: 'true',
              referencequestionid: sid(21),
            },
            { studentprogressquestionid: sid(12), tries: 0, iscorrect: 0, referencequestionid: sid(22) },
          ],
        },
        { studentprogressid: sid(2), studentid: sid(9), ispass: false, starttime: 1787375539000, progresstype: 3 },
        {
          studentprogressid: sid(3),
          studentid: sid(9),
          ispass: true,
          starttime: '2026-08-21T00:00:00.000Z',
          progresstype: 1,
          studentprogressquestions: [],
        },
      ],
      progress: {
        studentactives: [
          {
            studentactiveid: sid(31),
            studentid: sid(9),
            referenceid: sid(41),
            referencetype: true,
            created_at: '2026-08-20T05:00:00.000Z',
          },
        ],
        studentlearningprogress: [],
        studentgradesprogress: [{ studentgradeprogressid: sid(32), studentid: sid(9), completed: 0, progress: '12.5' }],
        studentlevelsprogress: [],
        studentlessonsprogress: [],
        studentpoints: [],
        studentappusages: [
          { studentappusageid: sid(33), schooluserid: sid(8), time_spent: 600 },
          { studentappusageid: sid(34), schooluserid: sid(8), time_spent: 6e2 },
        ],
        unknowncollection: [{ a: 1 }],
      },
      access: [
        {
          rpiuseraccessid: 'acc-1',
          userid: sid(8),
          logintime: '2026-08-20T04:59:00.000Z',
          timespent: '0',
          status: 1,
          ipaddress: '::1',
        },
      ],
    },
  },
  null,
  1,
);

describe('the log.ini reader', () => {
  it.each([1, 3, 7, 64, 100_000])('gives the same batches and summary with %i-byte chunks', async (chunk) => {
    const whole = await run(readLogIni, full, 1 << 20);
    expect(await run(readLogIni, full, chunk)).toEqual(whole);
  });

  it('normalises what classroom servers write and keeps questions with their result', async () => {
    const { batches, summary, error } = await run(readLogIni, full, 5);
    expect(error).toBeUndefined();
    expect(summary).toEqual({
      shape: 'log',
      present: { result: true, progress: true, access: true },
      counts: {
        studentprogress: 3,
        studentprogressquestions: 2,
        rpiuseraccess: 1,
        studentactives: 1,
        studentlearningsprogress: 0,
        studentgradesprogress: 1,
        studentlevelsprogress: 0,
        studentlessonsprogress: 0,
        studentpoints: 0,
        studentappusages: 2,
      },
    });
    expect(batches.map((b) => [b.table, b.rows.length])).toEqual([
      ['studentprogress', 2], ['studentprogressquestions', 2], ['studentprogress', 1],
      ['studentactives', 1], ['studentgradesprogress', 1], ['studentappusages', 2], ['rpiuseraccess', 1],
    ]);
    const first = batches[0].rows[0] as Record<string, unknown>;
    expect(first).toMatchObject({
      studentprogressid: sid(1),
      ispass: true,
      progresstype: 2,
      resultpercentage: 66.5,
      starttime: '2026-08-20T05:12:19.000Z',
      endtime: null,
    });
    expect(first).not.toHaveProperty('note');
    expect(first).not.toHaveProperty('studentprogressquestions');
    const second = batches[0].rows[1] as Record<string, unknown>;
    expect(second).toMatchObject({ ispass: false, starttime: new Date(1787375539000).toISOString() });
    expect(batches[1].rows).toEqual([
      expect.objectContaining({
        studentprogressquestionid: sid(11),
        studentprogressid: sid(1),
        tries: 1,
        iscorrect: true,
      }),
      expect.objectContaining({
        studentprogressquestionid: sid(12),
        studentprogressid: sid(1),
        tries: 0,
        iscorrect: false,
      }),
    ]);
    expect(batches[4].rows[0]).toMatchObject({ completed: false, progress: 12.5 });
    expect(batches[6].rows[0]).toMatchObject({ rpiuseraccessid: 'acc-1', timespent: 0, status: 1 });
  });

  it('reads a UTF-8 BOM, [], {}, a document without log, and one that lacks a part', async () => {
    expect((await run(readLogIni, '\uFEFF' + full, 5)).summary?.counts.studentprogress).toBe(3);
    for (const text of ['[]', '{}', ' {"log":{}} ', '{"other":[{"a":1}]}', '[{"log":1}]']) {
      const r = await run(readLogIni, text, 5);
      expect({ text, error: r.error, batches: r.batches, shape: r.summary?.shape }).toEqual({
        text,
        error: undefined,
        batches: [],
        shape: 'empty',
      });
    }
    expect((await run(readLogIni, '{"log":{"result":[],"progress":{}}}', 5)).summary?.present).toEqual({
      result: true,
      progress: true,
      access: false,
    });
  });

  it('refuses what is not a log', async () => {
    const bad = [
      '',
      '{',
      '{"log":{"result":[{"studentprogressid":"a"',
      '{"log":{"result":[{"studentprogressid":"a"}]}',
      '{"log":[]}',
      '{"log":{"result":{}}}',
      '{"log":{"progress":[]}}',
      '{"log":{"progress":{"studentpoints":{}}}}',
      '{"log":{"result":[1]}}',
      '{"log":{"access":["x"]}}',
      '{"log":{"result":[[]]}}',
      '{"log":{"result":[{"studentprogressid":"a",}]}}',
      '{"log" {"result":[]}}',
      '{"log":{"result":[]},}',
      '{"a":tru}',
      '{} {}',
      '{"log":{"result":[{"studentid":"x"}]}}',
      '{"log":{"result":[{"studentprogressid":"a","studentprogressquestions":{}}]}}',
      '{"log":{"access":[{"rpiuseraccessid":"a","logintime":"not a date"}]}}',
    ];
    for (const text of bad) {
      const r = await run(readLogIni, text, 3);
      expect({ text, code: r.code }).toEqual({ text, code: 'bad_document' });
    }
  });
});

describe('reading a log ZIP on a worker thread', () => {
  const built = path.resolve(__dirname, '..', 'dist', 'zip', 'log-worker.js');
  let dir: string;
  beforeAll(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'log-thread-')); });
  afterAll(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  const zipOf = async (name: string, entries: Parameters<typeof rawZip>[0]) => {
    const file = path.join(dir, name);
    await fsp.writeFile(file, rawZip(entries));
    return file;
  };
  const collect = async (read: (h: LogZipHandlers) => Promise<unknown>) => {
    const batches: LogBatch[] = [];
    const files: unknown[] = [];
    try {
      const summary = await read({
        batchSize: 2,
        onBatch: (b) => {
          batches.push(b);
        },
        onLogFile: (f) => {
          files.push(f);
        },
      });
      return { batches, files, summary };
    } catch (err) {
      return {
        batches,
        files,
        error: (err as Error).message,
        code: (err as { code?: string }).code,
        zip: isZipError(err),
      };
    }
  };

  it('runs the compiled worker (the build is part of the test command)', () => {
    expect(fs.existsSync(built)).toBe(true);
  });

  it('hands over the same batches, log files and summary as reading on this thread', async () => {
    const file = await zipOf('full.zip', [
      { name: 'log.ini', data: Buffer.from(full), deflate: true },
      { name: 'RPI-API-info-2026-08-20.log', data: Buffer.from('a line\n') },
    ]);
    const here = await collect((h) => readLogZip({ path: file }, h));
    const there = await collect((h) => startLogReader().read(file, h));
    expect(here.batches.length).toBeGreaterThan(4);
    expect(there).toEqual(here);
  });

  it('refuses what the reader refuses, with the same ZIP error', async () => {
    const file = await zipOf('bad.zip', [
      { name: 'log.ini', data: Buffer.from(full), deflate: true },
      { name: 'notes.txt', data: Buffer.from('x') },
    ]);
    const here = await collect((h) => readLogZip({ path: file }, h));
    const there = await collect((h) => startLogReader().read(file, h));
    expect(there).toMatchObject({ zip: true, code: 'bad_document', error: 'There is invalid file inside zip-file' });
    expect(there).toEqual(here);
    const empty = await zipOf('empty.zip', []);
    expect(await collect((h) => startLogReader().read(empty, h))).toMatchObject({ zip: true, code: 'empty' });
  });

  it('reads with a reader started before its file was written, once; an unused reader can be stopped', async () => {
    const reader = startLogReader();
    await new Promise((r) => setTimeout(r, 50)); // the upload arriving
    const file = await zipOf('late.zip', [{ name: 'log.ini', data: Buffer.from(full), deflate: true }]);
    const here = await collect((h) => readLogZip({ path: file }, h));
    expect(await collect((h) => reader.read(file, h))).toEqual(here);
    await expect(reader.read(file)).rejects.toThrow('a log reader reads one file');
    const unused = startLogReader();
    unused.dispose();
    unused.dispose();
  });

  it('stops reading when a batch handler fails, and passes that failure on', async () => {
    const file = await zipOf('stop.zip', [{ name: 'log.ini', data: Buffer.from(full), deflate: true }]);
    let calls = 0;
    const failure = startLogReader().read(file, {
      batchSize: 1,
      onBatch: () => {
        calls += 1;
        throw new Error('database gone');
      },
    });
    await expect(failure).rejects.toThrow('database gone');
    expect(calls).toBe(1);
  });
});
