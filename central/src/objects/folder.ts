import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { repoRoot } from '@lms/db';
import {
  ObjectStoreError, assertValidKey, assertValidPrefix, isReadable, normaliseOptions, toBuffer,
  type ListedObject, type ObjectBody, type ObjectInfo, type ObjectStore, type PutOptions, type StoredObject,
} from './types';
import { SPOOL_OWNER, ownerGone } from '../http/spool';

export interface FolderStoreConfig {
  /** Relative to the repository root, or absolute. */
  dir: string;
}

interface MetaFile {
  contentType: string;
  metadata: Record<string, string>;
  etag: string;
  size: number;
}

// Dot-names cannot be keys (see assertValidKey), so these never collide with objects.
const TMP_DIR = '.tmp';
const META_DIR = '.meta';
/** How much of an object may wait in memory for the disk while it is written. */
const WRITE_QUEUE_BYTES = 1024 * 1024;

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

async function ignoreMissing(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (err) {
    if (errno(err) !== 'ENOENT') throw err;
  }
}

/**
 * Objects as plain files under one folder. A put writes a temporary file in the same folder tree, fsyncs it and
 * renames it into place, so a reader sees either the old object or the complete new one, never a partial file.
 * Metadata lives in a sidecar JSON under `.meta/` written just before the object's rename.
 */
