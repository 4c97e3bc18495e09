import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BucketItem } from 'minio';
import {
  ObjectStoreError, assertValidKey, assertValidPrefix, isReadable, normaliseOptions, toBuffer,
  type ListedObject, type ObjectBody, type ObjectInfo, type ObjectStore, type PutOptions, type StoredObject,
} from './types';
import { spoolPrefix } from '../http/spool';

export interface S3StoreConfig {
  /** e.g. `http://127.0.0.1:9000` or `https://s3.eu-west-1.amazonaws.com`. */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region: string;
  /**
   * Where clients reach the store (S3_PUBLIC_ENDPOINT), when that is not the address central uses: presigned
   * URLs are signed for this host, since the signature covers it and a URL cannot be re-pointed afterwards.
   */
  publicEndpoint?: string;
  /**
   * A store that is only ever read (another system's bucket being copied): a missing bucket is an error naming
   * it instead of being created, and every write is refused.
   */
  readOnly?: boolean;
}

// Standard headers minio hands back among the user metadata of a stat; they are not user metadata.
const STANDARD_HEADERS = new Set([
  'content-type', 'cache-control', 'content-encoding', 'content-disposition', 'content-language',
  'x-amz-website-redirect-location', 'if-none-match', 'if-match',
]);

function codeOf(err: unknown): string | undefined {
  return (err as { code?: string } | undefined)?.code;
}

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound', 'NoSuchObject']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** Any S3-compatible store (AWS S3, MinIO, Ceph, s3rver) through the `minio` client, path-style addressing. */
export function createS3Store(config: S3StoreConfig): ObjectStore {
  let url: URL;
  try {
    url = new URL(config.endpoint);
  } catch {
    throw new ObjectStoreError('Failed', `S3_ENDPOINT is not a URL: ${config.endpoint}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ObjectStoreError('Failed', `S3_ENDPOINT must start with http:// or https://, got ${url.protocol}`);
  }
  // Checked here so a misconfigured S3_BUCKET stops the start-up rather than the first upload.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(config.bucket)) {
    throw new ObjectStoreError('Failed', `S3_BUCKET is not a valid bucket name: ${JSON.stringify(config.bucket)}`);
  }
  const useSSL = url.protocol === 'https:';
  // Loaded only when S3 is configured: the minio client weighs about 8 MB in every process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client, S3Error } = require('minio') as typeof import('minio');
  const client = new Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: config.accessKey,
    secretKey: config.secretKey,
    region: config.region,
    // Self-hosted stores (MinIO, Ceph, s3rver) rarely have wildcard DNS for virtual-host buckets.
    pathStyle: true,
  });
  const bucket = config.bucket;
  const origin = url.origin;
  let signer = client;
  if (config.publicEndpoint) {
    let pub: URL;
    try {
      pub = new URL(config.publicEndpoint);
    } catch {
      throw new ObjectStoreError('Failed', `S3_PUBLIC_ENDPOINT is not a URL: ${config.publicEndpoint}`);
    }
    if (pub.protocol !== 'http:' && pub.protocol !== 'https:') {
      throw new ObjectStoreError(
        'Failed',
        `S3_PUBLIC_ENDPOINT must start with http:// or https://, got ${pub.protocol}`,
      );
    }
    const ssl = pub.protocol === 'https:';
    // Signing needs no request: with the region given, this client never contacts the public address.
    signer = new Client({
      endPoint: pub.hostname, port: pub.port ? Number(pub.port) : ssl ? 443 : 80, useSSL: ssl,
      accessKey: config.accessKey, secretKey: config.secretKey, region: config.region, pathStyle: true,
    });
  }

  /** Never includes credentials: only the endpoint, bucket and the server's own message. */
  function wrap(err: unknown, doing: string, key?: string): ObjectStoreError {
    if (err instanceof ObjectStoreError) return err;
    const code = codeOf(err);
    const what = key === undefined ? doing : `${doing} ${key}`;
    if (code && NOT_FOUND.has(code))
      return new ObjectStoreError('NotFound', `Object not found: ${key}`, { cause: err });
    if (code && UNREACHABLE.has(code)) {
      return new ObjectStoreError('Unavailable', `Cannot ${what}: object store ${origin} is unreachable (${code})`, {
        cause: err,
      });
    }
    const detail =
      err instanceof S3Error ? `${code ?? 'S3 error'}: ${err.message}` : ((err as Error)?.message ?? String(err));
    return new ObjectStoreError('Failed', `Cannot ${what} (bucket ${bucket} at ${origin}): ${detail}`, { cause: err });
  }

  let ready: Promise<void> | undefined;
  function ensureBucket(): Promise<void> {
    ready ??= (async () => {
      if (await client.bucketExists(bucket)) return;
      if (config.readOnly) throw new ObjectStoreError('NotFound', `no bucket ${bucket} at ${origin}`);
      try {
        await client.makeBucket(bucket, config.region);
      } catch (err) {
        // Another process created it between our check and our create.
        if (codeOf(err) !== 'BucketAlreadyOwnedByYou' && codeOf(err) !== 'BucketAlreadyExists') throw err;
      }
    })().catch((err) => {
      ready = undefined; // retry on the next call: the store may come up later
      throw wrap(err, 'open or create the bucket');
    });
    return ready;
  }

  function location(key: string) {
    return `${origin}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  /**
   * Copies a stream of unknown length to a temporary file. Without a length minio plans for a 5 TiB object and
   * buffers parts of over 500 MB; with one it buffers at most one 64 MB part. It also means a source that fails
   * midway never reaches the store.
   */
  async function spool(source: Readable): Promise<{ file: string; size: number }> {
    const file = `${spoolPrefix('object')}${randomUUID()}`;
    try {
      await pipeline(source, fs.createWriteStream(file, { flags: 'wx' }));
      return { file, size: (await fsp.stat(file)).size };
    } catch (err) {
      await fsp.rm(file, { force: true });
      throw err;
    }
  }

  function assertWritable(doing: string, key: string): void {
    if (config.readOnly) {
      throw new ObjectStoreError('Failed', `Cannot ${doing} ${key}: bucket ${bucket} at ${origin} is only read`);
    }
  }

  return {
    kind: 's3',

    async put(key: string, body: ObjectBody, options?: PutOptions): Promise<StoredObject> {
      assertValidKey(key);
      assertWritable('store object', key);
      const { contentType, metadata } = normaliseOptions(options);
      let spooled: { file: string; size: number } | undefined;
      try {
        let payload: Buffer | Readable;
        let size: number;
        if (isReadable(body)) {
          spooled = await spool(body);
          payload = fs.createReadStream(spooled.file);
          size = spooled.size;
        } else {
          payload = toBuffer(body);
          size = payload.length;
        }
        await ensureBucket();
        const headers = { 'Content-Type': contentType, ...metadata };
        let result;
        try {
          result = await client.putObject(bucket, key, payload, size, headers);
        } catch (err) {
          // A multipart upload cut short is invisible as an object but keeps its parts; drop them.
          await client.removeIncompleteUpload(bucket, key).catch(() => undefined);
          throw err;
        }
        return { Location: location(key), ETag: result.etag, Bucket: bucket, Key: key, size, contentType };
      } catch (err) {
        throw wrap(err, 'store object', key);
      } finally {
        if (spooled) await fsp.rm(spooled.file, { force: true });
      }
    },

    async get(key: string, range?: { start: number; end: number }): Promise<Readable> {
      assertValidKey(key);
      try {
        await ensureBucket();
        if (range) return await client.getPartialObject(bucket, key, range.start, range.end - range.start + 1);
        return await client.getObject(bucket, key);
      } catch (err) {
        throw wrap(err, 'read object', key);
      }
    },

    async stat(key: string): Promise<ObjectInfo> {
      assertValidKey(key);
      try {
        await ensureBucket();
        const st = await client.statObject(bucket, key);
        const metadata: Record<string, string> = {};
        let contentType = 'application/octet-stream';
        for (const [name, value] of Object.entries(st.metaData ?? {})) {
          const lower = name.toLowerCase();
          if (lower === 'content-type') contentType = String(value);
          else if (!STANDARD_HEADERS.has(lower) && !lower.startsWith('x-amz-')) metadata[lower] = String(value);
        }
        return {
          key,
          size: st.size,
          etag: st.etag,
          lastModified: new Date(st.lastModified).toISOString(),
          contentType,
          metadata,
        };
      } catch (err) {
        throw wrap(err, 'stat object', key);
      }
    },

    async delete(key: string): Promise<void> {
      assertValidKey(key);
      assertWritable('delete object', key);
      try {
        await ensureBucket();
        await client.removeObject(bucket, key);
      } catch (err) {
        // S3 answers 204 for a missing key already; some compatible stores answer NoSuchKey instead.
        if (NOT_FOUND.has(codeOf(err) ?? '')) return;
        throw wrap(err, 'delete object', key);
      }
    },

    async presignPut(key: string, expiresSeconds: number, requestDate?: Date): Promise<string> {
      assertValidKey(key);
      assertWritable('presign an upload of', key);
      try {
        await ensureBucket();
        return await signer.presignedUrl('PUT', bucket, key, expiresSeconds, {}, requestDate);
      } catch (err) {
        throw wrap(err, 'presign an upload of', key);
      }
    },

    async probe(): Promise<void> {
      try {
        // Asked every time (ensureBucket remembers its first success): a store that went away must show.
        if (await client.bucketExists(bucket)) return;
        ready = undefined;
        await ensureBucket();
      } catch (err) {
        throw wrap(err, 'reach the bucket');
      }
    },

    async list(prefix = ''): Promise<ListedObject[]> {
      assertValidPrefix(prefix);
      try {
        await ensureBucket();
        const out: ListedObject[] = [];
        for await (const item of client.listObjectsV2(bucket, prefix, true) as AsyncIterable<BucketItem>) {
          if (!item.name) continue;
          out.push({
            key: item.name,
            size: item.size,
            etag: (item.etag ?? '').replace(/^"|"$/g, ''),
            lastModified: new Date(item.lastModified ?? 0).toISOString(),
          });
        }
        return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      } catch (err) {
        throw wrap(err, `list objects under "${prefix}"`);
      }
    },
  };
}
