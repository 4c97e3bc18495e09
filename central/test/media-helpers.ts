import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { repoRoot, type Knex } from '@lms/db';
import { createObjectStore, type ObjectStore } from '../src/objects';
import type { S3Sandbox } from './s3';

/** Files whose first bytes are what their extension says, padded to `size` bytes. */
const pad = (head: Buffer, size: number) => Buffer.concat([head, crypto.randomBytes(Math.max(0, size - head.length))]);
export const media = {
  png: (size = 2000) => pad(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), size),
  jpg: (size = 2000) => pad(Buffer.from([0xff, 0xd8, 0xff, 0xe0]), size),
  gif: (size = 2000) => pad(Buffer.from('GIF89a', 'latin1'), size),
  pdf: (size = 2000) => pad(Buffer.from('%PDF-1.7\n', 'latin1'), size),
  mp3: (size = 2000) => pad(Buffer.from('ID3\x04\x00', 'latin1'), size),
  mp4: (size = 2000) => pad(Buffer.from([0, 0, 0, 0x20, ...Buffer.from('ftypisom', 'latin1')]), size),
  log: () => Buffer.from('{"level":"info","message":"started"}\n'),
  html: () => Buffer.from('<!doctype html><html><script>alert(1)</script></html>'),
};

/** One store per test file and driver: a fresh folder under the scratch folder, or a fresh S3 bucket. */
export function storeFor(
  kind: 'folder' | 's3',
  sandbox: S3Sandbox,
  name: string,
): { store: ObjectStore; env: Record<string, string>; dir?: string } {
  if (kind === 'folder') {
    const dir = path.join(sandbox.tmp, name);
    const rel = path.relative(repoRoot, dir);
    return { store: createObjectStore({ kind: 'folder', dir: rel }), env: { OBJECT_DIR: rel }, dir };
  }
  const cfg = sandbox.s3(name);
  return {
    store: createObjectStore(cfg),
    env: {
      S3_ENDPOINT: cfg.endpoint,
      S3_ACCESS_KEY: cfg.accessKey,
      S3_SECRET_KEY: cfg.secretKey,
      S3_BUCKET: cfg.bucket,
      S3_REGION: cfg.region,
    },
  };
}

/** Temporary files a folder store left behind (none may be left by a refused upload). */
export async function folderLeftovers(dir: string | undefined): Promise<string[]> {
  if (!dir) return [];
  return fsp.readdir(path.join(dir, '.tmp')).catch(() => []);
}

export async function listen(app: http.RequestListener): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export const count = async (db: Knex, table: string, where: object = {}) =>
  Number((await db(table).where(where).count({ n: '*' }).first())?.n);

export interface StreamedUpload {
  status: number;
  body: { error?: boolean; errormessage?: string; data?: unknown };
}

/**
 * A multipart upload written chunk by chunk (1 MB at a time, with backpressure) so that the client never
 * holds the file: `head` then filler up to `size` bytes. With `cutAt`, the connection is dropped after
 * that many bytes of the file (the promise then resolves with status 0 unless an answer came first); with
 * `stallAt`, the client stops sending there and waits for the answer.
 */
export function streamUpload(
  origin: string,
  o: { auth: string; filename: string; head: Buffer; size: number; cutAt?: number; stallAt?: number; path?: string },
): Promise<StreamedUpload> {
  const boundary = `----lms-test-${crypto.randomBytes(6).toString('hex')}`;
  const pre = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${o.filename}"\r\nContent-Type: ` +
      `application/octet-stream\r\n\r\n`,
  );
  const post = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = crypto.randomBytes(1024 * 1024);
  return new Promise((resolve, reject) => {
    const req = http.request(`${origin}${o.path ?? '/document/upload'}`, {
      method: 'POST',
      headers: {
        Authorization: o.auth,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': pre.length + o.size + post.length,
      },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        let body = {};
        try { body = JSON.parse(Buffer.concat(parts).toString('utf8')); } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', (err) =>
      answered ? undefined : o.cutAt !== undefined ? resolve({ status: 0, body: {} }) : reject(err),
    );
    let sent = 0;
    const limit = o.cutAt ?? o.stallAt ?? o.size;
    req.write(pre);
    const pump = () => {
      while (sent < limit) {
        let piece =
          sent === 0 ? Buffer.concat([o.head, chunk.subarray(0, Math.max(0, chunk.length - o.head.length))]) : chunk;
        piece = piece.subarray(0, Math.min(piece.length, limit - sent));
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (o.stallAt !== undefined) {
        // A client that stops sending and waits: the server must answer and let go.
      } else if (o.cutAt !== undefined) {
        // Give the server the bytes already sent, then drop the connection mid-file.
        setTimeout(() => { req.destroy(); if (!answered) resolve({ status: 0, body: {} }); }, 200);
      } else {
        req.end(post);
      }
    };
    pump();
  });
}

/** Samples this process's RSS while `work` runs; answers the peak growth over the starting value, in MB. */
export async function rssGrowthMb<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  global.gc?.();
  const start = process.memoryUsage.rss();
  let peak = start;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()); }, 10);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growthMb: (peak - start) / (1024 * 1024) };
  } finally {
    clearInterval(timer);
  }
}

/** Waits until `check` holds (the server finishing a request the client abandoned). */
export async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
