import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/**
 * An S3-compatible store that checks AWS Signature Version 4, as real S3 and MinIO do. s3rver (3.7) keeps the
 * objects but does not check V4 signatures (the only kind the minio client sends): its own code says V4
 * "calculation is unimplemented" and lets any such request through. So a gate in front of it verifies each
 * request's signature, header-signed or presigned (including the expiry), with the account's secret, and
 * answers 403 SignatureDoesNotMatch / AccessDenied like S3 before anything reaches s3rver. The payload hash
 * is taken as the client declares it (the body is streamed through, not hashed).
 */
export const SIGNED_S3_KEY = 'S3RVER';
const SECRET = 'S3RVER';

export interface SignedS3 {
  /** The gate: requests with a valid signature only. */
  origin: string;
  /** s3rver itself, which checks no V4 signature (shown by the tests). */
  rawOrigin: string;
  /** Requests the gate refused, with the reason. */
  refused: Array<{ method: string; url: string; reason: string }>;
  close(): Promise<void>;
}

const hex = (b: crypto.BinaryLike) => crypto.createHash('sha256').update(b).digest('hex');
const hmac = (key: crypto.BinaryLike, data: string) => crypto.createHmac('sha256', key).update(data).digest();
const awsEncode = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(raw: string, skip?: string): string {
  if (!raw) return '';
  return raw
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const i = pair.indexOf('=');
      const k = decodeURIComponent((i < 0 ? pair : pair.slice(0, i)).replace(/\+/g, '%20'));
      const v = i < 0 ? '' : decodeURIComponent(pair.slice(i + 1).replace(/\+/g, '%20'));
      return [awsEncode(k), awsEncode(v)] as const;
    })
    .filter(([k]) => k !== skip)
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** Why the request's signature is not valid, or null when it is. */
export function signatureProblem(req: http.IncomingMessage, now = Date.now()): string | null {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const rawQuery = q < 0 ? '' : url.slice(q + 1);
  const params = new URLSearchParams(rawQuery);
  let credential: string;
  let signedHeaders: string;
  let signature: string;
  let amzDate: string;
  let payload: string;
  let query: string;
  const auth = req.headers.authorization;
  if (auth) {
    const m = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
    if (!m) return 'not an AWS4-HMAC-SHA256 authorization';
    [, credential, signedHeaders, signature] = m;
    amzDate = String(req.headers['x-amz-date'] ?? '');
    payload = String(req.headers['x-amz-content-sha256'] ?? '');
    if (!payload) return 'no x-amz-content-sha256';
    query = canonicalQuery(rawQuery);
  } else if (params.get('X-Amz-Algorithm') === 'AWS4-HMAC-SHA256') {
    credential = params.get('X-Amz-Credential') ?? '';
    signedHeaders = params.get('X-Amz-SignedHeaders') ?? '';
    signature = params.get('X-Amz-Signature') ?? '';
    amzDate = params.get('X-Amz-Date') ?? '';
    payload = 'UNSIGNED-PAYLOAD';
    query = canonicalQuery(rawQuery, 'X-Amz-Signature');
    const at = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    const expires = Number(params.get('X-Amz-Expires'));
    if (!Number.isFinite(at) || !Number.isFinite(expires)) return 'bad X-Amz-Date or X-Amz-Expires';
    if (now > at + expires * 1000) return 'Request has expired';
  } else {
    return 'anonymous request';
  }
  const [accessKey, date, region, service, terminal] = credential.split('/');
  if (accessKey !== SIGNED_S3_KEY) return 'unknown access key';
  if (!date || !region || service !== 's3' || terminal !== 'aws4_request' || !amzDate.startsWith(date))
    return 'bad credential scope';
  const headerLines = signedHeaders.split(';').map((name) => {
    const v = req.headers[name];
    return `${name}:${(Array.isArray(v) ? v.join(',') : v ?? '').trim().replace(/\s+/g, ' ')}\n`;
  });
  if (!signedHeaders.split(';').includes('host')) return 'host not signed';
  const canonical = [req.method, rawPath, query, headerLines.join(''), signedHeaders, payload].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET}`, date), region), 's3'), 'aws4_request');
  const expected = crypto.createHmac('sha256', key).update(toSign).digest('hex');
  if (signature.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(signature), Buffer.from(expected)))
    return 'SignatureDoesNotMatch';
  return null;
}

export async function startSignedS3(prefix: string): Promise<SignedS3 & { tmp: string }> {
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), prefix));
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(tmp, 's3rver') });
  const { port: rawPort } = await s3.run();
  const refused: SignedS3['refused'] = [];
  const gate = http.createServer((req, res) => {
    const problem = signatureProblem(req);
    if (problem) {
      refused.push({ method: req.method ?? '', url: req.url ?? '', reason: problem });
      req.resume();
      const code =
        problem === 'SignatureDoesNotMatch'
          ? 'SignatureDoesNotMatch'
          : problem === 'unknown access key'
            ? 'InvalidAccessKeyId'
            : 'AccessDenied';
      res.writeHead(403, { 'Content-Type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${problem}</Message></Error>`,
      );
      return;
    }
    const upstream = http.request(
      { host: '127.0.0.1', port: rawPort, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  const port = (gate.address() as AddressInfo).port;
  return {
    tmp,
    origin: `http://127.0.0.1:${port}`,
    rawOrigin: `http://127.0.0.1:${rawPort}`,
    refused,
    async close() {
      gate.closeAllConnections();
      await new Promise<void>((resolve) => gate.close(() => resolve()));
      await s3.close();
      await fsp.rm(tmp, { recursive: true, force: true });
    },
  };
}
