import type { Readable } from 'node:stream';

/**
 * What a successful put returns, to be recorded as-is in `logfiles.logfilemeta` / `documents.documents3meta`.
 * `Location, ETag, Bucket, Key` keep the names the original system stored (its S3 upload result), so rows written
 * here read the same to existing clients; `size` and `contentType` are ours.
 */
export interface StoredObject {
  Location: string;
  ETag: string;
  /** The S3 bucket, or the folder (as configured) for the folder driver. */
  Bucket: string;
  Key: string;
  size: number;
  contentType: string;
}

export interface ObjectInfo {
  key: string;
  size: number;
  etag: string;
  /** ISO-8601 UTC. */
  lastModified: string;
  contentType: string;
  /** User metadata, keys lower-case. */
  metadata: Record<string, string>;
}

export interface ListedObject {
  key: string;
  size: number;
  etag: string;
  lastModified: string;
}

export interface PutOptions {
  contentType?: string;
  /** User metadata: keys `[a-z0-9-]`, values printable ASCII (what every S3-compatible store keeps intact). */
  metadata?: Record<string, string>;
}

export type ObjectBody = Buffer | Uint8Array | string | Readable;

/**
 * The object store the central API archives uploads in. Contract shared by every driver:
 * - `put` is all-or-nothing: when it rejects, no object (and no partial object) is visible under the key;
 * - `get` and `stat` reject with code `NotFound` for a missing key;
 * - `delete` of a missing key succeeds, so a rollback can always call it;
 * - keys are relative `/`-separated paths; traversal and hidden segments are refused with code `InvalidKey`.
 */
export interface ObjectStore {
  readonly kind: 'folder' | 's3';
  put(key: string, body: ObjectBody, options?: PutOptions): Promise<StoredObject>;
  /** The object's bytes, or only those of an inclusive byte range (for media served with `Range`). */
  get(key: string, range?: { start: number; end: number }): Promise<Readable>;
  stat(key: string): Promise<ObjectInfo>;
  delete(key: string): Promise<void>;
  /** Every object whose key starts with `prefix` (plain string prefix, as S3 does), sorted by key. */
  list(prefix?: string): Promise<ListedObject[]>;
  /**
   * S3-compatible stores only: a URL that lets its holder PUT this key directly into the bucket until it
   * expires (`requestDate` defaults to now). The folder store has none; central signs its own.
   */
  presignPut?(key: string, expiresSeconds: number, requestDate?: Date): Promise<string>;
  /**
   * Rejects unless the store can take an upload now (readiness): the folder store writes and removes a
   * small file where every put starts; an S3 store asks for its bucket (creating it, as a first put would).
   */
  probe(): Promise<void>;
  /**
   * Drivers that keep partial writes of their own (the folder store's `.tmp`): removes those of processes
   * that are gone (a crash during a put), never a live process's. Returns the names removed.
   */
  sweepTemporary?(): Promise<string[]>;
}

export type ObjectStoreErrorCode =
  'NotFound' | 'InvalidKey' | 'InvalidMetadata' | 'Conflict' | 'Unavailable' | 'Failed';

export class ObjectStoreError extends Error {
  override readonly name = 'ObjectStoreError';
  constructor(
    readonly code: ObjectStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isObjectNotFound(err: unknown): boolean {
  return err instanceof ObjectStoreError && err.code === 'NotFound';
}

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

const MAX_KEY_BYTES = 1024;
// Control characters break S3 request signing on some servers and make file names unreadable.
const CONTROL = /[\u0000-\u001f\u007f]/;

function checkPath(value: string, what: 'key' | 'prefix'): void {
  const refuse = (why: string): never => {
    throw new ObjectStoreError('InvalidKey', `Invalid object ${what} ${JSON.stringify(value)}: ${why}`);
  };
  if (Buffer.byteLength(value) > MAX_KEY_BYTES) refuse(`longer than ${MAX_KEY_BYTES} bytes`);
  if (value.includes('\\')) refuse('backslashes are not allowed');
  if (CONTROL.test(value)) refuse('control characters are not allowed');
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value)) refuse('absolute paths are not allowed');
  const segments = value.split('/');
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '..' || segment === '.') refuse('"." and ".." segments are not allowed');
    // A prefix may end in "/" (a folder) or stop in the middle of a segment; a key may do neither.
    if (segment === '' && !(what === 'prefix' && last)) refuse('empty path segments are not allowed');
    // Dot-names are reserved: the folder driver keeps its temporary and metadata files under them.
    if (segment.startsWith('.')) refuse('segments may not start with "."');
  });
}

export function assertValidKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') {
    throw new ObjectStoreError('InvalidKey', 'Invalid object key: a non-empty string is required');
  }
  checkPath(key, 'key');
}

export function assertValidPrefix(prefix: string): void {
  if (prefix !== '') checkPath(prefix, 'prefix');
}

// Header names an S3 server treats as standard headers; as user metadata they would be lost or misread.
const RESERVED_META = /^(content-|x-amz-|cache-control$|expires$|if-)/;
const MAX_METADATA_BYTES = 2048;

/** Validates and lower-cases user metadata; returns the content type to store. */
export function normaliseOptions(options: PutOptions = {}): { contentType: string; metadata: Record<string, string> } {
  const contentType = options.contentType ?? DEFAULT_CONTENT_TYPE;
  if (!/^[\x21-\x7e]+\/[\x20-\x7e]+$/.test(contentType)) {
    throw new ObjectStoreError('InvalidMetadata', `Invalid content type ${JSON.stringify(contentType)}`);
  }
  const metadata: Record<string, string> = {};
  let bytes = 0;
  for (const [rawKey, value] of Object.entries(options.metadata ?? {})) {
    const key = rawKey.toLowerCase();
    if (!/^[a-z0-9][a-z0-9-]*$/.test(key) || RESERVED_META.test(key)) {
      throw new ObjectStoreError('InvalidMetadata', `Invalid metadata name ${JSON.stringify(rawKey)}`);
    }
    if (typeof value !== 'string' || !/^[\x20-\x7e]*$/.test(value)) {
      throw new ObjectStoreError('InvalidMetadata', `Metadata ${key} must be printable ASCII text`);
    }
    if (key in metadata) throw new ObjectStoreError('InvalidMetadata', `Metadata ${key} is given twice`);
    metadata[key] = value;
    bytes += key.length + value.length;
  }
  if (bytes > MAX_METADATA_BYTES) {
    throw new ObjectStoreError('InvalidMetadata', `Metadata is larger than ${MAX_METADATA_BYTES} bytes`);
  }
  return { contentType, metadata };
}

export function isReadable(body: ObjectBody): body is Readable {
  return typeof (body as Readable).pipe === 'function' && typeof (body as Readable).on === 'function';
}

export function toBuffer(body: Exclude<ObjectBody, Readable>): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}
