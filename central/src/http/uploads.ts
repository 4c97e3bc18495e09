import type { Request } from 'express';
import { configOf } from './context';
import type { CentralTools } from './types';
import { turnsOf } from './turns';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { isUniqueViolation, type Knex } from '@lms/db';
import { FILE_TYPE, HttpError, extensionOf, httpError, mediaContentType, mediaFileType } from '@lms/shared';
import type { ObjectStore, StoredObject } from '../objects';

/**
 * The checks every media upload passes, whichever way it arrives (a document upload, a presigned PUT,
 * a feedback picture): the contract's name rules, a size limit enforced while the bytes flow, and the
 * type its extension claims confirmed from the file's first bytes. A file is streamed through these
 * checks straight into the object store; it is never held whole in memory, and a refused file never
 * becomes an object.
 */

/** Where a request's media go: its database (rows, claims), its object store, and the size limit. */
export interface MediaTarget {
  db: Knex;
  store: ObjectStore;
  maxBytes: number;
  /** A client silent this long is refused (UPLOAD_IDLE_SECONDS). */
  idleMs?: number;
}

/** Where a media upload goes, from a handler's tools. */
export const mediaTargetOf = ({
  db,
  objects,
  config,
}: Pick<CentralTools, 'db' | 'objects' | 'config'>): MediaTarget => ({
  db,
  store: objects,
  maxBytes: config.maxMediaBytes,
  idleMs: config.uploadIdleMs,
});

/** How long a caller refused for too many uploads at once is told to wait. */
const UPLOAD_RETRY_SECONDS = 10;

/**
 * One more media upload of `caller` (the staff account, or the account a presigned URL names), or a 429
 * once it has `MAX_UPLOADS_PER_CALLER` in progress (counted across instances when they share Redis): each
 * upload holds a connection, a stream into the object store and, on a slow link, minutes, and one caller
 * must not hold them all. The returned function ends the turn; a stalled upload ends it at the idle limit.
 */
export async function takeUploadTurn(req: Request, caller: string): Promise<() => void> {
  const end = await turnsOf(req, 'media-uploads', (c) => c.maxUploadsPerCaller).take(caller);
  if (end) return end;
  const max = configOf(req).maxUploadsPerCaller;
  throw httpError(429, `Too many uploads in progress (at most ${max} at once), please try again later.`, {
    'Retry-After': String(UPLOAD_RETRY_SECONDS),
  });
}

/** The contract's messages (document upload, §7); feedback pictures share them (§10). */
export const UPLOAD_MESSAGES = {
  noFile: 'Invalid file type',
  oneFile: 'Only one file upload allowed',
  noExtension: 'Invalid file name',
  badName: 'Invalid file name, only alpha numeric is allowed and file name max length of 25 characters only',
  badType: 'Invalid file type',
  exists: 'File exists, Please delete old file before upload',
  interrupted: 'The upload was interrupted',
} as const;

/** A client that stopped sending: answered, then its connection is closed rather than waited on. */
export const stalled = (idleMs: number) =>
  httpError(408, `The upload sent nothing for ${Math.round(idleMs / 1000)} s`, { Connection: 'close' });

/**
 * Calls `onSilent` once `stream` has sent nothing for `ms` (each chunk starts the wait again); the returned
 * function stops watching. An upload that stalls holds a slot, a name claim or a temporary file, so every
 * upload path watches its source with this.
 */
export function watchSilence(stream: Readable, ms: number, onSilent: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const restart = () => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(onSilent, ms);
  };
  restart();
  stream.on('data', restart);
  return () => {
    stopped = true;
    clearTimeout(timer);
    stream.off('data', restart);
  };
}

export const tooLarge = (maxBytes: number) =>
  httpError(413, `File too large (at most ${Math.floor(maxBytes / (1024 * 1024))} MB)`);

