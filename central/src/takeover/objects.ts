import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertValidKey, createS3Store, isObjectNotFound, type ObjectStore } from '../objects';

/** Where the original's objects are read from: its S3 bucket, or a folder holding a copy of it (`aws s3 sync`). */
export interface ObjectSource {
  label: string;
  /** Throws, naming the bucket or folder, when there is nothing to read there. */
  check(): Promise<void>;
  list(): AsyncIterable<{ key: string; size: number; etag?: string }>;
  read(key: string): Promise<Readable>;
  contentType(key: string): Promise<string | undefined>;
}

export function parseObjectSource(spec: string): ObjectSource {
  if (spec.startsWith('s3://')) {
    const u = new URL(spec);
    const bucket = decodeURIComponent(u.pathname.replace(/^\/|\/$/g, ''));
    if (!bucket || bucket.includes('/'))
      throw new Error('--objects-from s3://ACCESS:SECRET@HOST:PORT/BUCKET names no bucket');
    const useSSL = u.port === '443' || u.searchParams.get('ssl') === 'true';
    const store = createS3Store({
      endpoint: `${useSSL ? 'https' : 'http'}://${u.host}`,
      accessKey: decodeURIComponent(u.username),
      secretKey: decodeURIComponent(u.password),
      bucket,
      region: u.searchParams.get('region') ?? 'us-east-1',
      // The original's bucket is only ever read: a wrong name must not create a bucket there.
      readOnly: true,
    });
    return {
      label: `s3://${u.host}/${bucket}`,
      async check() {
        try {
          await store.probe();
        } catch (err) {
          throw new Error(`--objects-from s3://${u.host}/${bucket}: ${(err as Error).message}`);
        }
      },
      async *list() {
        for (const o of await store.list('')) yield o;
      },
      read: (key) => store.get(key),
      contentType: async (key) => (await store.stat(key)).contentType,
    };
  }
  const root = path.resolve(spec);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory())
    throw new Error(`--objects-from ${spec}: no such folder`);
  return {
    label: root,
    check: async () => undefined,
    async *list() {
      const walk = async function* (rel: string): AsyncGenerator<{ key: string; size: number }> {
        const entries = await fsp.readdir(path.join(root, rel), { withFileTypes: true });
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const e of entries) {
          const key = rel ? `${rel}/${e.name}` : e.name;
          if (e.isDirectory()) yield* walk(key);
          else if (e.isFile()) yield { key, size: (await fsp.stat(path.join(root, key))).size };
        }
      };
      yield* walk('');
    },
    read: async (key) => fs.createReadStream(path.join(root, ...key.split('/'))),
    contentType: async () => undefined,
  };
}

export interface ObjectReport {
  source: string;
  listed: number;
  copied: number;
  unchanged: number;
  bytes: number;
  verified: number;
  refused: Array<{ key: string; reason: string }>;
}

/** Size and MD5 of a stream as it passes through. */
function measure(): { tap: Transform; result: () => { size: number; md5: string } } {
  const hash = crypto.createHash('md5');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { tap, result: () => ({ size, md5: hash.digest('hex') }) };
}

async function digestOf(stream: Readable): Promise<{ size: number; md5: string }> {
  const m = measure();
  await pipeline(stream, m.tap, new PassThrough().resume());
  return m.result();
}

const MD5_ETAG = /^[0-9a-f]{32}$/;

/**
 * Copies every object with its key unchanged. Each object is read once into the target while its size and MD5
 * are taken, then read back from the target and checked against both; the source's ETag is checked too where it
 * is a plain MD5 (single-part uploads). With `again`, an object the target already holds with the same size
 * and checksum is left alone. With `dryRun`, objects are read and checked, and nothing is written.
 */
export async function copyObjects(
  from: ObjectSource,
  target: ObjectStore,
  o: { dryRun?: boolean; again?: boolean; progress?: (line: string) => void; progressEveryMs?: number } = {},
): Promise<ObjectReport> {
  const report: ObjectReport = {
    source: from.label,
    listed: 0,
    copied: 0,
    unchanged: 0,
    bytes: 0,
    verified: 0,
    refused: [],
  };
  const started = Date.now();
  let lastTick = 0;
  const tick = () => {
    if (!o.progress || Date.now() - lastTick < (o.progressEveryMs ?? 2000)) return;
    lastTick = Date.now();
    o.progress(
      `progress: objects ${report.listed} listed, ${report.copied} copied, ` +
        `${(report.bytes / 1048576).toFixed(1)} MB, ${Math.round((Date.now() - started) / 1000)} s elapsed`,
    );
  };
  for await (const obj of from.list()) {
    report.listed += 1;
    try {
      assertValidKey(obj.key);
    } catch (err) {
      report.refused.push({ key: obj.key, reason: `this service cannot serve that key (${(err as Error).message})` });
      continue;
    }
    const sourceMd5 = obj.etag && MD5_ETAG.test(obj.etag) ? obj.etag : undefined;
    try {
      if (o.again) {
        const held = await target
          .stat(obj.key)
          .catch((err: unknown) => (isObjectNotFound(err) ? undefined : Promise.reject(err)));
        if (held && held.size === obj.size) {
          const same =
            sourceMd5 && MD5_ETAG.test(held.etag)
              ? held.etag === sourceMd5
              : (await digestOf(await target.get(obj.key))).md5 === (await digestOf(await from.read(obj.key))).md5;
          if (same) {
            report.unchanged += 1;
            continue;
          }
        }
      }
      const m = measure();
      if (o.dryRun) {
        await pipeline(await from.read(obj.key), m.tap, new PassThrough().resume());
      } else {
        const contentType = (await from.contentType(obj.key)) ?? undefined;
        const body = (await from.read(obj.key)).pipe(m.tap);
        await target.put(obj.key, body, contentType ? { contentType } : {});
      }
      const read = m.result();
      const problems: string[] = [];
      if (read.size !== obj.size) problems.push(`read ${read.size} bytes of ${obj.size}`);
      if (sourceMd5 && read.md5 !== sourceMd5)
        problems.push(`MD5 ${read.md5} differs from the source's ETag ${sourceMd5}`);
      if (!o.dryRun) {
        const back = await digestOf(await target.get(obj.key));
        if (back.size !== read.size || back.md5 !== read.md5)
          problems.push(
            `the stored copy has ${back.size} bytes, MD5 ${back.md5}; the source ${read.size}, ${read.md5}`,
          );
      }
      if (problems.length) {
        if (!o.dryRun) await target.delete(obj.key).catch(() => undefined);
        report.refused.push({ key: obj.key, reason: problems.join('; ') });
        continue;
      }
      report.verified += 1;
      report.copied += 1;
      report.bytes += read.size;
    } catch (err) {
      report.refused.push({ key: obj.key, reason: (err as Error).message });
    }
    tick();
  }
  return report;
}

export function formatObjectReport(r: ObjectReport, dryRun: boolean): string[] {
  const lines = [
    `objects from ${r.source}: ${r.listed} listed, ${r.copied} ${dryRun ? 'read (dry run)' : 'copied'}, ` +
      `${(r.bytes / 1048576).toFixed(1)} MB, ${r.verified} verified by size and MD5, ` +
      `${r.unchanged} unchanged since the previous run, ${r.refused.length} refused`,
  ];
  for (const x of r.refused) lines.push(`  refused object ${x.key}: ${x.reason}`);
  return lines;
}
