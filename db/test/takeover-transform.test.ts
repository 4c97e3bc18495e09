import { describe, expect, it } from 'vitest';
import { convert, mysqlTimeToIso, unwrapJson } from '../src/takeover/transform';
import { parseTakeoverArgs } from '../src/takeover/command';
import { parseMysqlUrl } from '../src/takeover/source';

describe('values of the existing system as this service stores them', () => {
  it('unwraps JSON stored as a JSON string of itself, once or more, and nothing else', () => {
    expect(unwrapJson('{"a":[1,2]}')).toEqual({ json: '{"a":[1,2]}', unwrapped: false });
    expect(unwrapJson(JSON.stringify(JSON.stringify({ a: 1 })))).toEqual({ json: '{"a":1}', unwrapped: true });
    expect(unwrapJson(JSON.stringify(JSON.stringify(JSON.stringify(['x']))))).toEqual({ json: '["x"]', unwrapped: true });
    expect(unwrapJson('"just text"')).toEqual({ json: '"just text"', unwrapped: false });
    expect(unwrapJson('"[not json"')).toEqual({ json: '"[not json"', unwrapped: false });
    expect(unwrapJson('null')).toEqual({ json: 'null', unwrapped: false });
    expect(() => unwrapJson('{broken')).toThrow('JSON that does not parse');
  });

  it('reads zone-less DATETIMEs as UTC, zero dates as NULL, and refuses impossible dates', () => {
    expect(mysqlTimeToIso('2026-05-01 09:30:00')).toBe('2026-05-01T09:30:00.000Z');
    expect(mysqlTimeToIso('2026-05-01 09:30:00.123456')).toBe('2026-05-01T09:30:00.123Z');
    expect(mysqlTimeToIso('2016-03-02')).toBe('2016-03-02T00:00:00.000Z');
    expect(mysqlTimeToIso('0000-00-00 00:00:00')).toBeNull();
    expect(mysqlTimeToIso('2026-00-10 00:00:00')).toBeNull();
    expect(() => mysqlTimeToIso('2026-02-30 00:00:00')).toThrow('is not a real date');
    expect(() => mysqlTimeToIso('yesterday')).toThrow('is not a MySQL date');
  });

  it('converts only what the target column needs, and says what had to change', () => {
    const changes = new Set<string>();
    expect(convert(1, 'tinyint', 'boolean', true, changes as never)).toBe(true);
    expect(convert('0', 'tinyint', 'boolean', true, changes as never)).toBe(false);
    expect(convert('42', 'decimal', 'number', true, changes as never)).toBe(42);
    expect(convert(7, 'int', 'number', true, changes as never)).toBe(7);
    expect(convert(null, 'datetime', 'timestamp', false, changes as never)).toBeNull();
    expect(convert('0000-00-00 00:00:00', 'datetime', 'timestamp', true, changes as never)).toBeNull();
    expect(convert(Buffer.from('abc'), 'binary', 'text', true, changes as never)).toBe('abc');
    expect([...changes].sort()).toEqual(['binary text read as UTF-8', 'decimal text read as a number', 'zero date stored as NULL']);
    expect(() => convert('0000-00-00 00:00:00', 'datetime', 'timestamp', false, new Set())).toThrow('zero date "0000-00-00 00:00:00" where a date is required');
    expect(() => convert('abc', 'varchar', 'number', true, new Set())).toThrow('"abc" is not a number');
  });
});

describe('command line', () => {
  it('reads the options and refuses what it does not know', () => {
    expect(parseTakeoverArgs(['--source', 'mysql://u:p@h:3306/db', '--objects-from=/data/bucket', '--dry-run', '--again'], true))
      .toEqual({ source: 'mysql://u:p@h:3306/db', objectsFrom: '/data/bucket', dryRun: true, again: true });
    expect(() => parseTakeoverArgs(['--source'], true)).toThrow('--source needs a value');
    expect(() => parseTakeoverArgs(['--sauce', 'x'], true)).toThrow('unknown argument --sauce');
  });

  it('never prints the source password', () => {
    const o = parseMysqlUrl('mysql://lms:s3cr%40t@10.0.0.5:3307/edtech_lms');
    expect([o.label, o.user, o.password, o.port, o.database]).toEqual(['mysql://lms@10.0.0.5:3307/edtech_lms', 'lms', 's3cr@t', 3307, 'edtech_lms']);
    expect(() => parseMysqlUrl('mysql://lms@10.0.0.5:3306/')).toThrow('names no database');
  });
});
