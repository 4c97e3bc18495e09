import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import { appliedMigrations } from './migrator';
import { commandName, findServing } from './serving';

/**
 * Backups of one service: its database (PostgreSQL with pg_dump in a snapshot the row counts are read in,
 * SQLite with its online backup) and its objects, described by a manifest of row counts and SHA-256 sums.
 * The database is captured first and the objects after it: the services store an object before the row
 * that names it, so every row of the dump finds its object in the copy, and an object written meanwhile is
 * only an extra that no row names (see deploy/README.md).
 */

export const BACKUP_FORMAT = 'lms-backup/1';
export const MANIFEST = 'manifest.json';
/**
 * HMAC-SHA256 (hex) of manifest.json's bytes under the operator's key: a deliberate edit that recomputes the
 * checksums is refused.
 */
export const SIGNATURE = 'manifest.hmac';

/** Where a service keeps its objects: the central object store (folder or S3), the classroom's media folder. */
export interface ObjectSource {
  /** e.g. `folder /srv/lms/objects`, `S3 bucket lms at https://s3.example.org`. */
  describe: string;
  /**
   * Every object, with the store's checksum of its bytes when its listing gives one (an S3 ETag, the folder
   * store's MD5): what `--link-from` compares with the previous backup without downloading the object.
   */
  list(): Promise<Array<{ key: string; size: number; etag?: string }>>;
  read(key: string): Promise<Readable>;
  /** Content type and user metadata, kept in the manifest and given back on restore. */
  info?(key: string): Promise<{ contentType?: string; metadata?: Record<string, string> }>;
  write(key: string, file: string, info: { contentType?: string; metadata?: Record<string, string> }): Promise<void>;
  remove(key: string): Promise<void>;
}

export interface ManifestObject {
  key: string;
  size: number;
  sha256: string;
  /** The store's checksum of the object as listed when the backup was taken (absent: the store gave none). */
  etag?: string;
  contentType?: string;
  metadata?: Record<string, string>;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  service: string;
  started_at: string;
  finished_at: string;
  database: {
    dialect: 'sqlite' | 'pg';
    file: string;
    bytes: number;
    sha256: string;
    /** Rows per table, read in the same snapshot the dump was taken from. */
    tables: Record<string, number>;
    /** Applied migrations, newest first. */
    migrations: string[];
  };
  objects: { store: string; count: number; bytes: number; items: ManifestObject[] };
}

export interface BackupTarget {
  service: string;
  db: Knex;
  /** The service's DATABASE_URL (PostgreSQL tools connect with it). */
  databaseUrl: string;
  objects: ObjectSource;
  /** The key the manifest is signed with and checked against (BACKUP_KEY, else JWT_SECRET). */
  key: string;
  out?: (line: string) => void;
  /** Where warnings go (standard error unless given). */
  warn?: (line: string) => void;
}

export class BackupError extends Error {}

const OBJECTS_DIR = 'objects';
/**
 * A backup's files are its owner's alone, and so is every folder in it: the 0700 top folder guards them where
 * they are, but a copy of its contents (`cp -r`, `rsync -a`, an archive) keeps each file's own mode.
 */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** Sets every file under `dir` to FILE_MODE and every folder to DIR_MODE (symbolic links are left alone). */
async function ownerOnly(dir: string): Promise<void> {
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      await fsp.chmod(full, DIR_MODE);
      await ownerOnly(full);
    } else if (e.isFile()) {
      await fsp.chmod(full, FILE_MODE);
    }
  }
}

function dialectOf(db: Knex): 'sqlite' | 'pg' {
  return db.client.config.client === 'pg' ? 'pg' : 'sqlite';
}

async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

/** A key as a relative path inside the backup's objects folder; nothing that could leave it. */
function objectPath(dir: string, key: string): string {
  const parts = key.split('/');
  if (!key || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0'))) {
    throw new BackupError(`object key ${JSON.stringify(key)} cannot be stored in a backup`);
  }
  return path.join(dir, OBJECTS_DIR, ...parts);
}

/** libpq connection string without the password, and the password for PGPASSWORD (kept out of `ps`). */
function pgConnection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = '';
  // libpq reads %20 as a space but not the `+` a URL's query may carry instead.
  u.search = u.search.replace(/\+/g, '%20');
  return { dbname: u.toString(), env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } };
}

/** The address of a database with any password left out, for messages. */
export function describeDatabase(url: string): string {
  if (!/^postgres(ql)?:\/\//.test(url)) return url;
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, stdin?: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: [stdin ? 'pipe' : 'ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => { if (stderr.length < 8000) stderr += d.toString(); });
    child.on('error', (err) =>
      reject(new BackupError(`cannot run ${cmd}: ${err.message} (install the PostgreSQL client tools)`)),
    );
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new BackupError(`${cmd} failed (exit ${code}): ${stderr.trim()}`)),
    );
    if (stdin) {
      stdin.on('error', (err) => {
        // Killed before its input ends, psql never commits.
        child.kill('SIGKILL');
        reject(err);
      });
      stdin.pipe(child.stdin!);
    }
  });
}

