import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { central, createTestDatabase, repoRoot, type Manifest, type TestDatabase } from '@lms/db';
import { createObjectStore, type ObjectStore, type ObjectStoreConfig } from '../src/objects';
import { startS3Sandbox, type S3Sandbox } from './s3';

const cli = path.join(repoRoot, 'central', 'dist', 'cli.js');

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

function envOf(t: TestDatabase, store: ObjectStoreConfig): Record<string, string> {
  const env: Record<string, string> = { DATABASE_URL: t.url };
  if (store.kind === 's3')
    Object.assign(env, {
      S3_ENDPOINT: store.endpoint,
      S3_ACCESS_KEY: store.accessKey,
      S3_SECRET_KEY: store.secretKey,
      S3_BUCKET: store.bucket,
      S3_REGION: store.region,
    });
  else env.OBJECT_DIR = store.dir;
  return env;
}

async function readAll(store: ObjectStore): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const o of await store.list()) {
    const chunks: Buffer[] = [];
    for await (const c of await store.get(o.key)) chunks.push(c as Buffer);
    out[o.key] = Buffer.concat(chunks).toString('base64');
  }
  return out;
}

const countries = (t: TestDatabase) => t.db('countries').select('countryid', 'countryname').orderBy('countryid');

let sandbox: S3Sandbox;
beforeAll(async () => { sandbox = await startS3Sandbox('lms-backup-'); });
afterAll(async () => { await sandbox.close(); });

