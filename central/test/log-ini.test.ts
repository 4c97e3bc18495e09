import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLogIni, type LogBatch } from '@lms/shared';
import { readLogIniRows } from '../src/areas/log/log-ini';

// The import's byte-scanning log.ini reader must give exactly what the shared token-stream reader gives:
// the same batches in the same order, the same summary, and a refusal where the shared reader refuses.

async function run(reader: typeof readLogIniRows, text: string | Buffer, chunk: number, batchSize = 2) {
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

const full = JSON.stringify({
  version: { nested: [1, { deep: ['x', null, true] }] },
  log: {
    extra: 'ignored "quoted" {not a row}',
    result: [
      {
        studentprogressid: sid(1), studentid: sid(9), ispass: 1, starttime: '2026-08-20 05:12:19', endtime: null, progresstype: '2', resultpercentage: '66.5',
        marks: 2, points: 20, scores: 0, fullpoints: 30, note: 'brace } bracket ] quote \\" backslash \\\\ unicode é 😀',
        studentprogressquestions: [
          { studentprogressquestionid: sid(11), studentprogressid: 'other', tries: 1, iscorrect: 'true', referencequestionid: sid(21) },
          { studentprogressquestionid: sid(12), tries: 0, iscorrect: 0, referencequestionid: sid(22) },
        ],
      },
      { studentprogressid: sid(2), studentid: sid(9), ispass: false, starttime: 1787375539000, progresstype: 3 },
      { studentprogressid: sid(3), studentid: sid(9), ispass: true, starttime: '2026-08-21T00:00:00.000Z', progresstype: 1, studentprogressquestions: [] },
    ],
    progress: {
      studentactives: [{ studentactiveid: sid(31), studentid: sid(9), referenceid: sid(41), referencetype: true, created_at: '2026-08-20T05:00:00.000Z' }],
      studentlearningprogress: [],
      studentgradesprogress: [{ studentgradeprogressid: sid(32), studentid: sid(9), completed: 0, progress: '12.5' }],
      studentlevelsprogress: [], studentlessonsprogress: [], studentpoints: [],
      studentappusages: [{ studentappusageid: sid(33), schooluserid: sid(8), time_spent: 600 }, { studentappusageid: sid(34), schooluserid: sid(8), time_spent: 6e2 }],
      unknowncollection: [{ a: 1 }],
    },
    access: [{ rpiuseraccessid: 'acc-1', userid: sid(8), logintime: '2026-08-20T04:59:00.000Z', timespent: '0', status: 1, ipaddress: '::1' }],
  },
}, null, 1);

describe('the log.ini reader of PUT /log/import', () => {
  it.each([1, 3, 7, 64, 100_000])('gives the shared reader\'s batches and summary with %i-byte chunks', async (chunk) => {
    const expected = await run(readLogIni, full, 100_000);
    expect(expected.summary?.counts.studentprogressquestions).toBe(2);
    expect(await run(readLogIniRows, full, chunk)).toEqual(expected);
  });

  it('reads a UTF-8 BOM, [] , {}, a document without log, and one that lacks a part', async () => {
    const canonical = JSON.stringify({ log: { result: [{
      studentprogressid: sid(5), studentid: sid(9), ispass: true, studentprogressreferenceid: sid(6), starttime: '2026-08-20T05:12:19.000Z',
      endtime: '2026-02-30T05:12:19.000Z', progresstype: 2, resultpercentage: 80.5, marks: 4, points: 40, scores: 2.6, fullpoints: 50,
      studentprogressquestions: [{ studentprogressquestionid: ` ${sid(7)} `, studentprogressid: sid(5), tries: 1, iscorrect: false, referencequestionid: sid(8) }],
    }], progress: {}, access: [{ rpiuseraccessid: 'a', userid: sid(8), logintime: '2026-08-20T04:59:00.000Z', timespent: 12.5, status: 1, ipaddress: null }] } });
    for (const text of [canonical, '\uFEFF' + full, '[]', '{}', ' {"log":{}} ', '{"other":[{"a":1}]}', '{"log":{"result":[],"progress":{}}}', '[{"log":1}]']) {
      const mine = await run(readLogIniRows, text, 5);
      expect(mine).toEqual(await run(readLogIni, text, 100_000));
      expect(mine.error).toBeUndefined();
    }
    expect((await run(readLogIniRows, '{"log":{"result":[],"progress":{}}}', 5)).summary?.present).toEqual({ result: true, progress: true, access: false });
  });

  it('refuses what the shared reader refuses', async () => {
    const bad = [
      '', '{', '{"log":{"result":[{"studentprogressid":"a"', '{"log":{"result":[{"studentprogressid":"a"}]}', '{"log":[]}', '{"log":{"result":{}}}',
      '{"log":{"progress":[]}}', '{"log":{"progress":{"studentpoints":{}}}}', '{"log":{"result":[1]}}', '{"log":{"access":["x"]}}', '{"log":{"result":[[]]}}',
      '{"log":{"result":[{"studentprogressid":"a",}]}}', '{"log" {"result":[]}}', '{"log":{"result":[]},}', '{"a":tru}', '{} {}',
      '{"log":{"result":[{"studentid":"x"}]}}', '{"log":{"result":[{"studentprogressid":"a","studentprogressquestions":{}}]}}',
      '{"log":{"access":[{"rpiuseraccessid":"a","logintime":"not a date"}]}}',
    ];
    for (const text of bad) {
      const theirs = await run(readLogIni, text, 100_000);
      const mine = await run(readLogIniRows, text, 3);
      expect({ text, refused: !!mine.error, code: mine.code }).toEqual({ text, refused: !!theirs.error, code: theirs.code });
      expect(mine.error).toBeTruthy();
    }
  });
});
