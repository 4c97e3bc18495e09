import { spawnSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lms/shared';
import { loadConfig } from '../src/config';
import { makeApp, testDatabase } from './helpers';

const realSecrets = {
  JWT_SECRET: 'k8#Jd92-real-jwt-secret-value',
  APPLICATION_API_KEY: 'ak_3f9d0c5b2e7a4411',
  SERVER_SYNC_KEY: 'sk_7b1e5d9c0a2f4c38',
  RPI_SECRET: 'rpi_5c2a9e7d1b3f4a60',
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
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('treats an unset NODE_ENV as production: placeholder or missing secrets are refused, and so is an unknown environment', () => {
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
    expect(() => loadConfig({ NODE_ENV: 'production', ...realSecrets, [name]: 'change-me-placeholder' })).toThrow(new RegExp(name));
    const { [name]: _omit, ...without } = realSecrets as Record<string, string>;
    expect(() => loadConfig({ NODE_ENV: 'production', ...without })).toThrow(ConfigError);
  });

  it('takes METRICS_TOKEN as optional, but refuses a weak one outside development and test', () => {
    expect(loadConfig({ NODE_ENV: 'production', ...realSecrets }).metricsToken).toBeUndefined();
    const strong = 'f3b9c1d27a4e8b6c0d5f1a2b3c4d5e6f7a8b9c0d';
    expect(loadConfig({ NODE_ENV: 'production', ...realSecrets, METRICS_TOKEN: strong }).metricsToken).toBe(strong);
    for (const weak of ['change-me-placeholder', 'secret', 'short-token-123']) {
      expect(() => loadConfig({ NODE_ENV: 'production', ...realSecrets, METRICS_TOKEN: weak })).toThrow(/METRICS_TOKEN must be a real secret of at least 32 characters/);
    }
    expect(loadConfig({ NODE_ENV: 'test', METRICS_TOKEN: 'dev' }).metricsToken).toBe('dev');
  });

  it('starts in production with real secrets, and honours the switches', () => {
    const c = loadConfig({ NODE_ENV: 'production', ...realSecrets, LOG_IMPORT_ENABLED: '1', TRUST_PROXY: '1', SUPERADMIN_USERNAME: 'root@x.org' });
    expect(c.logImportEnabled).toBe(true);
    expect(c.trustProxy).toBe(true);
    // The username shortcut is never honoured in production.
    expect(c.superadminUsername).toBeUndefined();
    expect(loadConfig({ NODE_ENV: 'development', SUPERADMIN_USERNAME: 'root@x.org' }).superadminUsername).toBe('root@x.org');
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
      env: { PATH: process.env.PATH, NODE_ENV: 'test', DATABASE_URL: db.url.startsWith('sqlite:') ? `${db.url}.empty` : db.url, PORT: '0' },
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
      expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/grade/{gradeid}', '/student/all', '/log/import', '/media/{filename}', '/media/feedback/{filename}']));
      const count = Object.values(doc.body.paths as Record<string, object>).reduce((n, ops) => n + Object.keys(ops).length, 0);
      // The catalogue's 275, the one alias path, and the four routes beyond the catalogue (sync status, media).
      expect(count).toBe(280);
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