export interface CheckedName {
  /** The object key (and documentname): the name as given, trimmed. */
  key: string;
  /** Lower-case extension. */
  ext: string;
  filetype: number;
  contentType: string;
}

function checkName(raw: string, base: RegExp): CheckedName {
  const name = raw.replace(/^\uFEFF/, '').trim();
  const ext = extensionOf(name);
  if (!ext) throw httpError(400, UPLOAD_MESSAGES.noExtension);
  // A path (`../x.png`, `a/b.png`, `a\b.png`) fails here: its separators are not in the base pattern.
  if (!base.test(name.slice(0, name.length - ext.length - 1))) throw httpError(400, UPLOAD_MESSAGES.badName);
  const filetype = mediaFileType(name);
  const contentType = mediaContentType(name);
  if (filetype === FILE_TYPE.invalid || !contentType) throw httpError(400, UPLOAD_MESSAGES.badType);
  return { key: name, ext, filetype, contentType };
}

/** A document's file name: `[A-Za-z0-9_]{1,25}` and a media extension (contract §7). */
export const checkDocumentName = (raw: string): CheckedName => checkName(raw, /^[A-Za-z0-9_]{1,25}$/);

/** A feedback picture's file name: `[A-Za-z0-9_-]{1,50}` and a media extension (contract §10). */
export const checkFeedbackName = (raw: string): CheckedName => checkName(raw, /^[A-Za-z0-9_-]{1,50}$/);

/** How many leading bytes the type check reads (enough for every signature below and a text sample). */
export const SNIFF_BYTES = 512;

const startsWith = (head: Buffer, bytes: number[] | string, at = 0) => {
  const want = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
  return head.length >= at + want.length && head.subarray(at, at + want.length).equals(want);
};

/** An MPEG audio frame header: 11 sync bits, a version and a layer that exist. */
const mpegFrame = (head: Buffer) =>
  head.length >= 2 &&
  head[0] === 0xff &&
  (head[1] & 0xe0) === 0xe0 &&
  ((head[1] >> 3) & 3) !== 1 &&
  ((head[1] >> 1) & 3) !== 0;

/** Plain UTF-8 text without NUL bytes that does not open like markup. */
function isPlainText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    // `stream: true`: a character cut by the end of the sample is not an error.
    const text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return !text.trimStart().startsWith('<');
  } catch {
    return false;
  }
}

/** Whether a file's first bytes are what its extension says (an `.mp3` that is HTML is not). */
export function headMatches(ext: string, head: Buffer): boolean {
  if (head.length === 0) return false;
  switch (ext) {
    case 'png': return startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case 'jpg':
    case 'jpeg': return startsWith(head, [0xff, 0xd8, 0xff]);
    case 'gif': return startsWith(head, 'GIF87a') || startsWith(head, 'GIF89a');
    case 'pdf': return startsWith(head, '%PDF-');
    case 'mp3': return startsWith(head, 'ID3') || mpegFrame(head);
    case 'mp4': return startsWith(head, 'ftyp', 4);
    case 'log': return isPlainText(head);
    default: return false;
  }
}

/**
 * Passes a file's bytes through while checking them: the first SNIFF_BYTES against the extension's
 * signature (400 `Invalid file type`) before anything is passed on, and the running size against
 * `maxBytes` (413). Either failure errors the stream, so that the store it feeds discards what it has.
 */
export class MediaCheck extends Transform {
  private head: Buffer[] = [];
  private headBytes = 0;
  private checked = false;
  private size = 0;

  constructor(private readonly ext: string, private readonly maxBytes: number) {
    super();
  }

  private release(): Error | undefined {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.checked = true;
    if (!headMatches(this.ext, head.subarray(0, SNIFF_BYTES))) return httpError(400, UPLOAD_MESSAGES.badType);
    if (head.length) this.push(head);
    return undefined;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return done(tooLarge(this.maxBytes));
    if (this.checked) return done(null, chunk);
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes < SNIFF_BYTES) return done();
    done(this.release());
  }

  override _flush(done: TransformCallback): void {
    done(this.checked ? undefined : this.release());
  }
}