export function createFolderStore(config: FolderStoreConfig): ObjectStore {
  const root = path.resolve(repoRoot, config.dir);
  const tmpRoot = path.join(root, TMP_DIR);
  const metaRoot = path.join(root, META_DIR);

  const fileOf = (key: string) => path.join(root, ...key.split('/'));
  const metaOf = (key: string) => path.join(metaRoot, ...key.split('/')) + '.json';

  function location(key: string) {
    return path.posix.join(config.dir.split(path.sep).join('/'), key);
  }

  async function readMeta(key: string): Promise<MetaFile | undefined> {
    try {
      return JSON.parse(await fsp.readFile(metaOf(key), 'utf8')) as MetaFile;
    } catch (err) {
      if (errno(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Renames into place; a concurrent delete may prune the parent folder in between, so retry once. */
  async function moveInto(from: string, to: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await fsp.mkdir(path.dirname(to), { recursive: true });
      try {
        await fsp.rename(from, to);
        return;
      } catch (err) {
        if (errno(err) !== 'ENOENT' || attempt > 0) throw err;
      }
    }
  }

  /** Removes now-empty folders from `dir` up to (not including) `stop`, so a key can later become a file name. */
  async function prune(dir: string, stop: string): Promise<void> {
    while (dir.startsWith(stop + path.sep)) {
      try {
        await fsp.rmdir(dir);
      } catch {
        return;
      }
      dir = path.dirname(dir);
    }
  }

  async function writeTemp(body: ObjectBody): Promise<{ tmp: string; size: number; etag: string }> {
    await fsp.mkdir(tmpRoot, { recursive: true });
    const tmp = path.join(tmpRoot, `${SPOOL_OWNER}-${randomUUID()}`);
    const handle = await fsp.open(tmp, 'wx');
    const md5 = createHash('md5');
    let size = 0;
    try {
      const source = isReadable(body) ? body : Readable.from([toBuffer(body)]);
      // Chunks queue in the write stream while earlier ones are written, and go to the disk together
      // (one writev), so the source is read on while the disk writes instead of waiting for each write.
      const out = fs.createWriteStream('', { fd: handle.fd, autoClose: false, highWaterMark: WRITE_QUEUE_BYTES });
      await pipeline(source, async function* (chunks: AsyncIterable<Buffer | string>) {
        for await (const chunk of chunks) {
          const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          md5.update(buf);
          size += buf.length;
          yield buf;
        }
      }, out);
      await handle.sync();
      await handle.close();
    } catch (err) {
      await handle.close().catch(() => undefined);
      await ignoreMissing(fsp.unlink(tmp));
      throw err;
    }
    return { tmp, size, etag: md5.digest('hex') };
  }

  return {
    kind: 'folder',

    async put(key: string, body: ObjectBody, options?: PutOptions): Promise<StoredObject> {
      assertValidKey(key);
      const { contentType, metadata } = normaliseOptions(options);
      let written: { tmp: string; size: number; etag: string } | undefined;
      let metaTmp: string | undefined;
      let metaMoved = false;
      try {
        written = await writeTemp(body);
        const meta: MetaFile = { contentType, metadata, etag: written.etag, size: written.size };
        metaTmp = path.join(tmpRoot, `${SPOOL_OWNER}-${randomUUID()}.json`);
        await fsp.writeFile(metaTmp, JSON.stringify(meta), { flag: 'wx' });
        await moveInto(metaTmp, metaOf(key));
        metaTmp = undefined;
        metaMoved = true;
        await moveInto(written.tmp, fileOf(key));
        return {
          Location: location(key),
          ETag: written.etag,
          Bucket: config.dir,
          Key: key,
          size: written.size,
          contentType,
        };
      } catch (err) {
        if (written) await ignoreMissing(fsp.unlink(written.tmp)).catch(() => undefined);
        if (metaTmp) await ignoreMissing(fsp.unlink(metaTmp)).catch(() => undefined);
        // The object never landed: a sidecar with no object under it would describe nothing.
        if (metaMoved && !(await fsp.stat(fileOf(key)).then((st) => st.isFile(), () => false))) {
          await ignoreMissing(fsp.unlink(metaOf(key))).catch(() => undefined);
        }
        const code = errno(err);
        if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOTEMPTY') {
          throw new ObjectStoreError(
            'Conflict',
            `Cannot store object ${key}: a folder or object in its path has the same name`,
            { cause: err },
          );
        }
        throw new ObjectStoreError('Failed', `Cannot store object ${key}: ${(err as Error).message}`, { cause: err });
      }
    },

    async get(key: string, range?: { start: number; end: number }): Promise<Readable> {
      assertValidKey(key);
      let handle: FileHandle;
      try {
        handle = await fsp.open(fileOf(key), 'r');
        if (!(await handle.stat()).isFile()) {
          await handle.close();
          throw Object.assign(new Error('not a file'), { code: 'ENOENT' });
        }
      } catch (err) {
        throw notFoundOr(err, key);
      }
      // Opened before returning, so a missing object rejects here rather than as a late stream error.
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    },

    async stat(key: string): Promise<ObjectInfo> {
      assertValidKey(key);
      let st: fs.Stats;
      try {
        st = await fsp.stat(fileOf(key));
      } catch (err) {
        throw notFoundOr(err, key);
      }
      if (!st.isFile()) throw new ObjectStoreError('NotFound', `Object not found: ${key}`);
      const meta = await readMeta(key);
      const etag = meta && meta.size === st.size ? meta.etag : await md5OfFile(fileOf(key));
      return {
        key,
        size: st.size,
        etag,
        lastModified: st.mtime.toISOString(),
        contentType: meta?.contentType ?? 'application/octet-stream',
        metadata: meta?.metadata ?? {},
      };
    },

    async delete(key: string): Promise<void> {
      assertValidKey(key);
      try {
        const file = fileOf(key);
        const st = await fsp.lstat(file).catch((err) => {
          if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return undefined;
          throw err;
        });
        // A folder under the key's name holds other objects ("a" when "a/b" exists): nothing to delete.
        if (st && !st.isDirectory()) await ignoreMissing(fsp.unlink(file));
        await ignoreMissing(fsp.unlink(metaOf(key)));
        await prune(path.dirname(file), root);
        await prune(path.dirname(metaOf(key)), metaRoot);
      } catch (err) {
        throw new ObjectStoreError('Failed', `Cannot delete object ${key}: ${(err as Error).message}`, { cause: err });
      }
    },

    async probe(): Promise<void> {
      await fsp.mkdir(tmpRoot, { recursive: true });
      const file = path.join(tmpRoot, `probe-${randomUUID()}`);
      await fsp.writeFile(file, 'ok', { flag: 'wx' });
      await fsp.unlink(file);
    },

    async sweepTemporary(): Promise<string[]> {
      let names: string[];
      try {
        names = await fsp.readdir(tmpRoot);
      } catch (err) {
        if (errno(err) === 'ENOENT') return [];
        throw err;
      }
      const removed: string[] = [];
      for (const name of names) {
        if (!ownerGone(name)) continue;
        await ignoreMissing(fsp.unlink(path.join(tmpRoot, name)));
        removed.push(name);
      }
      return removed;
    },

    async list(prefix = ''): Promise<ListedObject[]> {
      assertValidPrefix(prefix);
      const out: ListedObject[] = [];
      // Only the folder the prefix points into can hold matches; start the walk there.
      const slash = prefix.lastIndexOf('/');
      const base = slash < 0 ? '' : prefix.slice(0, slash);
      async function walk(rel: string): Promise<void> {
        let entries: fs.Dirent[];
        try {
          entries = await fsp.readdir(rel ? fileOf(rel) : root, { withFileTypes: true });
        } catch (err) {
          if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return;
          throw err;
        }
        for (const entry of entries) {
          if (entry.name.startsWith('.')) continue;
          const key = rel ? `${rel}/${entry.name}` : entry.name;
          if (entry.isDirectory()) {
            if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(key);
          } else if (entry.isFile() && key.startsWith(prefix)) {
            const st = await fsp.stat(fileOf(key));
            const meta = await readMeta(key);
            out.push({
              key,
              size: st.size,
              etag: meta && meta.size === st.size ? meta.etag : await md5OfFile(fileOf(key)),
              lastModified: st.mtime.toISOString(),
            });
          }
        }
      }
      await walk(base);
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
  };
}

function notFoundOr(err: unknown, key: string): ObjectStoreError {
  const code = errno(err);
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') {
    return new ObjectStoreError('NotFound', `Object not found: ${key}`, { cause: err });
  }
  return new ObjectStoreError('Failed', `Cannot read object ${key}: ${(err as Error).message}`, { cause: err });
}

async function md5OfFile(file: string): Promise<string> {
  const md5 = createHash('md5');
  for await (const chunk of fs.createReadStream(file)) md5.update(chunk as Buffer);
  return md5.digest('hex');
}
