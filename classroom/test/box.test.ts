import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@lms/db';
import { loadConfig, loadDatabaseConfig } from '../src/config';
import { copyDemoMedia, DEMO_MEDIA_DIR } from '../src/seed/media';
import { makeApp } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-box-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('where the box keeps its data', () => {
  it('defaults to the repository\'s data/ folder, whatever the working directory', () => {
    const cwd = process.cwd();
    process.chdir(os.tmpdir());
    try {
      const c = loadConfig({ NODE_ENV: 'test' });
      expect(c.dataDir).toBe(path.join(repoRoot, 'data'));
      expect(c.databaseUrl).toBe(`sqlite:${path.join(repoRoot, 'data', 'classroom.sqlite')}`);
      expect(c.logDir).toBe(path.join(repoRoot, 'data', 'logs'));
      expect(c.mediaDir).toBe(path.join(repoRoot, 'data', 'media'));
      // LOG_DIR and MEDIA_DIR given relative resolve against the repository root, as docs/configuration.md says.
      const r = loadConfig({ NODE_ENV: 'test', LOG_DIR: 'var/logs', MEDIA_DIR: 'var/media' });
      expect([r.logDir, r.mediaDir]).toEqual([path.join(repoRoot, 'var/logs'), path.join(repoRoot, 'var/media')]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('puts database, logs and media under DATA_DIR unless each is set on its own', () => {
    const c = loadConfig({ NODE_ENV: 'test', DATA_DIR: '/var/lib/lms-classroom' });
    expect(c.databaseUrl).toBe('sqlite:/var/lib/lms-classroom/classroom.sqlite');
    expect(c.logDir).toBe('/var/lib/lms-classroom/logs');
    expect(c.mediaDir).toBe('/var/lib/lms-classroom/media');
    expect(loadDatabaseConfig({ NODE_ENV: 'test', DATA_DIR: '/var/lib/lms-classroom' }).databaseUrl).toBe(
      'sqlite:/var/lib/lms-classroom/classroom.sqlite',
    );
    const own = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: '/var/lib/lms-classroom',
      MEDIA_DIR: '/mnt/usb/media',
      DATABASE_URL: 'sqlite:/srv/db.sqlite',
    });
    expect([own.mediaDir, own.databaseUrl, own.logDir]).toEqual([
      '/mnt/usb/media',
      'sqlite:/srv/db.sqlite',
      '/var/lib/lms-classroom/logs',
    ]);
  });
});

describe('the demo media', () => {
  it('are copied into MEDIA_DIR by the seed, and the lesson videos play from /media with ranges', async () => {
    const mediaDir = path.join(tmp, 'media');
    expect(copyDemoMedia(mediaDir)).toMatch(/: 11 copied, 0 already there/);
    expect(copyDemoMedia(mediaDir)).toMatch(/: 0 copied, 11 already there/);
    const t = await makeApp({ MEDIA_DIR: mediaDir });
    try {
      for (const name of ['demo/counting-to-ten.mp4', 'demo/reading-simple-words.mp4', 'demo/adding-within-ten.mp4']) {
        const size = fs.statSync(path.join(DEMO_MEDIA_DIR, name)).size;
        const res = await request(t.app)
          .get(`/media/${name}`)
          .set('Range', 'bytes=0-15')
          .buffer(true)
          .parse((r, cb) => {
            const parts: Buffer[] = [];
            r.on('data', (c: Buffer) => parts.push(c));
            r.on('end', () => cb(null, Buffer.concat(parts)));
          });
        expect([name, res.status, res.headers['content-type'], res.headers['content-range']]).toEqual([
          name,
          206,
          'video/mp4',
          `bytes 0-15/${size}`,
        ]);
        expect((res.body as Buffer).subarray(4, 8).toString()).toBe('ftyp');
      }
      for (const name of ['triangle.png', 'story-3.png', 'demo/teaching-counting.pdf'])
        expect((await request(t.app).get(`/media/${name}`)).status).toBe(200);
    } finally {
      await t.tdb.dispose();
    }
  });
});

describe('the systemd unit of the box', () => {
  const unit = fs.readFileSync(path.join(repoRoot, 'deploy', 'classroom', 'lms-classroom.service'), 'utf8');
  const directive = (name: string) =>
    unit
      .split('\n')
      .filter((l) => l.startsWith(`${name}=`))
      .map((l) => l.slice(name.length + 1));

  it('starts the server as `npm start -w classroom` does: the same allocator setting and node flags', () => {
    const start = (
      JSON.parse(fs.readFileSync(path.join(repoRoot, 'classroom', 'package.json'), 'utf8')) as {
        scripts: { start: string };
      }
    ).scripts.start.split(/\s+/);
    const envs = start.filter((w) => /^[A-Z_]+=/.test(w));
    const flags = start.filter((w) => w.startsWith('--'));
    expect(flags).toContain('--max-old-space-size=160');
    const [exec] = directive('ExecStart');
    expect(exec.split(/\s+/).filter((w) => w.startsWith('--'))).toEqual(flags);
    expect(exec).toMatch(/ \/opt\/lms\/classroom\/dist\/server\.js$/);
    // The package's own Node.js 20 (scripts/box/build-deb.sh puts it there): the system's may be 18.
    expect(exec).toMatch(/^\/opt\/lms\/node\/bin\/node /);
    const build = fs.readFileSync(path.join(repoRoot, 'scripts', 'box', 'build-deb.sh'), 'utf8');
    expect(build).toContain('"$opt/node/bin/node"');
    for (const e of envs) expect(directive('Environment')).toContain(e);
  });

  it('runs unprivileged, restarts on failure and keeps its data apart from the code', () => {
    expect(directive('User')).toEqual(['lms']);
    expect(directive('Restart')).toEqual(['on-failure']);
    expect(directive('NoNewPrivileges')).toEqual(['yes']);
    expect(directive('ProtectSystem')).toEqual(['strict']);
    expect(directive('Environment')).toContain('DATA_DIR=/var/lib/lms-classroom');
    expect(directive('StateDirectory')).toEqual(['lms-classroom']);
  });
});