/** The HttpError behind a failure, if one caused it (the store wraps what its source threw). */
export function httpCause(err: unknown): HttpError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof HttpError) return e;
  }
  return undefined;
}

/**
 * Streams `source` through the checks into the store under `key`. A refused file rejects with its
 * HttpError and leaves no object (the store's put is all-or-nothing); a source that breaks off
 * (the client went away) rejects with 400 `The upload was interrupted`.
 */
export async function putChecked(
  store: ObjectStore,
  key: string,
  source: Readable,
  o: { ext: string; contentType: string; maxBytes: number; idleMs?: number },
): Promise<StoredObject> {
  // Failed before its reader came (the request was refused meanwhile): its events are past.
  if (source.destroyed) throw httpCause(source.errored) ?? httpError(400, UPLOAD_MESSAGES.interrupted);
  const check = new MediaCheck(o.ext, o.maxBytes);
  // The check can fail before the store starts reading (a store first creates its temporary file):
  // kept here, the error is not an unhandled event, and it is the one the caller gets.
  let refused: unknown;
  check.on('error', (err) => { refused ??= err; });
  source.on('error', (err) => check.destroy(err));
  // A request whose connection drops may end with 'close' alone, no error: without this the store
  // would wait for the rest of the file for ever.
  // (A request announces 'close' once its body has arrived, read or not: `complete` tells the two apart.)
  const arrived = () =>
    'complete' in source ? Boolean((source as { complete?: boolean }).complete) : source.readableEnded;
  source.once('close', () => {
    if (!arrived()) check.destroy(httpError(400, UPLOAD_MESSAGES.interrupted));
  });
  source.pipe(check);
  // A client that stops sending holds a claim and a temporary file: after `idleMs` of silence it is refused (408).
  const idleMs = o.idleMs;
  const stopWatching = idleMs ? watchSilence(source, idleMs, () => check.destroy(stalled(idleMs))) : () => undefined;
  try {
    return await store.put(key, check, { contentType: o.contentType });
  } catch (err) {
    source.unpipe(check);
    throw (
      httpCause(refused) ??
      httpCause(err) ??
      (source.destroyed && !arrived() ? httpError(400, UPLOAD_MESSAGES.interrupted) : err)
    );
  } finally {
    stopWatching();
  }
}

/**
 * Receives a multipart request whose one file part (any field name) is handed to `onFile` as a
 * stream, while it arrives. Settles only once `onFile` has settled, so that what it stored is known
 * to the caller, who removes it when this rejects: a second file part (`Only one file upload
 * allowed`), no file part (`Invalid file type`), a broken multipart body, a client silent for
 * `idleMs` (408) or a connection that drops midway (the file stream is then failed, so that a store
 * write in progress fails).
 */