async function tableNames(db: Knex | Knex.Transaction): Promise<string[]> {
  if (db.client.config.client === 'pg') {
    const r = await db.raw(
      'select table_name from information_schema.tables where table_schema = current_schema() ' +
        "and table_type = 'BASE TABLE' order by table_name",
    );
    return r.rows.map((x: { table_name: string }) => x.table_name);
  }
  const rows = await db.raw(
    "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name",
  );
  return (rows as Array<{ name: string }>).map((x) => x.name);
}

async function countRows(db: Knex | Knex.Transaction): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of await tableNames(db)) {
    const row = (await db(t).count({ n: '*' }).first()) as { n: number | string };
    counts[t] = Number(row.n);
  }
  return counts;
}

function sqliteFile(db: Knex): string {
  return (db.client.config.connection as { filename: string }).filename;
}

const openSqlite = (file: string, options?: object) =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  new (require('better-sqlite3') as typeof import('better-sqlite3'))(file, options);

async function dumpDatabase(t: BackupTarget, dir: string): Promise<Manifest['database']> {
  const dialect = dialectOf(t.db);
  let file: string;
  let tables: Record<string, number>;
  if (dialect === 'sqlite') {
    file = 'database.sqlite';
    const source = openSqlite(sqliteFile(t.db), { readonly: true, fileMustExist: true });
    try {
      // SQLite's online backup: a consistent copy while the service keeps writing.
      await source.backup(path.join(dir, file));
    } finally {
      source.close();
    }
    const copy = openSqlite(path.join(dir, file));
    try {
      // One self-contained file (the copy inherits WAL mode, whose side files a reader would create).
      copy.pragma('journal_mode = DELETE');
      tables = {};
      const names = copy
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
        .all() as Array<{ name: string }>;
      for (const { name } of names)
        tables[name] = (copy.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n;
    } finally {
      copy.close();
    }
  } else {
    file = 'database.pgdump';
    const { dbname, env } = pgConnection(t.databaseUrl);
    tables = await t.db.transaction(async (trx) => {
      await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const snapshot = (await trx.raw('select pg_export_snapshot() as s, current_schema() as schema')).rows[0] as {
        s: string;
        schema: string;
      };
      const counts = await countRows(trx);
      // pg_dump reads the snapshot this transaction exported, so the dump holds exactly the rows counted.
      await run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--snapshot=${snapshot.s}`,
        `--schema=${snapshot.schema}`, `--file=${path.join(dir, file)}`, `--dbname=${dbname}`], env);
      return counts;
    });
  }
  const full = path.join(dir, file);
  return {
    dialect,
    file,
    bytes: (await fsp.stat(full)).size,
    sha256: await sha256File(full),
    tables,
    migrations: await appliedMigrations(t.db),
  };
}

/** A previous backup whose files may be linked instead of copied (`--link-from`). */
interface Previous {
  dir: string;
  items: Map<string, ManifestObject>;
}

/** How the objects of a backup were obtained, for its output. */
export interface ObjectTally {
  /** Hard-linked from the previous backup (no copy on disk). */
  linked: number;
  /** Copied from the previous backup's file because a link could not be made (another filesystem). */
  copiedLocally: number;
  /** Read from the store and written. */
  copied: number;
  /** Bytes read from the store. */
  bytesRead: number;
}

/** Copies `from` to `dest` while hashing it; the SHA-256 of what was written. */
async function copyHashing(from: Readable, dest: string): Promise<{ size: number; sha256: string }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) { hash.update(chunk); size += chunk.length; cb(null, chunk); },
  });
  await pipeline(from, tap, fs.createWriteStream(dest, { flags: 'wx', mode: FILE_MODE }));
  return { size, sha256: hash.digest('hex') };
}

/**
 * The previous backup's file of `entry` when it can stand for the object: a regular file inside that folder
 * (never a symbolic link, whose target could be any file of the host) of the manifest's size whose bytes hash
 * to the SHA-256 its signed manifest records. The store's checksum only says the object is unchanged in the
 * store; the file on disk may have rotted or been altered since, and a link would carry that into the new
 * backup, found out only at restore. A file that differs is named on `warn`, and the store is read instead.
 */
async function previousFile(prev: Previous, entry: ManifestObject, warn: (l: string) => void)
  : Promise<string | undefined> {
  if (await notConfined(prev.dir, `${OBJECTS_DIR}/${entry.key}`)) return undefined;
  const file = objectPath(prev.dir, entry.key);
  const size = (await fsp.stat(file)).size;
  const damaged = size !== entry.size
    ? `${size} bytes, its manifest says ${entry.size}`
    : (await sha256File(file)) !== entry.sha256 ? 'its bytes differ from its manifest\'s SHA-256' : undefined;
  if (!damaged) return file;
  warn(`${entry.key}: not linked from ${prev.dir}: ${damaged} (damaged or changed since that backup); `
    + 'copied from the store instead');
  return undefined;
}

/**
 * Puts the previous backup's file at `dest`: a hard link (the same bytes on disk, so each folder stays whole
 * and pruning one never touches another), else a copy checked against the manifest's checksum. False when
 * neither holds (the caller reads the object from the store).
 */
async function takePrevious(file: string, entry: ManifestObject, dest: string, tally: ObjectTally): Promise<boolean> {
  try {
    await fsp.link(file, dest);
    tally.linked += 1;
    return true;
  } catch {
    // Another filesystem, a filesystem without hard links, or the file's link limit: a plain copy.
  }
  try {
    const copy = await copyHashing(fs.createReadStream(file), dest);
    if (copy.size === entry.size && copy.sha256 === entry.sha256) {
      tally.copiedLocally += 1;
      return true;
    }
  } catch {
    // Unreadable: the store has the object.
  }
  await fsp.rm(dest, { force: true });
  return false;
}

async function copyObjects(objects: ObjectSource, dir: string, out: (l: string) => void,
  warn: (l: string) => void, prev?: Previous): Promise<{ objects: Manifest['objects']; tally: ObjectTally }> {
  const items: ManifestObject[] = [];
  const tally: ObjectTally = { linked: 0, copiedLocally: 0, copied: 0, bytesRead: 0 };
  let bytes = 0;
  const listed = await objects.list();
  for (const { key, size: listedSize, etag } of listed) {
    const dest = objectPath(dir, key);
    await fsp.mkdir(path.dirname(dest), { recursive: true, mode: DIR_MODE });
    const before = prev?.items.get(key);
    // The same key, size and store checksum as the previous backup's entry: the same bytes, not downloaded
    // again. A size alone proves nothing (a file replaced by another of the same length).
    const same = before && etag && before.etag === etag && before.size === listedSize ? before : undefined;
    const file = same && prev ? await previousFile(prev, same, warn).catch(() => undefined) : undefined;
    if (same && file && (await takePrevious(file, same, dest, tally))) {
      const info = objects.info ? await objects.info(key).catch(() => ({})) : {};
      items.push({ key, size: same.size, sha256: same.sha256, etag, ...info });
      bytes += same.size;
      continue;
    }
    let copy: { size: number; sha256: string };
    try {
      copy = await copyHashing(await objects.read(key), dest);
    } catch (err) {
      // Deleted between the listing and the copy: it is gone from the service too.
      if (['NotFound', 'ENOENT'].includes((err as { code?: string }).code ?? '')) {
        await fsp.rm(dest, { force: true });
        out(`  ${key}: deleted while the backup ran, left out`);
        continue;
      }
      throw err;
    }
    tally.bytesRead += copy.size;
    // A store whose listing has no checksum (the classroom's media folder) was read to know; an unchanged
    // file is then kept once on disk all the same.
    const read = !etag && before && before.size === copy.size && before.sha256 === copy.sha256 ? before : undefined;
    const again = read && prev ? await previousFile(prev, read, warn).catch(() => undefined) : undefined;
    if (again && (await linkOver(again, dest))) tally.linked += 1;
    else tally.copied += 1;
    const info = objects.info ? await objects.info(key).catch(() => ({})) : {};
    items.push({ key, size: copy.size, sha256: copy.sha256, ...(etag ? { etag } : {}), ...info });
    bytes += copy.size;
  }
  return { objects: { store: objects.describe, count: items.length, bytes, items }, tally };
}

/** Replaces the copy at `dest` by a hard link to `file` (the same bytes); false, the copy kept, when it cannot. */
async function linkOver(file: string, dest: string): Promise<boolean> {
  const tmp = `${dest}.link-${process.pid}`;
  try {
    await fsp.link(file, tmp);
    await fsp.rename(tmp, dest);
    return true;
  } catch {
    await fsp.rm(tmp, { force: true });
    return false;
  }
}

/**
 * The previous backup to link from, when its manifest is signed with this key and is the same service's; a
 * folder changed after it was taken (or signed with another key) is never linked from: every object is then
 * read from the store, and the output says why.
 */
async function previousBackup(t: BackupTarget, from: string, out: (l: string) => void): Promise<Previous | undefined> {
  try {
    const m = await readSignedManifest(from, t.service, t.key);
    return { dir: from, items: new Map(m.objects.items.map((i) => [i.key, i])) };
  } catch (err) {
    out(`${t.service}: not linking from ${from}: ${(err as Error).message}; every object is read from the store`);
    return undefined;
  }
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const sumRows = (t: Record<string, number>) => Object.values(t).reduce((a, b) => a + b, 0);

export interface BackupOptions {
  /**
   * A previous backup of the service: an object whose key, size and store checksum match its manifest's entry
   * is hard-linked from there instead of being downloaded again.
   */
  linkFrom?: string;
}

/**
 * Writes a backup into `dir` (absent or empty); the manifest is written last, so a backup without one is
 * incomplete.
 */
export async function backup(t: BackupTarget, dir: string, o: BackupOptions = {}): Promise<Manifest> {
  const out = t.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  if (fs.existsSync(dir) && (await fsp.readdir(dir)).length)
    throw new BackupError(`${dir} is not empty; back up into a new folder`);
  // A backup holds password hashes and learners' records: its folder is the backing-up user's alone.
  await fsp.mkdir(dir, { recursive: true, mode: DIR_MODE });
  await fsp.chmod(dir, DIR_MODE);
  const started = new Date().toISOString();
  const database = await dumpDatabase(t, dir);
  out(
    `${t.service}: database ${describeDatabase(t.databaseUrl)}: ${Object.keys(database.tables).length} tables, ` +
      `${sumRows(database.tables)} rows, ${mb(database.bytes)}`,
  );
  const prev = o.linkFrom ? await previousBackup(t, o.linkFrom, out) : undefined;
  const warn = t.warn ?? ((l: string) => process.stderr.write(`${t.service}: ${l}\n`));
  const { objects, tally } = await copyObjects(t.objects, dir, out, warn, prev);
  out(
    `${t.service}: objects ${objects.store}: ${objects.count} object${objects.count === 1 ? '' : 's'}, ` +
      `${mb(objects.bytes)}`,
  );
  const fromPrev = prev ? `${tally.linked} linked from ${prev.dir}, ${tally.copiedLocally} copied from it, ` : '';
  out(`${t.service}: objects ${fromPrev}${tally.copied} copied from the store; ${mb(tally.bytesRead)} `
    + `(${tally.bytesRead} bytes) read from the store`);
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    service: t.service,
    started_at: started,
    finished_at: new Date().toISOString(),
    database,
    objects,
  };
  const tmp = path.join(dir, `${MANIFEST}.tmp`);
  const text = `${JSON.stringify(manifest, null, 1)}\n`;
  // The dump (pg_dump's and SQLite's own files follow the umask) and the linked files (a previous backup's,
  // perhaps taken before this rule) are made the owner's alone too, before the manifest says it is done.
  await ownerOnly(dir);
  await fsp.writeFile(path.join(dir, SIGNATURE), `${signatureOf(t.key, Buffer.from(text))}\n`, { mode: FILE_MODE });
  await fsp.writeFile(tmp, text, { mode: FILE_MODE });
  await fsp.rename(tmp, path.join(dir, MANIFEST));
  out(`${t.service}: backup written to ${dir}`);
  return manifest;
}

/** The one name each dialect's dump has: a manifest naming any other file (`../other/database.sqlite`) is refused. */
const DUMP_FILE: Record<Manifest['database']['dialect'], string> = { sqlite: 'database.sqlite', pg: 'database.pgdump' };

/**
 * Why `rel` (a `/`-separated path inside the backup folder) cannot be read as one of its files: any part of
 * the way that is a symbolic link (which could point at any readable file of the host, then served by /media)
 * or the file not being a regular file. Undefined when it is a regular file inside the folder.
 */
async function notConfined(dir: string, rel: string): Promise<string | undefined> {
  let at = dir;
  const parts = rel.split('/');
  for (let i = 0; i < parts.length; i++) {
    at = path.join(at, parts[i]);
    let st: fs.Stats;
    try {
      st = await fsp.lstat(at);
    } catch {
      return 'missing';
    }
    if (st.isSymbolicLink()) {
      const which = i === parts.length - 1 ? '' : `${parts.slice(0, i + 1).join('/')} `;
      return `${which}is a symbolic link, refused`;
    }
    if (i < parts.length - 1 && !st.isDirectory()) return 'missing';
    if (i === parts.length - 1 && !st.isFile()) return 'not a regular file, refused';
  }
  return undefined;
}

const signatureOf = (key: string, bytes: Buffer): string =>
  crypto.createHmac('sha256', key).update(bytes).digest('hex');

/** Reads the manifest and checks its signature, format and service (not yet the files). */
async function readSignedManifest(dir: string, service: string, key: string): Promise<Manifest> {
  let manifest: Manifest;
  let bytes: Buffer;
  try {
    if (!(await fsp.lstat(path.join(dir, MANIFEST))).isFile()) throw new Error('not a file');
    bytes = await fsp.readFile(path.join(dir, MANIFEST));
    manifest = JSON.parse(bytes.toString('utf8')) as Manifest;
  } catch {
    throw new BackupError(`${dir} has no readable ${MANIFEST}: not a backup, or one that did not finish`);
  }
  const given = (await fsp.readFile(path.join(dir, SIGNATURE), 'utf8').catch(() => '')).trim();
  const signature = signatureOf(key, bytes);
  const matches = given.length === signature.length
    && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(signature));
  if (!matches) {
    const what = given ? 'the manifest\'s signature does not match' : `no ${SIGNATURE}`;
    throw new BackupError(`${dir}: ${what}: the backup was changed after it was taken, or taken with another key `
      + '(BACKUP_KEY, else JWT_SECRET, as it was when the backup was made); refused');
  }
  if (manifest.format !== BACKUP_FORMAT)
    throw new BackupError(`${dir}: unknown backup format ${JSON.stringify(manifest.format)}`);
  if (manifest.service !== service)
    throw new BackupError(`${dir} is a backup of ${manifest.service}, not of ${service}`);
  return manifest;
}

/** Reads the manifest, checks its signature and every file against it; throws naming each file that does not match. */
export async function verifyBackup(dir: string, service: string, key: string): Promise<Manifest> {
  const manifest = await readSignedManifest(dir, service, key);
  const dumpFile = DUMP_FILE[manifest.database?.dialect];
  if (!dumpFile || manifest.database.file !== dumpFile) {
    const named = JSON.stringify(manifest.database?.file);
    throw new BackupError(`${dir}: the manifest names the database file ${named}; a backup's is `
      + `${dumpFile ?? 'database.sqlite or database.pgdump'}, refused`);
  }
  const objectsDir = await fsp.lstat(path.join(dir, OBJECTS_DIR)).catch(() => undefined);
  if (objectsDir && !objectsDir.isDirectory()) {
    throw new BackupError(`${path.join(dir, OBJECTS_DIR)} is not a folder (a symbolic link?), refused`);
  }
  const bad: string[] = [];
  const check = async (rel: string, full: string, size: number, sha256: string) => {
    const why = await notConfined(dir, rel);
    if (why) {
      bad.push(`${rel}: ${why}`);
      return;
    }
    const st = await fsp.stat(full);
    if (st.size !== size) bad.push(`${rel}: ${st.size} bytes, the manifest says ${size}`);
    else if ((await sha256File(full)) !== sha256) bad.push(`${rel}: checksum differs from the manifest`);
  };
  await check(
    manifest.database.file,
    path.join(dir, manifest.database.file),
    manifest.database.bytes,
    manifest.database.sha256,
  );
  const expected = new Set<string>();
  for (const o of manifest.objects.items) {
    const full = objectPath(dir, o.key);
    expected.add(full);
    await check(`${OBJECTS_DIR}/${o.key}`, full, o.size, o.sha256);
  }
  for (const f of await listFiles(path.join(dir, OBJECTS_DIR))) {
    if (!expected.has(f)) bad.push(`${path.relative(dir, f)}: not in the manifest`);
  }
  if (bad.length) throw new BackupError(`${dir} does not match its manifest, refused:\n  ${bad.join('\n  ')}`);
  return manifest;
}

async function listFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = await fsp.readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(d, e.name);
      // A symbolic link is listed as a file, never followed: it is then refused as not in the manifest.
      if (e.isDirectory()) await walk(full);
      else found.push(full);
    }
  };
  await walk(root);
  return found;
}

