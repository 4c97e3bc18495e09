import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lms/shared';
import { loadConfig, loadStorageConfig } from '../src/config';
import { makeApp, testDatabase } from './helpers';

const realSecrets = {
  JWT_SECRET: crypto.randomBytes(32).toString('base64'),
  APPLICATION_API_KEY: crypto.randomBytes(32).toString('base64url'),
  SERVER_SYNC_KEY: crypto.randomBytes(32).toString('hex'),
  RPI_SECRET: `rpi_${crypto.randomBytes(40).toString('base64url')}`,
};

describe('central configuration', () => {
  it('uses the documented defaults', () => {
    const c = loadConfig({ ...realSecrets });
    expect(c.nodeEnv).toBe('production');
    expect(c.port).toBe(3000);
    expect(c.host).toBeUndefined();
    expect(c.maxJsonBytes).toBe(1024 * 1024);
    expect(c.databaseUrl).toBe('sqlite:data/central.sqlite');
    expect(c.rpiCloud).toBe('http://127.0.0.1:3001');
    expect(c.logImportEnabled).toBe(false);
    expect(c.objectStore).toEqual({ kind: 'folder', dir: 'data/objects' });
    expect(c.database).toEqual({ poolMax: 10, statementTimeoutMs: 0, sessionSettings: true });
    expect([c.trustProxy, c.redisKeyPrefix, c.orphanGraceMs]).toEqual([0, '', 3_600_000]);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads the settings for several instances', () => {
    const c = loadConfig({
      ...realSecrets,
      DATABASE_POOL_MAX: '25',
      DATABASE_STATEMENT_TIMEOUT_SECONDS: '60',
      DATABASE_SESSION_SETTINGS: 'off',
      TRUST_PROXY: '2',
      REDIS_KEY_PREFIX: 'lms-prod:',
      ORPHAN_GRACE_SECONDS: '600',
      S3_ENDPOINT: 'http://minio:9000',
      S3_PUBLIC_ENDPOINT: 'https://files.example.org',
    });
    expect(c.database).toEqual({ poolMax: 25, statementTimeoutMs: 60_000, sessionSettings: false });
    expect([c.trustProxy, c.redisKeyPrefix, c.orphanGraceMs]).toEqual([2, 'lms-prod:', 600_000]);
    expect(c.objectStore).toMatchObject({
      kind: 's3',
      endpoint: 'http://minio:9000',
      publicEndpoint: 'https://files.example.org',
    });
    expect(() => loadConfig({ ...realSecrets, DATABASE_POOL_MAX: '0' })).toThrow(/DATABASE_POOL_MAX/);
    expect(() => loadConfig({ ...realSecrets, TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/);
  });

  it('treats an unset NODE_ENV as production: placeholder or missing secrets are refused, ' +
      'and so is an unknown environment', () => {
    expect(() => loadConfig({})).toThrow(/JWT_SECRET must be set/);
    expect(() => loadConfig({ JWT_SECRET: 'change-me-placeholder' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'local' })).toThrow(/NODE_ENV/);
    expect(loadConfig({ NODE_ENV: 'test' }).nodeEnv).toBe('test');
    expect(loadConfig({ NODE_ENV: 'development', HOST: '127.0.0.1' }).host).toBe('127.0.0.1');
  });

  it('refuses to start the built server with NODE_ENV unset and placeholder secrets', () => {
    const r = spawnSync(process.execPath, [path.resolve(__dirname, '../dist/server.js')], {
      env: { PATH: process.env.PATH, JWT_SECRET: 'change-me-placeholder' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/cannot start: JWT_SECRET must be set to a real secret when NODE_ENV=production/);
  });

  it.each(Object.keys(realSecrets))('refuses a production start while %s is a placeholder', (name) => {
    expect(() => loadConfig({ NODE_ENV: 'production', ...realSecrets, [name]: 'change-me-placeholder' })).toThrow(
      new RegExp(name),
    );
    const { [name]: _omit, ...without } = realSecrets as Record<string, string>;
    expect(() => loadConfig({ NODE_ENV: 'production', ...without })).toThrow(ConfigError);
  });

  it.each(Object.keys(realSecrets))('refuses a production start while %s holds fewer than 32 random bytes', (name) => {
    const start =
      (value: string, extra: Record<string, string> = {}) =>
      () =>
        loadConfig({ NODE_ENV: 'production', ...realSecrets, [name]: value, ...extra });
    expect(start('short')).toThrow(
      new RegExp(`${name} is too weak for NODE_ENV=production: 5 characters, fewer than 43.*ALLOW_WEAK_${name}=1`),
    );
    // 42 base64 characters, 63 hex digits, or a long value of few characters are not 32 random bytes.
    expect(start(crypto.randomBytes(32).toString('base64url').slice(0, 42))).toThrow(/fewer than 43/);
    expect(start(crypto.randomBytes(32).toString('hex').slice(0, 63))).toThrow(/63 hex digits, fewer than 64/);
    expect(start('ab'.repeat(40))).toThrow(/only 2 different hex digits/);
    expect(start('password-'.repeat(6))).toThrow(/different characters/);
    // 32 bytes as 43 base64 characters or 64 hex digits are enough.
    expect(start(crypto.randomBytes(32).toString('base64url'))().weakSecrets).toEqual([]);
    expect(start(crypto.randomBytes(32).toString('hex'))().weakSecrets).toEqual([]);
    // An existing shorter value is kept only on purpose, and the config names it for the start-up warning.
    expect(start('short', { [`ALLOW_WEAK_${name}`]: '1' })().weakSecrets).toEqual([name]);
    expect(start('change-me', { [`ALLOW_WEAK_${name}`]: '1' })).toThrow(/placeholder/);
    // Another secret's switch does not cover this one.
    const other = Object.keys(realSecrets).find((n) => n !== name);
    expect(start('short', { [`ALLOW_WEAK_${other}`]: '1' })).toThrow(name);
  });

  it.each(Object.keys(realSecrets))('refuses %s when it is a pattern repeated or a sequence, however long', (name) => {
    const start = (value: string) => () => loadConfig({ NODE_ENV: 'production', ...realSecrets, [name]: value });
    expect(start('abcdefghijklmnop'.repeat(3))).toThrow(
      new RegExp(`${name} is too weak .*a pattern of 16 characters repeated`),
    );
    expect(start('0123456789'.repeat(7))).toThrow(/a pattern of 10 characters repeated/);
    // Sixteen different characters repeated, with a tail that breaks the exact repetition.
    expect(start(`${'Q7vK2xLp9ZrT4mWc'.repeat(3)}xY`)).toThrow(/a pattern of 16 characters/);
    expect(start('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')).toThrow(/a sequence/);
    expect(start('aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ')).toThrow(/a sequence/);
    // Sixteen different characters, unevenly used: little entropy although long and aperiodic.
    expect(start(`${'a'.repeat(30)}bcdefghijklmnopq${'a'.repeat(10)}`)).toThrow(/pattern|entropy/);
    expect(start(`Aa${'b'.repeat(20)}cdefghijklmnopq${'b'.repeat(22)}rs`)).toThrow(/pattern|entropy/);
    // Random values in every usual form pass, whatever the draw.
    for (let i = 0; i < 2000; i += 1) {
      for (const v of [
        crypto.randomBytes(32).toString('base64'),
        crypto.randomBytes(32).toString('base64url'),
        crypto.randomBytes(32).toString('hex'),
      ]) {
        expect(start(v)().weakSecrets).toEqual([]);
      }
    }
  });

  it('refuses two secrets of the same value, naming both and never the value', () => {
    const names = Object.keys(realSecrets);
    for (const [i, a] of names.entries()) {
      for (const b of names.slice(i + 1)) {
        const value = crypto.randomBytes(32).toString('base64url');
        let message = '';
        try {
          loadConfig({ NODE_ENV: 'production', ...realSecrets, [a]: value, [b]: value });
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message).toBe(
          `${a} and ${b} are the same value: each secret must be a random value of its own when NODE_ENV=production`,
        );
        expect(message).not.toContain(value);
      }
    }
    // Development and test keep their shared defaults.
    expect(loadConfig({ NODE_ENV: 'test' }).nodeEnv).toBe('test');
  });

  it('logs every start that accepts a weak secret on purpose', async () => {
    const db = await testDatabase();
    await db.dispose();
    const run = spawnSync(process.execPath, [path.resolve(__dirname, '../dist/server.js')], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        ...realSecrets,
        SERVER_SYNC_KEY: 'sk_7b1e5d9c0a2f4c38',
        ALLOW_WEAK_SERVER_SYNC_KEY: '1',
        DATABASE_URL: db.url.startsWith('sqlite:') ? `${db.url}.empty` : db.url,
        PORT: '0',
      },
      encoding: 'utf8',
      timeout: 15_000,
    });
    // Past the configuration (the weak key was accepted), it stops at the unmigrated database.
    expect(run.stderr).toMatch(/not migrated/);
    const warning = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.level === 40);
    expect(warning).toMatchObject({
      secrets: ['SERVER_SYNC_KEY'],
      msg: expect.stringContaining('ALLOW_WEAK_SERVER_SYNC_KEY=1'),
    });
    expect(run.stdout).not.toContain('sk_7b1e5d9c0a2f4c38');
  });

  it('takes METRICS_TOKEN as optional, but refuses a weak one outside development and test', () => {
    expect(loadConfig({ NODE_ENV: 'production', ...realSecrets }).metricsToken).toBeUndefined();
    const strong = crypto.randomBytes(32).toString('base64url');
    expect(loadConfig({ NODE_ENV: 'production', ...realSecrets, METRICS_TOKEN: strong }).metricsToken).toBe(strong);
    for (const weak of [
      'change-me-placeholder',
      'secret',
      'short-token-123',
      'f3b9c1d27a4e8b6c0d5f1a2b3c4d5e6f7a8b9c0d',
    ]) {
      expect(() => loadConfig({ NODE_ENV: 'production', ...realSecrets, METRICS_TOKEN: weak })).toThrow(
        /METRICS_TOKEN is too weak for NODE_ENV=production: .*32 random bytes/,
      );
    }
    expect(loadConfig({ NODE_ENV: 'test', METRICS_TOKEN: 'dev' }).metricsToken).toBe('dev');
  });

  it('refuses a weak or placeholder BACKUP_KEY at start, and in the backup commands, naming it', () => {
    const prod = (extra: Record<string, string>) => ({ NODE_ENV: 'production', ...realSecrets, ...extra });
    for (const load of [loadConfig, loadStorageConfig]) {
      expect(() => load(prod({ BACKUP_KEY: 'abc' }))).toThrow(
        /^BACKUP_KEY is too weak for NODE_ENV=production: 3 hex digits, fewer than 64.*ALLOW_WEAK_BACKUP_KEY=1/,
      );
      expect(() => load(prod({ BACKUP_KEY: 'abcdefghijklmnop'.repeat(3) }))).toThrow(/BACKUP_KEY is too weak/);
      // Kept on purpose: a restore of a backup signed with an older, shorter key.
      expect(() => load(prod({ BACKUP_KEY: 'abc', ALLOW_WEAK_BACKUP_KEY: '1' }))).not.toThrow();
    }
    expect(() => loadConfig(prod({ BACKUP_KEY: 'change-me' }))).toThrow(/BACKUP_KEY must be set to a real secret/);
    expect(loadConfig(prod({ BACKUP_KEY: 'abc', ALLOW_WEAK_BACKUP_KEY: '1' })).weakSecrets).toEqual(['BACKUP_KEY']);
    const strong = crypto.randomBytes(32).toString('base64');
    expect(loadStorageConfig(prod({ BACKUP_KEY: strong })).backupKey).toBe(strong);
    // Unset: JWT_SECRET signs the backups, as before.
    expect(loadStorageConfig(prod({})).backupKey).toBe(realSecrets.JWT_SECRET);
    expect(loadConfig(prod({})).weakSecrets).toEqual([]);
    expect(loadStorageConfig({ NODE_ENV: 'test', BACKUP_KEY: 'abc' }).backupKey).toBe('abc');
  });

  it('refuses a weak S3_SECRET_KEY while S3_ENDPOINT is set, by the rule for a key the store issues', () => {
    const prod = (extra: Record<string, string>) =>
      ({ NODE_ENV: 'production', ...realSecrets, S3_ENDPOINT: 'https://s3.example.org', ...extra });
    expect(() => loadConfig(prod({ S3_SECRET_KEY: 'minio123' }))).toThrow(
      new RegExp('^S3_SECRET_KEY is too weak for NODE_ENV=production: 8 characters, fewer than 27; '
        + 'it must hold 20 random bytes .*ALLOW_WEAK_S3_SECRET_KEY=1'),
    );
    expect(() => loadConfig(prod({ S3_SECRET_KEY: 'minioadmin'.repeat(4) }))).toThrow(/S3_SECRET_KEY is too weak/);
    // Keys as AWS and MinIO issue them (40 characters) and `openssl rand -hex 24` pass.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    for (let i = 0; i < 200; i += 1) {
      const issued = Array.from(crypto.randomBytes(40), (b) => alphabet[b % 64]).join('');
      expect(loadConfig(prod({ S3_SECRET_KEY: issued })).weakSecrets).toEqual([]);
      expect(loadConfig(prod({ S3_SECRET_KEY: crypto.randomBytes(24).toString('hex') })).weakSecrets).toEqual([]);
    }
    expect(loadConfig(prod({ S3_SECRET_KEY: 'S3RVER', ALLOW_WEAK_S3_SECRET_KEY: '1' })).weakSecrets)
      .toEqual(['S3_SECRET_KEY']);
    // Without S3_ENDPOINT the folder store is used and the key is not read.
    const { S3_ENDPOINT: _none, ...folder } = prod({ S3_SECRET_KEY: 'minio123' });
    expect(loadConfig(folder).objectStore.kind).toBe('folder');
  });

  it('refuses any two of every secret central reads being equal, naming both and never the value', () => {
    const names = [...Object.keys(realSecrets), 'S3_SECRET_KEY', 'BACKUP_KEY', 'METRICS_TOKEN'];
    const base = { NODE_ENV: 'production', ...realSecrets, S3_ENDPOINT: 'https://s3.example.org' };
    for (const [i, a] of names.entries()) {
      for (const b of names.slice(i + 1)) {
        const value = crypto.randomBytes(32).toString('base64url');
        let message = '';
        try {
          loadConfig({ ...base, [a]: value, [b]: value });
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message).toBe(
          `${a} and ${b} are the same value: each secret must be a random value of its own when NODE_ENV=production`,
        );
        expect(message).not.toContain(value);
      }
    }
    // The metrics scraper's token able to sign staff tokens: the case that matters most.
    expect(() => loadConfig({ ...base, METRICS_TOKEN: realSecrets.JWT_SECRET }))
      .toThrow('JWT_SECRET and METRICS_TOKEN are the same value');
    // The backup commands too: a BACKUP_KEY equal to another secret is refused before anything is written.
    expect(() => loadStorageConfig({ ...base, BACKUP_KEY: realSecrets.APPLICATION_API_KEY }))
      .toThrow('BACKUP_KEY and APPLICATION_API_KEY are the same value');
    expect(loadConfig({ NODE_ENV: 'test', METRICS_TOKEN: 'same', JWT_SECRET: 'same' }).nodeEnv).toBe('test');
  });

  it('stops the backup command on a weak BACKUP_KEY, naming it, before it writes anything', async () => {
    const db = await testDatabase();
    const dir = path.join(os.tmpdir(), `lms-never-written-${process.pid}-${Date.now()}`);
    try {
      const run = spawnSync(process.execPath, [path.resolve(__dirname, '../dist/cli.js'), 'backup', '--to', dir], {
        env: { PATH: process.env.PATH, NODE_ENV: 'production', ...realSecrets, BACKUP_KEY: 'abc',
          DATABASE_URL: db.url },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('BACKUP_KEY is too weak for NODE_ENV=production');
      expect(fs.existsSync(dir)).toBe(false);
    } finally {
      await db.dispose();
    }
  });

  it('starts in production with real secrets, and honours the switches', () => {
    const c = loadConfig({
      NODE_ENV: 'production',
      ...realSecrets,
      LOG_IMPORT_ENABLED: '1',
      TRUST_PROXY: '1',
      SUPERADMIN_USERNAME: 'root@x.org',
    });
    expect(c.logImportEnabled).toBe(true);
    expect(c.trustProxy).toBe(1);
    // The username shortcut is never honoured in production.
    expect(c.superadminUsername).toBeUndefined();
    expect(loadConfig({ NODE_ENV: 'development', SUPERADMIN_USERNAME: 'root@x.org' }).superadminUsername).toBe(
      'root@x.org',
    );
  });

  it('stops the built server before it listens, naming the variable, with a non-zero exit', () => {
    const server = path.resolve(__dirname, '../dist/server.js');
    const run = spawnSync(process.execPath, [server], {
      env: { PATH: process.env.PATH, NODE_ENV: 'production', ...realSecrets, SERVER_SYNC_KEY: 'change-me' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('SERVER_SYNC_KEY');
  });

  it('refuses to start on an unmigrated database, telling the operator to run make migrate', async () => {
    const db = await testDatabase();
    await db.dispose();
    const server = path.resolve(__dirname, '../dist/server.js');
    const run = spawnSync(process.execPath, [server], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        DATABASE_URL: db.url.startsWith('sqlite:') ? `${db.url}.empty` : db.url,
        PORT: '0',
      },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/not migrated.*make migrate/);
  });
});

describe('API docs', () => {
  it('serves the generated OpenAPI document and the UI in test', async () => {
    const t = await makeApp();
    try {
      const doc = await request(t.app).get('/docs/openapi.json');
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toBe('3.0.3');
      expect(Object.keys(doc.body.paths)).toEqual(
        expect.arrayContaining([
          '/grade/{gradeid}',
          '/student/all',
          '/log/import',
          '/media/{filename}',
          '/media/feedback/{filename}',
          '/fleet/boxes/{boxid}',
        ]),
      );
      const count = Object.values(doc.body.paths as Record<string, object>).reduce(
        (n, ops) => n + Object.keys(ops).length,
        0,
      );
      // The catalogue's 275, the one alias path, and the routes beyond the catalogue (sync status, media, fleet,
      // the three of the access record, the two of one learner's data, the eight of the fleet's down path, the
      // nine of box releases, the ten of the fleet's settings and diagnostics).
      expect(count).toBe(320);
      // Each operation states its scope rule, next to its gate.
      const ops = Object.values(
        doc.body.paths as Record<string, Record<string, { description: string; 'x-scope'?: string }>>,
      ).flatMap((o) => Object.values(o));
      expect(ops.filter((o) => !o['x-scope'])).toEqual([]);
      expect(doc.body.paths['/level/{levelid}'].get).toMatchObject({
        'x-scope': 'curriculaOfCaller',
        description: expect.stringMatching(/^Gate: permissions \(any of\): view_level\. Scope: curriculaOfCaller \(/),
      });
      const ui = await request(t.app).get('/docs/');
      expect(ui.status).toBe(200);
      expect(ui.text).toContain('swagger');
    } finally {
      await t.tdb.dispose();
    }
  });

  it('answers 404 for /docs in production', async () => {
    const t = await makeApp({ NODE_ENV: 'production', ...realSecrets });
    try {
      for (const p of ['/docs', '/docs/', '/docs/openapi.json']) {
        const res = await request(t.app).get(p);
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ error: true, data: false });
      }
    } finally {
      await t.tdb.dispose();
    }
  });
});