export function receiveOneFile<T>(
  req: Request,
  onFile: (filename: string, stream: Readable) => Promise<T>,
  idleMs = 30_000,
): Promise<T> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? ''))
    return Promise.reject(httpError(400, UPLOAD_MESSAGES.noFile));
  return new Promise<T>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      // preservePath: a name given as a path must reach the name rules (and be refused), not be cut to its base name.
      bb = busboy({
        headers: req.headers,
        preservePath: true,
        limits: { files: 1, fields: 20, parts: 30, fieldSize: 64 * 1024 },
      });
    } catch {
      reject(httpError(400, UPLOAD_MESSAGES.noFile));
      return;
    }
    let working: Promise<T> | undefined;
    let file: Readable | undefined;
    let relay: PassThrough | undefined;
    let failed = false;
    const stopWatching = watchSilence(req, idleMs, () => fail(stalled(idleMs)));
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      stopWatching();
      req.unpipe(bb);
      // Keep reading (and discarding) so that the client sees the answer instead of a reset connection.
      req.resume();
      // The reader of the file gets the failure through the relay; busboy's own stream is only let go
      // (destroying it while busboy still parses the current chunk would throw inside busboy).
      if (file && relay) {
        file.unpipe(relay);
        file.resume();
        if (!relay.readableEnded) relay.destroy(err instanceof Error ? err : new Error(String(err)));
      }
      const settle = () => reject(err);
      if (working) working.then(settle, settle);
      else settle();
    };
    bb.on('file', (_field, stream, info) => {
      if (failed || working) {
        stream.resume();
        return;
      }
      file = stream;
      relay = new PassThrough();
      // A failure before anyone reads the relay must not be an unhandled 'error' event.
      relay.on('error', () => undefined);
      stream.pipe(relay);
      working = onFile(info.filename ?? '', relay);
      working.catch(fail);
    });
    bb.on('filesLimit', () => fail(httpError(400, UPLOAD_MESSAGES.oneFile)));
    bb.on('partsLimit', () => fail(httpError(400, UPLOAD_MESSAGES.oneFile)));
    bb.on('fieldsLimit', () => fail(httpError(400, UPLOAD_MESSAGES.oneFile)));
    bb.on('error', () => fail(httpError(400, UPLOAD_MESSAGES.interrupted)));
    bb.on('close', () => {
      stopWatching();
      if (failed) return;
      if (!working) fail(httpError(400, UPLOAD_MESSAGES.noFile));
      else working.then(resolve, fail);
    });
    req.once('close', () => {
      if (!req.complete) fail(httpError(400, UPLOAD_MESSAGES.interrupted));
    });
    req.pipe(bb);
  });
}

/** How long a claim on a name holds when its upload never finishes (a crashed instance). */
export const UPLOAD_CLAIM_MS = 60 * 60 * 1000;

/**
 * Takes the claim (`name:<key>` while an upload writes that key, `url:<signature>` for a used
 * presigned URL); false when someone holds it. Lapsed claims are swept first, so that a crashed
 * upload's claim does not hold its name for ever and spent URLs do not pile up.
 */
export async function takeClaim(db: Knex, claim: string, ttlMs: number): Promise<boolean> {
  const now = new Date();
  await db('mediaclaims').where('expires_at', '<', now.toISOString()).delete();
  try {
    await db('mediaclaims').insert({
      claim,
      expires_at: new Date(now.getTime() + ttlMs).toISOString(),
      created_at: now.toISOString(),
    });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function releaseClaim(db: Knex, claim: string): Promise<void> {
  await db('mediaclaims').where({ claim }).delete();
}

/**
 * Feedback pictures arrive base64-encoded inside the JSON body (contract §10): a picture may decode to
 * at most FEEDBACK_IMAGE_MAX_BYTES, a request carry at most FEEDBACK_MAX_IMAGES of them, and its body
 * may be at most FEEDBACK_BODY_LIMIT, so that one request stays well within the server's memory.
 */
export const FEEDBACK_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
export const FEEDBACK_MAX_IMAGES = 12;
export const FEEDBACK_BODY_LIMIT = '24mb';

/**
 * The bytes of a base64 picture (a `data:…;base64,` prefix is allowed), checked like an upload: its
 * size (413) before it is decoded, and its first bytes against its extension.
 */
export function decodeChecked(content: string, name: CheckedName, maxBytes: number): Buffer {
  const text = content.replace(/^data:[\w.+-]+\/[\w.+-]+;base64,/, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw httpError(400, UPLOAD_MESSAGES.badType);
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  if (Math.floor((text.length * 3) / 4) - padding > maxBytes) throw tooLarge(maxBytes);
  const bytes = Buffer.from(text, 'base64');
  if (!headMatches(name.ext, bytes.subarray(0, SNIFF_BYTES))) throw httpError(400, UPLOAD_MESSAGES.badType);
  return bytes;
}