describe.each(['folder', 's3'] as const)('central backup and restore, %s store', (kind) => {
  let t: TestDatabase;
  let storeConfig: ObjectStoreConfig;
  let store: ObjectStore;
  let dir: string;
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

  beforeAll(async () => {
    t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    const bucket = `backup-${kind}-${Date.now() % 100000}`;
    storeConfig = kind === 's3' ? sandbox.s3(bucket) : { kind: 'folder', dir: path.join(sandbox.tmp, 'objects') };
    store = createObjectStore(storeConfig);
    dir = path.join(sandbox.tmp, `backup-${kind}`);
  });
  afterAll(async () => { await t.dispose(); });

  it('backs up the database and the objects with counts and checksums, ' +
      'and restores exactly them after changes', async () => {
    await t.db('countries').insert([
      { countryid: 'c1', countryname: 'Kenya' },
      { countryid: 'c2', countryname: 'Ghana' },
    ]);
    await store.put('lesson_one.mp3', Buffer.from('ID3 lesson one'), {
      contentType: 'audio/mpeg',
      metadata: { origin: 'test' },
    });
    await store.put('feedback/u1_a_1.png', png, { contentType: 'image/png' });

    const b = await runCli(['backup', '--to', dir], envOf(t, storeConfig));
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);
    expect(b.stdout).toContain(`central: backup written to ${dir}`);
    const manifest = JSON.parse(await fsp.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest.service).toBe('central');
    // Password hashes and learners' records: the folder is the backing-up user's alone.
    expect((await fsp.stat(dir)).mode & 0o777).toBe(0o700);
    expect(manifest.database.tables.countries).toBe(2);
    expect(manifest.database.migrations[0]).toBe(central.migrations[central.migrations.length - 1][0]);
    expect(manifest.objects.items.map((o) => o.key)).toEqual(['feedback/u1_a_1.png', 'lesson_one.mp3']);
    expect(manifest.objects.items[1]).toMatchObject({
      size: 14,
      contentType: 'audio/mpeg',
      metadata: { origin: 'test' },
    });
    const before = await readAll(store);

    // A backup goes into a new folder only.
    expect((await runCli(['backup', '--to', dir], envOf(t, storeConfig))).stderr).toContain('is not empty');

    // Changes after the backup: a row added, one changed, an object replaced, one deleted, one added.
    await t.db('countries').insert({ countryid: 'c3', countryname: 'Togo' });
    await t.db('countries').where({ countryid: 'c1' }).update({ countryname: 'Kenya (changed)' });
    await store.put('lesson_one.mp3', Buffer.from('ID3 something else'), { contentType: 'audio/mpeg' });
    await store.delete('feedback/u1_a_1.png');
    await store.put('later.pdf', Buffer.from('%PDF-1.4 later'), { contentType: 'application/pdf' });
    const changed = await readAll(store);

    // Without --yes it says what it would replace and changes nothing.
    const dry = await runCli(['restore', '--from', dir], envOf(t, storeConfig));
    expect(dry.code).toBe(2);
    expect(dry.stdout).toContain('checksums match');
    expect(dry.stdout).toMatch(/objects .*: 2 now; writes the backup's 2 \(0\.0 MB\), deletes 1 it does not hold/);
    expect(dry.stdout).toContain('nothing was changed; run again with --yes');
    expect(await countries(t)).toHaveLength(3);
    expect(await readAll(store)).toEqual(changed);

    const r = await runCli(['restore', '--from', dir, '--yes'], envOf(t, storeConfig));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/restored \d+ rows in \d+ tables and 2 objects; both match the manifest/);
    expect(await countries(t)).toEqual([
      { countryid: 'c1', countryname: 'Kenya' },
      { countryid: 'c2', countryname: 'Ghana' },
    ]);
    expect(await readAll(store)).toEqual(before);
    expect((await store.stat('lesson_one.mp3')).contentType).toBe('audio/mpeg');
    // The restored database is a working one: the service's migrations see it up to date.
    expect((await runCli(['status'], envOf(t, storeConfig))).stdout).toBe('central: up to date\n');
  });

  it('refuses a tampered backup before changing anything', async () => {
    await t.db('countries').insert({ countryid: 'c9', countryname: 'After' });
    await store.put('after.pdf', Buffer.from('%PDF-1.4 after'), { contentType: 'application/pdf' });
    const objectsNow = await readAll(store);
    const file = path.join(dir, 'objects', 'lesson_one.mp3');
    const original = await fsp.readFile(file);
    await fsp.writeFile(file, Buffer.from('ID3 lesson 0ne'));
    try {
      const r = await runCli(['restore', '--from', dir, '--yes'], envOf(t, storeConfig));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('does not match its manifest, refused');
      expect(r.stderr).toContain('objects/lesson_one.mp3: checksum differs from the manifest');
      expect(r.stdout).toBe('');
    } finally {
      await fsp.writeFile(file, original);
    }
    const db = path.join(dir, manifestDbFile(dir));
    await fsp.appendFile(db, 'x');
    const r2 = await runCli(['restore', '--from', dir, '--yes'], envOf(t, storeConfig));
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/database\.(sqlite|pgdump): \d+ bytes, the manifest says \d+/);
    await fsp.writeFile(path.join(dir, 'objects', 'extra.mp3'), 'ID3');
    const r3 = await runCli(['restore', '--from', dir, '--yes'], envOf(t, storeConfig));
    expect(r3.stderr).toContain('objects/extra.mp3: not in the manifest');
    expect(await t.db('countries').where({ countryid: 'c9' }).first('countryid', 'countryname')).toEqual({
      countryid: 'c9',
      countryname: 'After',
    });
    expect(await readAll(store)).toEqual(objectsNow);
  });
});

const KEY = 'operator-held-backup-key-0123456789abcdef0123456789';
const sign = (bytes: Buffer, key = KEY) => `${crypto.createHmac('sha256', key).update(bytes).digest('hex')}\n`;
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

