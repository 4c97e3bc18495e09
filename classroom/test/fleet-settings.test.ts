import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '@lms/shared';
import { DailyLogFiles, dailyLogName, formatLine } from '../src/logging';
import { serverSettings } from '../src/fleet/settings';
import { scrubLine, tailOfLogs } from '../src/fleet/diagnostics';

// What a box does with the settings central sets that the server applies itself (the log level at run time,
// the daily files' retention), and how a diagnostics report's log lines lose learners' names.

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-fleet-settings-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('settings the server applies', () => {
  it('raises and lowers the log level at run time, and prunes the log files to central\'s retention', () => {
    const seen: string[] = [];
    const out = new Writable({ write(chunk: Buffer, _e, done) {
      seen.push(chunk.toString());
      done();
    } });
    const dir = tmp();
    const now = new Date();
    const old = new Date(now.getTime() - 40 * 86_400_000);
    fs.writeFileSync(path.join(dir, dailyLogName('info', old)), '{}\n');
    const files = new DailyLogFiles({ dir });
    const logger = createLogger({ name: 'box', level: 'info', streams: [{ level: 'info', stream: files }] }, out);
    const apply = serverSettings(logger, files, 'info');

    logger.debug('before');
    apply({ loglevel: 'debug', logretentiondays: 30 });
    logger.debug('while debugging');
    apply({});
    logger.debug('after');
    expect(seen.filter((l) => l.includes('"msg":"before"') || l.includes('"msg":"after"'))).toEqual([]);
    expect(seen.some((l) => l.includes('"msg":"while debugging"'))).toBe(true);
    // The 40-day-old file went when central set 30 days; the six-month window keeps it otherwise.
    expect(fs.existsSync(path.join(dir, dailyLogName('info', old)))).toBe(false);
    files.end();
  });
});

describe('log lines of a diagnostics report', () => {
  const names = /(?<![\p{L}\p{N}])(?:Kwabena|Mensah|kwame)(?![\p{L}\p{N}])/giu;

  it('keep what the server writes and lose names, ids and query strings', () => {
    const line = formatLine({ level: 40, time: Date.now(), msg: 'KWAME signed in; Kwabena\'s lesson saved',
      reqId: 'abc', userid: '0b7c1f9e-2a8a-4a39-9c51-3c0e0a8e7b10', studentfirstname: 'Kwabena', count: 3,
      req: { method: 'GET', url: '/teacher/stats/student/0b7c1f9e-2a8a-4a39-9c51-3c0e0a8e7b10?name=kwame',
        client: '10.0.0.7' }, res: { statusCode: 404 } });
    const clean = JSON.parse(scrubLine(line, names)!);
    expect(clean).toEqual({ level: 'warn', message: "[name] signed in; [name]'s lesson saved",
      metadata: { reqId: 'abc', count: 3, application: 'RPI-API', timestamp: expect.any(String),
        req: { method: 'GET', url: '/teacher/stats/student/:id' }, res: { statusCode: 404 } } });
    // A name inside another word is not a name (kwameh stays), and a line that is not JSON is left out.
    expect(scrubLine(formatLine({ level: 30, msg: 'kwameh' }), names)).toContain('kwameh');
    expect(scrubLine('kwame typed this', names)).toBeUndefined();
  });

  it('are the tail of the newest files, whole lines, error files kept first when space runs out', () => {
    const dir = tmp();
    const day = new Date();
    const info = Array.from({ length: 100 }, (_, i) => formatLine({ level: 30, time: day.getTime() + i,
      msg: `info ${i}` })).join('');
    fs.writeFileSync(path.join(dir, dailyLogName('info', day)), info);
    fs.writeFileSync(path.join(dir, dailyLogName('error', day)), formatLine({ level: 50, time: day.getTime(),
      msg: 'the one error' }));
    const lines = tailOfLogs(dir, 1000);
    expect(lines.some((l) => l.includes('the one error'))).toBe(true);
    expect(lines.every((l) => JSON.parse(l))).toBeTruthy();
    expect(lines.some((l) => l.includes('"info 99"'))).toBe(true);
    expect(lines.some((l) => l.includes('"info 0"'))).toBe(false);
    expect(lines.join('\n').length).toBeLessThanOrEqual(1000);
  });
});