/**
 * Exit codes of `restore`; each says what state the database and the objects are in.
 * 0 restored; 1 failed or refused before anything was written; 2 usage, or no `--yes` (nothing written);
 * 3 refused because running instances serve the database (nothing written); 4 failed after some of the
 * backup's objects were written but before the database was replaced (the database is unchanged); 5 the
 * database was replaced but a later step failed.
 */
export const RESTORE_EXIT = {
  restored: 0, unchanged: 1, usage: 2, serving: 3, objectsOnly: 4, databaseReplaced: 5,
} as const;

/** A restore that stopped; `code` is its exit code (RESTORE_EXIT) and the message says what state it left. */
export class RestoreError extends BackupError {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

export interface RestoreResult {
  /** Printed before anything is replaced. */
  plan: string[];
  restored: boolean;
}

export interface RestoreOptions {
  /** Replace the database and the objects (`--yes`); otherwise only say what would be replaced. */
  confirm: boolean;
  /** Replace them even while running instances serve the database (`--while-serving`). */
  whileServing?: boolean;
}

/** Rows per table of an SQLite file. */
function countSqlite(db: ReturnType<typeof openSqlite>): Record<string, number> {
  const counts: Record<string, number> = {};
  const names = db
    .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
    .all() as Array<{ name: string }>;
  for (const { name } of names)
    counts[name] = (db.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n;
  return counts;
}

const tablesDiffer = (found: Record<string, number>, expected: Record<string, number>): string[] =>
  [...new Set([...Object.keys(found), ...Object.keys(expected)])]
    .filter((k) => found[k] !== expected[k])
    .map((k) => `${k}: ${found[k] ?? 'absent'} rows, the manifest says ${expected[k] ?? 'absent'}`);

/**
 * Reads the backup's database before anything is written: an SQLite file must pass SQLite's own check and
 * hold the manifest's rows (what the page copy then writes is exactly this file); a PostgreSQL dump must have
 * a readable table of contents, returned for the restore (its rows are checked inside the restore's
 * transaction, see restoreDatabase).
 */
async function checkDump(t: BackupTarget, dir: string, m: Manifest): Promise<string> {
  const file = path.join(dir, m.database.file);
  if (m.database.dialect === 'sqlite') {
    let counts: Record<string, number>;
    try {
      const db = openSqlite(file, { readonly: true, fileMustExist: true });
      try {
        const check = db.pragma('quick_check', { simple: true });
        if (check !== 'ok') throw new Error(String(check));
        counts = countSqlite(db);
      } finally {
        db.close();
      }
    } catch (err) {
      throw new BackupError(
        `${dir}: ${m.database.file} is not a sound SQLite database (${(err as Error).message}); refused`,
      );
    }
    const differ = tablesDiffer(counts, m.database.tables);
    if (differ.length)
      throw new BackupError(`${dir}: ${m.database.file} differs from the manifest, refused:\n  ${differ.join('\n  ')}`);
    return '';
  }
  const { env } = pgConnection(t.databaseUrl);
  return new Promise<string>((resolve, reject) => {
    const c = spawn('pg_restore', ['--list', file], { env: { ...env, PGAPPNAME: commandName(t.service) } });
    let s = '';
    let e = '';
    c.stdout.on('data', (d: Buffer) => { s += d.toString(); });
    c.stderr.on('data', (d: Buffer) => { if (e.length < 2000) e += d.toString(); });
    c.on('error', (err) =>
      reject(new BackupError(`cannot run pg_restore: ${err.message} (install the PostgreSQL client tools)`)),
    );
    c.on('close', (code) =>
      code === 0
        ? resolve(s)
        : reject(
            new BackupError(`${dir}: pg_restore cannot read ${m.database.file} (exit ${code}: ${e.trim()}); refused`),
          ),
    );
  });
}

/**
 * Replaces the database with the backup's, completely or not at all: SQLite's online backup writes the live
 * file in one write transaction; on PostgreSQL one transaction drops the schema's tables and functions, loads
 * the dump and checks every table's rows against the manifest, and any error rolls all of it back.
 */
async function restoreDatabase(t: BackupTarget, dir: string, m: Manifest, toc: string): Promise<void> {
  const file = path.join(dir, m.database.file);
  if (m.database.dialect === 'sqlite') {
    const source = openSqlite(file, { readonly: true, fileMustExist: true });
    try {
      // The online backup in reverse: page by page into the live file, under SQLite's own locking.
      await source.backup(sqliteFile(t.db));
    } finally {
      source.close();
    }
    return;
  }
  const { dbname, env: pgEnv } = pgConnection(t.databaseUrl);
  const env = { ...pgEnv, PGAPPNAME: commandName(t.service) };
  const schema = (await t.db.raw('select current_schema() as s')).rows[0].s as string;
  // The dump's own schema entry is left out (the schema exists); every table of the schema is dropped first.
  const listFile = path.join(path.dirname(file), `.restore-list-${process.pid}`);
  await fsp.writeFile(listFile, toc.split('\n').filter((l) => !/^\d+;\s*\d+\s+\d+\s+SCHEMA\s/.test(l)).join('\n'),
    { mode: FILE_MODE });
  try {
    const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
    const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
    const tableDrops = (await tableNames(t.db)).map((n) => `DROP TABLE IF EXISTS ${q(schema)}.${q(n)} CASCADE;`);
    // The schema's functions (the triggers' own) are in the dump too, so they go with the tables.
    const fns = await t.db.raw(
      `select p.proname as name, pg_get_function_identity_arguments(p.oid) as args from pg_proc p
       join pg_namespace n on n.oid = p.pronamespace where n.nspname = ? and p.prokind = 'f'`, [schema]);
    const fnDrops = (fns.rows as Array<{ name: string; args: string }>)
      .map((f) => `DROP FUNCTION IF EXISTS ${q(schema)}.${q(f.name)}(${f.args}) CASCADE;`);
    const drops = [...tableDrops, ...fnDrops].join('\n');
    // Inside the transaction: rows that differ from the manifest roll the whole restore back.
    const tables = Object.entries(m.database.tables);
    const check = [
      'DO $lms_check$ DECLARE n bigint; bad text := \'\'; extra text; BEGIN',
      ...tables.map(
        ([name, rows]) =>
          `SELECT count(*) INTO n FROM ${q(schema)}.${q(name)}; IF n <> ${Number(rows)} THEN ` +
          `bad := bad || format(E'\\n  %s: %s rows, the manifest says %s', ${lit(name)}, n, ${Number(rows)}); END IF;`,
      ),
      "SELECT string_agg(table_name::text, ', ') INTO extra FROM information_schema.tables " +
        `WHERE table_schema = ${lit(schema)}` +
        " AND table_type = 'BASE TABLE' AND NOT (table_name::text = ANY " +
        `(ARRAY[${tables.map(([n]) => lit(n)).join(', ')}]::text[]));`,
      'IF extra IS NOT NULL THEN bad := bad || E\'\\n  tables not in the manifest: \' || extra; END IF;',
      'IF bad <> \'\' THEN RAISE EXCEPTION \'the restored rows differ from the manifest:%\', bad; END IF;',
      'END $lms_check$;',
    ].join('\n');
    const sqlStream = spawn(
      'pg_restore',
      ['--no-owner', '--no-privileges', `--use-list=${listFile}`, '--file=-', file],
      { env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve) => sqlStream.once('close', resolve));
    const script = Readable.from((async function* () {
      yield `${drops}\n`;
      for await (const chunk of sqlStream.stdout) yield chunk as Buffer;
      // A script cut short must never reach psql's end of input, where its transaction would commit.
      const code = await exited;
      if (code !== 0) throw new BackupError(`pg_restore failed (exit ${code}); the database was not changed`);
      yield `\n${check}\n`;
    })());
    await run(
      'psql',
      ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '--single-transaction', '-f', '-', `--dbname=${dbname}`],
      env,
      script,
    );
  } finally {
    await fsp.rm(listFile, { force: true });
  }
}

/**
 * Checks the backup, says what it will replace, and (with `confirm`) replaces the database and the objects:
 * the backup's objects are written first, then the database, then objects the backup does not hold are
 * deleted, so that at no moment does a row name an object that is not there. Afterwards the row counts are
 * compared with the manifest. Refuses (RestoreError, code 3) while running instances serve the database,
 * unless `whileServing`. A failure after something was written is a RestoreError saying what state it left.
 */
export async function restore(t: BackupTarget, dir: string, o: RestoreOptions): Promise<RestoreResult> {
  const out = t.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const m = await verifyBackup(dir, t.service, t.key);
  const dialect = dialectOf(t.db);
  if (m.database.dialect !== dialect) {
    throw new BackupError(
      `${dir} holds a ${m.database.dialect === 'pg' ? 'PostgreSQL' : 'SQLite'} database; ` +
        `this ${t.service} uses ${dialect === 'pg' ? 'PostgreSQL' : 'SQLite'}`,
    );
  }
  const toc = await checkDump(t, dir, m);
  const now = await countRows(t.db);
  const current = await t.objects.list();
  const inBackup = new Set(m.objects.items.map((i) => i.key));
  const extra = current.filter((i) => !inBackup.has(i.key));
  const plan = [
    `${t.service}: restore from ${dir} (taken ${m.started_at} – ${m.finished_at}; checksums match)`,
    `  database ${describeDatabase(t.databaseUrl)}: replaces ${Object.keys(now).length} tables holding ` +
      `${sumRows(now)} rows with the backup's ${Object.keys(m.database.tables).length} tables, ` +
      `${sumRows(m.database.tables)} rows (last migration ${m.database.migrations[0] ?? 'none'})`,
    `  objects ${t.objects.describe}: ${current.length} now; writes the backup's ${m.objects.count} ` +
      `(${mb(m.objects.bytes)}), deletes ${extra.length} it does not hold`,
  ];
  const serving = await findServing(t.db, t.service, t.databaseUrl);
  try {
    const servingLines = serving.instances.map((l) => `    ${l}`);
    const n = serving.instances.length;
    const units = dialect === 'pg' ? ['session', 'sessions'] : ['process', 'processes'];
    const instances = `running ${t.service} instances (${n} ${units[n === 1 ? 0 : 1]})`;
    if (n) plan.push(`  served now by ${instances}:`, ...servingLines);
    for (const l of plan) out(l);
    if (!o.confirm) {
      if (n && !o.whileServing)
        out(`${t.service}: stop them first; with --yes it would refuse while they serve the database`);
      out(`${t.service}: nothing was changed; run again with --yes to replace them`);
      return { plan, restored: false };
    }
    if (n) {
      if (!o.whileServing) {
        throw new RestoreError(
          RESTORE_EXIT.serving,
          `${t.service}: refused: ${instances} serve ` +
            `${describeDatabase(t.databaseUrl)}:\n${servingLines.join('\n')}\n` +
            'Stop them first (' +
            `${t.service === 'central' ? "systemctl stop 'lms-central@*'" : `systemctl stop lms-${t.service}`}), ` +
            'or run again with --while-serving to ' +
            'replace the database underneath them; nothing was changed',
        );
      }
      out(`${t.service}: --while-serving: replacing the database underneath them`);
    }
    return await replace(t, dir, m, toc, extra, out, plan);
  } finally {
    serving.release();
  }
}

async function replace(t: BackupTarget, dir: string, m: Manifest, toc: string, extra: Array<{ key: string }>,
  out: (l: string) => void, plan: string[]): Promise<RestoreResult> {
  const because = (err: unknown) => (err instanceof Error ? err.message : String(err));
  let written = 0;
  try {
    for (const i of m.objects.items) {
      await t.objects.write(i.key, objectPath(dir, i.key), { contentType: i.contentType, metadata: i.metadata });
      written += 1;
    }
    await restoreDatabase(t, dir, m, toc);
  } catch (err) {
    const stage =
      written < m.objects.count
        ? `writing the backup's object ${m.objects.items[written].key}`
        : 'replacing the database';
    if (!written) {
      throw new RestoreError(RESTORE_EXIT.unchanged, `${t.service}: restore failed ${stage}: ${because(err)}\n`
        + 'Nothing was changed: the database and the objects are as they were.');
    }
    throw new RestoreError(
      RESTORE_EXIT.objectsOnly,
      `${t.service}: restore failed ${stage}: ${because(err)}\n` +
        `The database was not changed. ${written} of the backup's ${m.objects.count} objects were written ` +
        "(new ones added, those of the same key replaced by the backup's); no object was deleted. " +
        'Run the restore again to finish it.',
    );
  }
  const replaced = `The database was replaced by the backup's (${sumRows(m.database.tables)} rows)`;
  try {
    for (const i of extra) await t.objects.remove(i.key);
  } catch (err) {
    throw new RestoreError(
      RESTORE_EXIT.databaseReplaced,
      `${t.service}: restore failed deleting objects the backup does not hold: ${because(err)}\n` +
        `${replaced} and all its objects were written; some of the ${extra.length} objects it ` +
        'does not hold are left (no row names them). Run the restore again to delete them.',
    );
  }
  const after = dialectOf(t.db) === 'sqlite' ? await countSqliteFile(sqliteFile(t.db)) : await countRows(t.db);
  const differ = tablesDiffer(after, m.database.tables);
  const objectsAfter = await t.objects.list();
  if (objectsAfter.length !== m.objects.count) {
    differ.push(`${objectsAfter.length} objects, the manifest says ${m.objects.count}`);
  }
  if (differ.length) {
    throw new RestoreError(
      RESTORE_EXIT.databaseReplaced,
      `${t.service}: after the restore the data differs from the manifest ` +
        `(written meanwhile by a running instance?):\n  ${differ.join('\n  ')}\n` +
        `${replaced} and its objects were written.`,
    );
  }
  out(
    `${t.service}: restored ${sumRows(after)} rows in ${Object.keys(after).length} tables and ` +
      `${m.objects.count} objects; both match the manifest`,
  );
  if (m.database.migrations.length)
    out(`${t.service}: run migrate if this release has migrations newer than ${m.database.migrations[0]}`);
  return { plan, restored: true };
}

async function countSqliteFile(file: string): Promise<Record<string, number>> {
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    return countSqlite(db);
  } finally {
    db.close();
  }
}

