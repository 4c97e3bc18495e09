import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@lms/db';
import { makeApp, type TestApp } from './helpers';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';

// A fresh demo, as `make seed-demo` leaves it (both services' `seed-demo` commands, run as the Makefile runs them),
// then `npm run sync-content -- --media-dir …` against the two running servers: every file the demo curriculum
// names comes from central's object store, and the command ends 0.

const SYNC_KEY = 'shared-sync-key-for-demo-media';
const DEMO_MEDIA = path.join(repoRoot, 'classroom', 'demo-media');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-demo-media-'));
const objectDir = path.join(tmp, 'central-objects');
const mediaDir = path.join(tmp, 'classroom-media');

let central: TestApp;
let classroom: ClassroomTestApp;
const servers: http.Server[] = [];

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Run { code: number | null; out: string; err: string }

/** A compiled command of the repository, as npm runs it, with only the environment given. */
function run(script: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, script), ...args], {
      cwd: repoRoot, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

function demoFiles(dir: string, rel = ''): string[] {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const name = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? demoFiles(dir, name) : [name];
  }).sort();
}
/** What `make seed-demo` gives central's seed: its database and object store. */
const centralSeedEnv = () => ({ NODE_ENV: 'development', DATABASE_URL: central.tdb.url, OBJECT_DIR: objectDir });
const md5 = (file: string) => crypto.createHash('md5').update(fs.readFileSync(file)).digest('hex');

beforeAll(async () => {
  central = await makeApp({
    SERVER_SYNC_KEY: SYNC_KEY, OBJECT_DIR: objectDir, JWT_SECRET: 'central-jwt-for-demo-media',
    RATE_LIMIT_MAX: '100000',
  });
  classroom = await makeClassroomApp({
    SERVER_SYNC_KEY: SYNC_KEY, MEDIA_DIR: mediaDir, JWT_SECRET: 'classroom-jwt-for-demo-media',
  });
  const seedCentral = await run('central/dist/cli.js', ['seed-demo'], centralSeedEnv());
  expect(seedCentral, seedCentral.err).toMatchObject({ code: 0 });
  expect(seedCentral.out).toMatch(/central: demo media in the object store \(.*\): 11 stored, 0 already there/);
  const seedClassroom = await run('classroom/dist/cli.js', ['seed-demo'], {
    NODE_ENV: 'development', DATABASE_URL: classroom.tdb.url, MEDIA_DIR: mediaDir,
  });
  expect(seedClassroom, seedClassroom.err).toMatchObject({ code: 0 });
}, 120_000);

afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await central?.tdb.dispose();
  await classroom?.tdb.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the demo and npm run sync-content --media-dir', () => {
  it('brings every media file of the demo curriculum from central and exits 0', async () => {
    const centralUrl = await listen(central.app);
    const classroomUrl = await listen(classroom.app);
    const sync = await run('scripts/dist/sync-content/index.js', [
      '--central', centralUrl, '--central-user', 'superadmin@demo.lms', '--classroom', classroomUrl,
      '--sync-key', SYNC_KEY, '--media-dir', mediaDir,
    ], { LMS_CENTRAL_PASSWORD: 'DemoSuper1' });
    expect(sync.err).not.toMatch(/could not be brought/);
    expect(sync.code, sync.err).toBe(0);
    const names = demoFiles(DEMO_MEDIA);
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) {
      expect([name, md5(path.join(objectDir, name))]).toEqual([name, md5(path.join(DEMO_MEDIA, name))]);
      expect([name, md5(path.join(mediaDir, name))]).toEqual([name, md5(path.join(DEMO_MEDIA, name))]);
    }
    // The sync recorded what it holds, so that the next run asks for changes only.
    const manifest = JSON.parse(fs.readFileSync(path.join(mediaDir, '.media.json'), 'utf8')) as {
      files: Record<string, unknown>;
    };
    expect(Object.keys(manifest.files).length).toBeGreaterThanOrEqual(10);
  }, 120_000);

  it('seeding again stores nothing twice', async () => {
    const again = await run('central/dist/cli.js', ['seed-demo'], centralSeedEnv());
    expect(again, again.err).toMatchObject({ code: 0 });
    expect(again.out).toMatch(/: 0 stored, 11 already there/);
  }, 60_000);
});
