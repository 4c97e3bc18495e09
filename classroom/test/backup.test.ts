import { execFile, spawn } from 'node:child_process';
import http from 'node:http';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classroom, createTestDatabase, repoRoot, type Manifest, type TestDatabase } from '@lms/db';

const cli = path.join(repoRoot, 'classroom', 'dist', 'cli.js');
const server = path.join(repoRoot, 'classroom', 'dist', 'server.js');

const healthz = (port: number) => new Promise<number>((resolve, reject) => {
  http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode ?? 0));
  }).on('error', reject);
});

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { env: { ...process.env, NODE_ENV: 'test', ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

async function files(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile())
      out[path.relative(dir, path.join(e.parentPath, e.name))] = await fsp.readFile(
        path.join(e.parentPath, e.name),
        'utf8',
      );
  }
  return out;
}

describe('classroom backup and restore (database and media folder)', () => {
  let t: TestDatabase;
  let tmp: string;
  let env: Record<string, string>;
  const schoolusers = () => t.db('schoolusers').select('schooluserid', 'schoolusername').orderBy('schooluserid');

  beforeAll(async () => {
    t = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-classroom-backup-'));
    env = { DATABASE_URL: t.url, MEDIA_DIR: path.join(tmp, 'media') };
  });
  afterAll(async () => {
    await t.dispose();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('restores exactly the backed-up rows and media, and refuses a tampered backup', async () => {
    const media = path.join(tmp, 'media');
    await fsp.mkdir(path.join(media, '.partial'), { recursive: true });
    await fsp.writeFile(path.join(media, 'circle.png'), 'circle');
    await fsp.writeFile(path.join(media, '.media.json'), '{"circle.png":{}}');
    await fsp.writeFile(path.join(media, '.partial', 'video.mp4'), 'half a video');
    const user = (id: string, name: string) => ({
      schooluserid: id,
      schoolusername: name,
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
    });
    await t.db('schoolusers').insert([user('u1', 'amina'), user('u2', 'kofi')]);

    const dir = path.join(tmp, 'backup');
    const b = await runCli(['backup', '--to', dir], env);
    expect(b.code).toBe(0);
    const manifest = JSON.parse(await fsp.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest.database.tables.schoolusers).toBe(2);
    expect(manifest.objects.items.map((o) => o.key)).toEqual(['.media.json', 'circle.png']);
    const mediaBefore = await files(media);

    await t.db('schoolusers').where({ schooluserid: 'u2' }).del();
    await t.db('schoolusers').insert(user('u3', 'abena'));
    await fsp.writeFile(path.join(media, 'square.png'), 'square');
    await fsp.rm(path.join(media, 'circle.png'));

    const dry = await runCli(['restore', '--from', dir], env);
    expect(dry.code).toBe(2);
    expect(dry.stdout).toContain('writes the backup\'s 2 (0.0 MB), deletes 1 it does not hold');
    expect(await schoolusers()).toEqual([
      { schooluserid: 'u1', schoolusername: 'amina' },
      { schooluserid: 'u3', schoolusername: 'abena' },
    ]);

    const tampered = path.join(dir, 'objects', 'circle.png');
    await fsp.writeFile(tampered, 'CIRCLE');
    const refused = await runCli(['restore', '--from', dir, '--yes'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('objects/circle.png: checksum differs from the manifest');
    expect(await schoolusers()).toHaveLength(2);
    expect(Object.keys(await files(media)).sort()).toEqual(['.media.json', '.partial/video.mp4', 'square.png']);
    await fsp.writeFile(tampered, 'circle');

    const r = await runCli(['restore', '--from', dir, '--yes'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await schoolusers()).toEqual([
      { schooluserid: 'u1', schoolusername: 'amina' },
      { schooluserid: 'u2', schoolusername: 'kofi' },
    ]);
    // The media as backed up; a download cut short is neither kept in a backup nor counted as an extra.
    const { ['.partial/video.mp4']: _partial, ...rest } = await files(media);
    expect(rest).toEqual(Object.fromEntries(Object.entries(mediaBefore).filter(([k]) => !k.startsWith('.partial'))));
  });

  it('refuses (exit 3) while the classroom server serves the database, and restores once it stopped', async () => {
    const dir = path.join(tmp, 'backup');
    await t
      .db('schoolusers')
      .insert({ schooluserid: 'u9', schoolusername: 'later', schooluserpasswordhash: 'x', schooluserrole: 4 });
    const port = await freePort();
    const child = spawn(process.execPath, [server], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        ...env,
        RPI_PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        LOG_DIR: path.join(tmp, 'log'),
      },
      stdio: 'ignore',
    });
    try {
      for (let i = 0; ; i += 1) {
        if (child.exitCode !== null || i > 600) throw new Error('the classroom server did not start');
        if (await healthz(port).catch(() => 0) === 200) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const r = await runCli(['restore', '--from', dir, '--yes'], env);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('classroom: refused: running classroom instances (1 ');
      expect(r.stderr).toContain(process.env.TEST_DATABASE_URL ? "'lms classroom " : `process ${child.pid}, started `);
      expect(r.stderr).toContain('Stop them first (systemctl stop lms-classroom)');
      expect(r.stderr).toContain('nothing was changed');
      expect((await schoolusers()).map((u) => u.schooluserid)).toEqual(['u1', 'u2', 'u9']);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    }
    const r = await runCli(['restore', '--from', dir, '--yes'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect((await schoolusers()).map((u) => u.schooluserid)).toEqual(['u1', 'u2']);
  }, 120_000);

  it('--link-from: the media folder lists no checksum, so files are read and an unchanged one is linked', async () => {
    const media = path.join(tmp, 'link-media');
    await fsp.mkdir(media, { recursive: true });
    await fsp.writeFile(path.join(media, 'circle.png'), 'circle');
    await fsp.writeFile(path.join(media, 'square.png'), 'square');
    const linkEnv = { ...env, MEDIA_DIR: media };
    const first = path.join(tmp, 'link-first');
    expect((await runCli(['backup', '--to', first], linkEnv)).code).toBe(0);
    await fsp.writeFile(path.join(media, 'square.png'), 'SQUARE');
    const second = path.join(tmp, 'link-second');
    const b = await runCli(['backup', '--to', second, '--link-from', first], linkEnv);
    expect([b.code, b.stderr]).toEqual([0, '']);
    expect(b.stdout)
      .toContain(`objects 1 linked from ${first}, 0 copied from it, 1 copied from the store; 0.0 MB (12 bytes) read`);
    const ino = async (dir: string, key: string) => (await fsp.stat(path.join(dir, 'objects', key))).ino;
    expect(await ino(second, 'circle.png')).toBe(await ino(first, 'circle.png'));
    expect(await fsp.readFile(path.join(second, 'objects', 'square.png'), 'utf8')).toBe('SQUARE');
    // The second folder is whole without the first.
    await fsp.rm(first, { recursive: true });
    const dry = await runCli(['restore', '--from', second], linkEnv);
    expect([dry.code, dry.stdout]).toEqual([2, expect.stringContaining('checksums match')]);
  }, 120_000);

  it('--link-from: a media file damaged in the previous backup never replaces the fresh copy', async () => {
    const media = path.join(tmp, 'damaged-media');
    await fsp.mkdir(media, { recursive: true });
    await fsp.writeFile(path.join(media, 'circle.png'), 'circle');
    const linkEnv = { ...env, MEDIA_DIR: media };
    const first = path.join(tmp, 'damaged-first');
    expect((await runCli(['backup', '--to', first], linkEnv)).code).toBe(0);
    await fsp.writeFile(path.join(first, 'objects', 'circle.png'), 'CIRCLE');
    const second = path.join(tmp, 'damaged-second');
    const b = await runCli(['backup', '--to', second, '--link-from', first], linkEnv);
    expect(b.code).toBe(0);
    expect(b.stderr).toBe(`classroom: circle.png: not linked from ${first}: its bytes differ from its manifest's `
      + 'SHA-256 (damaged or changed since that backup); copied from the store instead\n');
    expect(b.stdout).toContain(`objects 0 linked from ${first}, 0 copied from it, 1 copied from the store`);
    expect(await fsp.readFile(path.join(second, 'objects', 'circle.png'), 'utf8')).toBe('circle');
    // Every file of the backup is its owner's alone.
    for (const rel of ['manifest.json', 'manifest.hmac', 'objects/circle.png']) {
      expect([rel, ((await fsp.stat(path.join(second, rel))).mode & 0o777).toString(8)]).toEqual([rel, '600']);
    }
    await fsp.writeFile(path.join(media, 'circle.png'), 'changed');
    const r = await runCli(['restore', '--from', second, '--yes'], linkEnv);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(await fsp.readFile(path.join(media, 'circle.png'), 'utf8')).toBe('circle');
  }, 120_000);
});