/** A folder of files as an object source (the classroom's media folder); keys are `/`-separated relative paths. */
export function folderObjects(root: string, skip: (rel: string) => boolean = () => false): ObjectSource {
  const abs = path.resolve(root);
  const full = (key: string) => path.join(abs, ...key.split('/'));
  return {
    describe: `folder ${abs}`,
    async list() {
      const files = await listFiles(abs);
      const items: Array<{ key: string; size: number }> = [];
      for (const f of files.sort()) {
        const key = path.relative(abs, f).split(path.sep).join('/');
        if (skip(key)) continue;
        // A symbolic link in the media folder is not media: its target is nobody's to put in a backup.
        const st = await fsp.lstat(f);
        if (!st.isFile()) continue;
        items.push({ key, size: st.size });
      }
      return items;
    },
    async read(key) {
      return fs.createReadStream(full(key));
    },
    async write(key, file) {
      const dest = full(key);
      await fsp.mkdir(path.dirname(dest), { recursive: true });
      const tmp = `${dest}.restore-${process.pid}`;
      await fsp.copyFile(file, tmp);
      await fsp.rename(tmp, dest);
    },
    async remove(key) {
      await fsp.rm(full(key), { force: true });
    },
  };
}

/**
 * `backup --to DIR [--link-from PREVIOUS]` | `restore --from DIR [--yes] [--while-serving]` of a service's
 * command line; exit code (restore: RESTORE_EXIT).
 */
