import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, repoRoot, seedDemoContent } from '@lms/db';
import { loadConfig } from '../src/config';
import { makeApp, type TestApp } from './helpers';

const realSecrets = {
  JWT_SECRET: crypto.randomBytes(32).toString('base64'),
  SERVER_SYNC_KEY: crypto.randomBytes(32).toString('hex'),
};

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
  await seedDemoContent(t.tdb.db);
  await t.tdb
    .db('schools')
    .where('schoolid', DEMO.schoolid)
    .update({ uitheme: 'corporate', brandingconfig: JSON.stringify({ displayname: 'Demo', logourl: '/logo.png' }) });
});
afterAll(async () => { await t.tdb.dispose(); });

describe('classroom public routes', () => {
  it('GET / and GET /version answer plain text', async () => {
    expect((await request(t.app).get('/')).text).toBe('FORTYK RPI API ***');
    const v = await request(t.app).get('/version');
    expect(v.status).toBe(200);
    expect(v.text).toBe('1.0.0');
  });

  it("GET /school/branding answers a school's theme, matching the name case-insensitively", async () => {
    const res = await request(t.app).get('/school/branding').query({ schoolname: 'demo primary school' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      error: false,
      data: { uitheme: 'corporate', brandingconfig: { displayname: 'Demo', logourl: '/logo.png' } },
    });
  });

  it('GET /school/branding answers the default theme for an unknown or missing school', async () => {
    for (const q of [{ schoolname: 'Nowhere' }, {}]) {
      const res = await request(t.app).get('/school/branding').query(q);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ error: false, data: { uitheme: 'kids', brandingconfig: null } });
    }
  });

  it('answers unknown routes with the 404 envelope and serves docs in test', async () => {
    expect((await request(t.app).get('/nope')).body).toEqual({
      error: true,
      errormessage: 'Cannot GET /nope',
      data: false,
    });
    const doc = await request(t.app).get('/docs/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.paths['/school/branding']).toBeDefined();
  });
});

describe('classroom configuration', () => {
  it('defaults to port 3000 and online mode', () => {
    const c = loadConfig({ NODE_ENV: 'development' });
    expect(c.port).toBe(3000);
    expect(c.offline).toBe(false);
    expect(c.databaseUrl).toBe(`sqlite:${path.join(repoRoot, 'data', 'classroom.sqlite')}`);
  });

  it('goes offline with RPI_OFFLINE=true or with offline:true in RPI_CONFIG', () => {
    const dev = { NODE_ENV: 'development' };
    expect(loadConfig({ ...dev, RPI_OFFLINE: 'true' }).offline).toBe(true);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rpi-config-'));
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ offline: true, schoolname: 'Demo Primary School' }));
    expect(loadConfig({ ...dev, RPI_CONFIG: file }).offline).toBe(true);
    fs.writeFileSync(file, JSON.stringify({ offline: false }));
    expect(loadConfig({ ...dev, RPI_CONFIG: file }).offline).toBe(false);
    fs.writeFileSync(file, '{not json');
    expect(() => loadConfig({ ...dev, RPI_CONFIG: file })).toThrow(/RPI_CONFIG/);
    fs.rmSync(dir, { recursive: true });
  });

  it.each(Object.keys(realSecrets))('refuses a production start while %s is a placeholder', (name) => {
    expect(() => loadConfig({ NODE_ENV: 'production', ...realSecrets, [name]: 'changeme' })).toThrow(new RegExp(name));
    expect(() => loadConfig({ NODE_ENV: 'production', ...realSecrets })).not.toThrow();
  });

  it.each(Object.keys(realSecrets))(
    'refuses a production start while %s holds fewer than 32 random bytes, unless kept on purpose',
    (name) => {
      const start =
        (value: string, extra: Record<string, string> = {}) =>
        () =>
          loadConfig({ NODE_ENV: 'production', ...realSecrets, [name]: value, ...extra });
      expect(start('short')).toThrow(
        new RegExp(`${name} is too weak for NODE_ENV=production: 5 characters, fewer than 43.*ALLOW_WEAK_${name}=1`),
      );
      expect(start(crypto.randomBytes(32).toString('hex').slice(0, 63))).toThrow(/63 hex digits/);
      expect(start(crypto.randomBytes(32).toString('base64url'))().weakSecrets).toEqual([]);
      // The classroom box may share a key with a central that still runs the existing system.
      expect(start('sk_7b1e5d9c0a2f4c38', { [`ALLOW_WEAK_${name}`]: 'true' })().weakSecrets).toEqual([name]);
      expect(start('changeme', { [`ALLOW_WEAK_${name}`]: '1' })).toThrow(/placeholder/);
    },
  );

  it('refuses a repeated pattern, a sequence, and JWT_SECRET equal to SERVER_SYNC_KEY (naming both, ' +
    'not the value)', () => {
    const start = (env: Record<string, string>) => () => loadConfig({ NODE_ENV: 'production', ...realSecrets, ...env });
    expect(start({ JWT_SECRET: 'abcdefghijklmnop'.repeat(3) })).toThrow(
      /JWT_SECRET is too weak .*a pattern of 16 characters repeated/,
    );
    expect(start({ SERVER_SYNC_KEY: '0123456789'.repeat(7) })).toThrow(
      /SERVER_SYNC_KEY is too weak .*a pattern of 10 characters/,
    );
    expect(start({ JWT_SECRET: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ' })).toThrow(/a sequence/);
    const value = crypto.randomBytes(32).toString('base64url');
    expect(start({ JWT_SECRET: value, SERVER_SYNC_KEY: value })).toThrow(
      /^JWT_SECRET and SERVER_SYNC_KEY are the same value: each secret must be a random value of its own/,
    );
    expect(start({ JWT_SECRET: value, SERVER_SYNC_KEY: value })).not.toThrow(value);
  });

  it('stops the built server before it listens when JWT_SECRET is missing in production', () => {
    const run = spawnSync(process.execPath, [path.resolve(__dirname, '../dist/server.js')], {
      env: { PATH: process.env.PATH, NODE_ENV: 'production', SERVER_SYNC_KEY: realSecrets.SERVER_SYNC_KEY },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('JWT_SECRET');
  });

  it('answers 404 for /docs in production', async () => {
    const p = await makeApp({ NODE_ENV: 'production', ...realSecrets }, t.tdb);
    expect((await request(p.app).get('/docs/')).status).toBe(404);
    expect((await request(p.app).get('/docs/openapi.json')).status).toBe(404);
  });
});