describe.each(['folder', 's3'] as const)('central restore refuses a backup edited on purpose, %s store', (kind) => {
  let t: TestDatabase;
  let storeConfig: ObjectStoreConfig;
  let store: ObjectStore;
  let dir: string;
  let env: Record<string, string>;
  const manifestFile = () => path.join(dir, 'manifest.json');
  const readManifest = async () => JSON.parse(await fsp.readFile(manifestFile(), 'utf8')) as Manifest;
  /** Writes the manifest, and re-signs it only when `signed` (someone holding the key). */
  const writeManifest = async (m: Manifest, signed: boolean) => {
    const bytes = Buffer.from(`${JSON.stringify(m, null, 1)}\n`);
    await fsp.writeFile(manifestFile(), bytes);
    if (signed) await fsp.writeFile(path.join(dir, 'manifest.hmac'), sign(bytes));
  };

  beforeAll(async () => {
    t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    storeConfig =
      kind === 's3'
        ? sandbox.s3(`signed-${kind}-${Date.now() % 100000}`)
        : { kind: 'folder', dir: path.join(sandbox.tmp, 'signed-objects') };
    store = createObjectStore(storeConfig);
    dir = path.join(sandbox.tmp, `signed-backup-${kind}`);
    env = { ...envOf(t, storeConfig), BACKUP_KEY: KEY };
    await t.db('countries').insert({ countryid: 'k1', countryname: 'Kenya' });
    await store.put('lesson_one.mp3', Buffer.from('ID3 lesson one'), { contentType: 'audio/mpeg' });
    expect((await runCli(['backup', '--to', dir], env)).code).toBe(0);
    expect(await fsp.readFile(path.join(dir, 'manifest.hmac'), 'utf8')).toBe(sign(await fsp.readFile(manifestFile())));
    await t.db('countries').insert({ countryid: 'k2', countryname: 'After' });
  }, 120_000);
  afterAll(async () => { await t.dispose(); });

  const unchanged = async () => {
    expect((await countries(t)).map((c) => c.countryid)).toEqual(['k1', 'k2']);
    expect(Object.keys(await readAll(store))).toEqual(['lesson_one.mp3']);
    expect(await readAll(store)).toEqual({ 'lesson_one.mp3': Buffer.from('ID3 lesson one').toString('base64') });
  };

  it('an object replaced and its checksum recomputed in the manifest: the signature no longer matches', async () => {
    const original = await fsp.readFile(manifestFile());
    const m = await readManifest();
    const forged = Buffer.from('ID3 forged lesson');
    await fsp.writeFile(path.join(dir, 'objects', 'lesson_one.mp3'), forged);
    Object.assign(m.objects.items[0], { size: forged.length, sha256: sha256(forged) });
    m.objects.bytes = forged.length;
    await writeManifest(m, false);
    try {
      const r = await runCli(['restore', '--from', dir, '--yes'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        "the manifest's signature does not match: the backup was changed after it was taken, or taken with another key",
      );
      await unchanged();
    } finally {
      await fsp.writeFile(manifestFile(), original);
      await fsp.writeFile(path.join(dir, 'objects', 'lesson_one.mp3'), 'ID3 lesson one');
    }
    // Another key (or none, where one is required) refuses the untouched backup too.
    const other = await runCli(['restore', '--from', dir, '--yes'], {
      ...env,
      BACKUP_KEY: 'another-key-0123456789abcdef0123456789abcdef',
    });
    expect([other.code, other.stderr]).toEqual([1, expect.stringContaining("the manifest's signature does not match")]);
    const production = await runCli(['restore', '--from', dir], {
      ...env,
      NODE_ENV: 'production',
      BACKUP_KEY: '',
      JWT_SECRET: '',
    });
    expect([production.code, production.stderr]).toEqual([
      1,
      expect.stringContaining('BACKUP_KEY (or JWT_SECRET) must be set'),
    ]);
    await unchanged();
  }, 180_000);

  it('even signed, a symbolic link among the objects and a database file outside the folder are refused', async () => {
    const original = await fsp.readFile(manifestFile());
    const originalSignature = await fsp.readFile(path.join(dir, 'manifest.hmac'));
    const putBack = async () => {
      await fsp.writeFile(manifestFile(), original);
      await fsp.writeFile(path.join(dir, 'manifest.hmac'), originalSignature);
    };
    const hostFile = path.join(sandbox.tmp, `host-secret-${kind}.txt`);
    const secret = Buffer.from('root:x:0:0:host secret');
    await fsp.writeFile(hostFile, secret);
    const object = path.join(dir, 'objects', 'lesson_one.mp3');
    await fsp.rename(object, `${object}.kept`);
    await fsp.symlink(hostFile, object);
    const m = await readManifest();
    Object.assign(m.objects.items[0], { size: secret.length, sha256: sha256(secret) });
    await writeManifest(m, true);
    try {
      const r = await runCli(['restore', '--from', dir, '--yes'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('objects/lesson_one.mp3: is a symbolic link, refused');
      await unchanged();
    } finally {
      await fsp.rm(object);
      await fsp.rename(`${object}.kept`, object);
      await putBack();
    }
    const other = path.join(sandbox.tmp, `other-${kind}`);
    await fsp.mkdir(other, { recursive: true });
    const dbFile = manifestDbFile(dir);
    await fsp.copyFile(path.join(dir, dbFile), path.join(other, dbFile));
    const m2 = await readManifest();
    m2.database.file = `../other-${kind}/${dbFile}`;
    await writeManifest(m2, true);
    try {
      const r = await runCli(['restore', '--from', dir, '--yes'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `the manifest names the database file "../other-${kind}/${dbFile}"; a backup's is ${dbFile}, refused`,
      );
      await unchanged();
    } finally {
      await putBack();
    }
    // Untouched, the same backup restores.
    const ok = await runCli(['restore', '--from', dir, '--yes'], env);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect((await countries(t)).map((c) => c.countryid)).toEqual(['k1']);
  }, 180_000);
});

function manifestDbFile(dir: string): string {
  return (JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest).database.file;
}

describe.each(['folder', 's3'] as const)('central backup --link-from the previous backup, %s store', (kind) => {
  let t: TestDatabase;
  let storeConfig: ObjectStoreConfig;
  let store: ObjectStore;
  let env: Record<string, string>;
  const dirOf = (name: string) => path.join(sandbox.tmp, `link-${kind}-${name}`);
  const inode = async (dir: string, key: string) => (await fsp.stat(path.join(dir, 'objects', ...key.split('/')))).ino;

  beforeAll(async () => {
    t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    storeConfig = kind === 's3'
      ? sandbox.s3(`link-${kind}-${Date.now() % 100000}`)
      : { kind: 'folder', dir: path.join(sandbox.tmp, 'link-objects') };
    store = createObjectStore(storeConfig);
    env = { ...envOf(t, storeConfig), BACKUP_KEY: KEY };
  });
  afterAll(async () => { await t.dispose(); });

  it('links unchanged objects, copies changed ones; each folder restores alone, the first pruned', async () => {
    await t.db('countries').insert({ countryid: 'l1', countryname: 'Kenya' });
    await store.put('lesson_one.mp3', Buffer.from('ID3 lesson one'), { contentType: 'audio/mpeg' });
    await store.put('lesson_two.mp3', Buffer.from('ID3 lesson two'), { contentType: 'audio/mpeg' });
    await store.put('feedback/u1_a_1.png', Buffer.from('PNG first'), { contentType: 'image/png' });
    const first = dirOf('first');
    const b1 = await runCli(['backup', '--to', first], env);
    expect([b1.code, b1.stderr]).toEqual([0, '']);
    expect(b1.stdout).toMatch(/objects 3 copied from the store; 0\.0 MB \(\d+ bytes\) read from the store/);

    // Changed since: a row, one object replaced by another of the same size, one added.
    await t.db('countries').insert({ countryid: 'l2', countryname: 'Ghana' });
    await store.put('lesson_two.mp3', Buffer.from('ID3 lesson 2wo'), { contentType: 'audio/mpeg' });
    await store.put('later.pdf', Buffer.from('%PDF-1.4 later'), { contentType: 'application/pdf' });
    const atSecond = await readAll(store);
    const second = dirOf('second');
    const b2 = await runCli(['backup', '--to', second, '--link-from', first], env);
    expect([b2.code, b2.stderr]).toEqual([0, '']);
    const read = Buffer.byteLength('ID3 lesson 2wo') + Buffer.byteLength('%PDF-1.4 later');
    expect(b2.stdout).toContain(`objects 2 linked from ${first}, 0 copied from it, 2 copied from the store; `
      + `0.0 MB (${read} bytes) read from the store`);
    // The same file on disk for what did not change, a new one for what did.
    expect(await inode(second, 'lesson_one.mp3')).toBe(await inode(first, 'lesson_one.mp3'));
    expect(await inode(second, 'feedback/u1_a_1.png')).toBe(await inode(first, 'feedback/u1_a_1.png'));
    expect(await inode(second, 'lesson_two.mp3')).not.toBe(await inode(first, 'lesson_two.mp3'));
    expect(await fsp.readFile(path.join(second, 'objects', 'lesson_two.mp3'), 'utf8')).toBe('ID3 lesson 2wo');
    expect(await fsp.readFile(path.join(first, 'objects', 'lesson_two.mp3'), 'utf8')).toBe('ID3 lesson two');
    const m2 = JSON.parse(await fsp.readFile(path.join(second, 'manifest.json'), 'utf8')) as Manifest;
    expect(m2.objects.items.map((i) => i.key))
      .toEqual(['feedback/u1_a_1.png', 'later.pdf', 'lesson_one.mp3', 'lesson_two.mp3']);
    expect(m2.objects.items.every((i) => typeof i.etag === 'string' && i.etag.length > 0)).toBe(true);
    expect(m2.objects.items.find((i) => i.key === 'lesson_one.mp3'))
      .toMatchObject({ contentType: 'audio/mpeg', sha256: sha256(Buffer.from('ID3 lesson one')) });

    // A previous folder changed after it was taken is not linked from: everything is read from the store.
    const manifest = path.join(second, 'manifest.json');
    const original = await fsp.readFile(manifest);
    await fsp.writeFile(manifest, original.toString('utf8').replace('"lms-backup/1"', '"lms-backup/1" '));
    const third = dirOf('third');
    try {
      const b3 = await runCli(['backup', '--to', third, '--link-from', second], env);
      expect([b3.code, b3.stderr]).toEqual([0, '']);
      expect(b3.stdout).toContain(`not linking from ${second}: ${second}: the manifest's signature does not match`);
      expect(b3.stdout).toContain('objects 4 copied from the store');
      for (const key of ['lesson_one.mp3', 'feedback/u1_a_1.png', 'later.pdf']) {
        expect(await inode(third, key)).not.toBe(await inode(second, key));
      }
    } finally {
      await fsp.writeFile(manifest, original);
    }

    // Pruning the first folder leaves the second whole: after more changes it restores exactly its state.
    await fsp.rm(first, { recursive: true, force: true });
    await store.put('lesson_one.mp3', Buffer.from('ID3 replaced later'), { contentType: 'audio/mpeg' });
    await store.delete('feedback/u1_a_1.png');
    await store.put('extra.pdf', Buffer.from('%PDF-1.4 extra'), { contentType: 'application/pdf' });
    await t.db('countries').insert({ countryid: 'l3', countryname: 'Togo' });
    const r = await runCli(['restore', '--from', second, '--yes'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/restored \d+ rows in \d+ tables and 4 objects; both match the manifest/);
    expect(await readAll(store)).toEqual(atSecond);
    expect((await countries(t)).map((c) => c.countryid)).toEqual(['l1', 'l2']);
  }, 180_000);

  it('reads a file of the previous backup before linking it: a damaged one is copied from the store, '
      + 'and the new backup restores', async () => {
    await store.put('lesson_one.mp3', Buffer.from('ID3 lesson one'), { contentType: 'audio/mpeg' });
    await store.put('lesson_two.mp3', Buffer.from('ID3 lesson two'), { contentType: 'audio/mpeg' });
    const before = await readAll(store);
    const first = dirOf('damaged-first');
    expect((await runCli(['backup', '--to', first], env)).code).toBe(0);
    // Rot on the backup disk: the same length, other bytes; the store still lists the object as unchanged.
    const damaged = path.join(first, 'objects', 'lesson_two.mp3');
    await fsp.writeFile(damaged, 'ID3 lesson tw0');
    const second = dirOf('damaged-second');
    const b = await runCli(['backup', '--to', second, '--link-from', first], env);
    expect(b.code).toBe(0);
    expect(b.stderr).toBe(`central: lesson_two.mp3: not linked from ${first}: its bytes differ from its manifest's `
      + 'SHA-256 (damaged or changed since that backup); copied from the store instead\n');
    expect(b.stdout).toContain(`objects 3 linked from ${first}, 0 copied from it, 1 copied from the store; `);
    expect(await inode(second, 'lesson_one.mp3')).toBe(await inode(first, 'lesson_one.mp3'));
    expect(await inode(second, 'lesson_two.mp3')).not.toBe(await inode(first, 'lesson_two.mp3'));
    expect(await fsp.readFile(path.join(second, 'objects', 'lesson_two.mp3'), 'utf8')).toBe('ID3 lesson two');
    // A file cut short is not linked either.
    await fsp.writeFile(damaged, 'ID3');
    const third = dirOf('damaged-third');
    const b3 = await runCli(['backup', '--to', third, '--link-from', first], env);
    expect(b3.stderr).toContain(`lesson_two.mp3: not linked from ${first}: 3 bytes, its manifest says 14`);
    expect(await fsp.readFile(path.join(third, 'objects', 'lesson_two.mp3'), 'utf8')).toBe('ID3 lesson two');

    await store.put('lesson_two.mp3', Buffer.from('ID3 changed after'), { contentType: 'audio/mpeg' });
    const r = await runCli(['restore', '--from', second, '--yes'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(await readAll(store)).toEqual(before);
  }, 180_000);

  it('writes every file of a backup for its owner alone (0600) and every folder 0700, '
      + 'linked files of an older backup too', async () => {
    await store.put('feedback/deep/u2_a_1.png', Buffer.from('PNG deep'), { contentType: 'image/png' });
    const first = dirOf('modes-first');
    expect((await runCli(['backup', '--to', first], env)).code).toBe(0);
    const modes = async (dir: string) => {
      const found: Record<string, number> = {};
      const walk = async (d: string) => {
        for (const e of await fsp.readdir(d, { withFileTypes: true })) {
          const full = path.join(d, e.name);
          found[path.relative(dir, full)] = (await fsp.stat(full)).mode & 0o777;
          if (e.isDirectory()) await walk(full);
        }
      };
      await walk(dir);
      return found;
    };
    const m1 = await modes(first);
    expect(Object.keys(m1)).toEqual(expect.arrayContaining([
      'manifest.json', 'manifest.hmac', manifestDbFile(first), 'objects', 'objects/feedback/deep/u2_a_1.png']));
    for (const [rel, mode] of Object.entries(m1)) {
      expect([rel, mode.toString(8)]).toEqual([rel, fs.statSync(path.join(first, rel)).isDirectory() ? '700' : '600']);
    }
    // A previous backup written with wider modes: what the new one links is narrowed as well.
    await fsp.chmod(path.join(first, 'objects', 'feedback', 'deep', 'u2_a_1.png'), 0o644);
    const second = dirOf('modes-second');
    const b = await runCli(['backup', '--to', second, '--link-from', first], env);
    expect([b.code, b.stderr]).toEqual([0, '']);
    expect(b.stdout).toMatch(/objects [1-9]\d* linked from/);
    for (const [rel, mode] of Object.entries(await modes(second))) {
      expect([rel, mode.toString(8)]).toEqual([rel, fs.statSync(path.join(second, rel)).isDirectory() ? '700' : '600']);
    }
  }, 180_000);
});
