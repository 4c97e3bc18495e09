import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { convert, lowerCaseId, mysqlTimeToIso, unwrapJson, type Change } from '../src/takeover/transform';
import { parseTakeoverArgs } from '../src/takeover/command';
import { parseMysqlUrl } from '../src/takeover/source';

describe('values of the existing system as this service stores them', () => {
  it('unwraps JSON stored as a JSON string of itself, once or more, and nothing else', () => {
    expect(unwrapJson('{"a":[1,2]}')).toEqual({ json: '{"a":[1,2]}', unwrapped: false });
    expect(unwrapJson(JSON.stringify(JSON.stringify({ a: 1 })))).toEqual({ json: '{"a":1}', unwrapped: true });
    expect(unwrapJson(JSON.stringify(JSON.stringify(JSON.stringify(['x']))))).toEqual({
      json: '["x"]',
      unwrapped: true,
    });
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

  it('refuses whole numbers beyond what this service stores, on SQLite as on PostgreSQL', () => {
    const changes = new Set<Change>();
    expect(convert(2147483647, 'int', 'integer', true, changes)).toBe(2147483647);
    expect(convert('-2147483648', 'int', 'integer', true, changes)).toBe(-2147483648);
    expect(() => convert(4294967295, 'int', 'integer', true, changes))
      .toThrow('4294967295 is beyond the whole numbers this service stores (-2147483648 to 2147483647)');
    expect(convert(4294967295, 'double', 'number', true, changes)).toBe(4294967295);
  });

  it('lower-cases upper-case uuid ids and nothing else', () => {
    const changes = new Set<Change>();
    expect(lowerCaseId('zr5ER4QD', changes)).toBe('zr5ER4QD');
    expect(lowerCaseId('0a1b2c3d-0a1b-4c3d-8e4f-0a1b2c3d4e5f', changes)).toBe('0a1b2c3d-0a1b-4c3d-8e4f-0a1b2c3d4e5f');
    expect(changes.size).toBe(0);
    expect(lowerCaseId('0A1B2C3D-0A1B-4C3D-8E4F-0A1B2C3D4E5F', changes)).toBe('0a1b2c3d-0a1b-4c3d-8e4f-0a1b2c3d4e5f');
    expect([...changes]).toEqual(['upper-case id lower-cased']);
    expect(lowerCaseId(null, changes)).toBeNull();
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
    expect([...changes].sort()).toEqual([
      'binary text read as UTF-8',
      'decimal text read as a number',
      'zero date stored as NULL',
    ]);
    expect(() => convert('0000-00-00 00:00:00', 'datetime', 'timestamp', false, new Set())).toThrow(
      'zero date "0000-00-00 00:00:00" where a date is required',
    );
    expect(() => convert('abc', 'varchar', 'number', true, new Set())).toThrow('"abc" is not a number');
  });
});

describe('command line', () => {
  it('reads the options and refuses what it does not know', () => {
    expect(
      parseTakeoverArgs(
        ['--source', 'mysql://u:p@h:3306/db', '--objects-from=/data/bucket', '--dry-run', '--again'],
        true,
      ),
    ).toMatchObject({ source: 'mysql://u:p@h:3306/db', objectsFrom: '/data/bucket', dryRun: true, again: true });
    expect(() => parseTakeoverArgs(['--source'], true)).toThrow('--source needs a value');
    expect(() => parseTakeoverArgs(['--sauce', 'x'], true)).toThrow('unknown argument --sauce');
  });

  it('takes the secrets from the environment or a file, and warns about one on the command line', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-takeover-secret-'));
    try {
      fs.writeFileSync(path.join(dir, 'db'), 'p@ss word\n');
      fs.writeFileSync(path.join(dir, 's3'), 'S3-secret/+\n');
      const fromFiles = parseTakeoverArgs([
        '--source', 'mysql://lms@h:3306/db', '--source-password-file', path.join(dir, 'db'),
        '--objects-from', 's3://AKIA@s3.example:443/bucket', `--objects-secret-file=${path.join(dir, 's3')}`,
      ], true);
      expect(parseMysqlUrl(fromFiles.source).password).toBe('p@ss word');
      expect(decodeURIComponent(new URL(fromFiles.objectsFrom!).password)).toBe('S3-secret/+');
      expect(fromFiles.warnings).toEqual([]);
      const env = { TAKEOVER_SOURCE_PASSWORD: 'from-env', TAKEOVER_OBJECTS_SECRET: 'env-secret' };
      const fromEnv = parseTakeoverArgs(['--source', 'mysql://lms@h/db', '--objects-from', 's3://AKIA@h/b'], true, env);
      expect(parseMysqlUrl(fromEnv.source).password).toBe('from-env');
      expect(new URL(fromEnv.objectsFrom!).password).toBe('env-secret');
      const inline = parseTakeoverArgs(['--source', 'mysql://lms:pw@h/db', '--objects-from', 's3://AKIA:sk@h/b'], true);
      expect(inline.warnings).toEqual([
        expect.stringMatching(
          /^warning: the secret in --source is visible in the process list .*TAKEOVER_SOURCE_PASSWORD/,
        ),
        expect.stringMatching(/^warning: the secret in --objects-from is visible .*--objects-secret-file/),
      ]);
      expect(() => parseTakeoverArgs(['--source', 'mysql://lms:pw@h/db'], true, env)).toThrow('given more than once');
      expect(() =>
        parseTakeoverArgs(['--source', 'mysql://lms@h/db', '--source-password-file', path.join(dir, 'none')], true),
      ).toThrow('--source-password-file');
      expect(() =>
        parseTakeoverArgs(['--source', 'mysql://lms@h/db', '--objects-secret-file', path.join(dir, 's3')], true),
      ).toThrow('--objects-secret-file goes with --objects-from s3://');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never prints the source password', () => {
    const o = parseMysqlUrl('mysql://lms:s3cr%40t@10.0.0.5:3307/edtech_lms');
    expect([o.label, o.user, o.password, o.port, o.database]).toEqual([
      'mysql://lms@10.0.0.5:3307/edtech_lms',
      'lms',
      's3cr@t',
      3307,
      'edtech_lms',
    ]);
    expect(() => parseMysqlUrl('mysql://lms@10.0.0.5:3306/')).toThrow('names no database');
  });
});