export async function runBackupCommand(
  cmd: string,
  args: string[],
  target: () => BackupTarget,
): Promise<number | undefined> {
  if (cmd !== 'backup' && cmd !== 'restore') return undefined;
  const flag = cmd === 'backup' ? '--to' : '--from';
  const i = args.indexOf(flag);
  const dir = i >= 0 ? args[i + 1] : undefined;
  if (!dir) {
    process.stderr.write(
      cmd === 'backup'
        ? 'usage: npm run backup -w <service> -- --to DIR [--link-from PREVIOUS_BACKUP_DIR]\n'
        : 'usage: npm run restore -w <service> -- --from DIR [--yes] [--while-serving]\n',
    );
    return 2;
  }
  // npm runs a workspace's script in the workspace's folder; a relative DIR means the caller's folder.
  const cwd = process.env.INIT_CWD ?? process.cwd();
  const full = path.resolve(cwd, dir);
  const t = target();
  if (cmd === 'backup') {
    const l = args.indexOf('--link-from');
    if (l >= 0 && !args[l + 1]) {
      process.stderr.write('usage: npm run backup -w <service> -- --to DIR [--link-from PREVIOUS_BACKUP_DIR]\n');
      return 2;
    }
    await backup(t, full, { linkFrom: l >= 0 ? path.resolve(cwd, args[l + 1]) : undefined });
    return 0;
  }
  try {
    const r = await restore(t, full, {
      confirm: args.includes('--yes'),
      whileServing: args.includes('--while-serving'),
    });
    return r.restored ? RESTORE_EXIT.restored : RESTORE_EXIT.usage;
  } catch (err) {
    if (!(err instanceof RestoreError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return err.code;
  }
}
