import { Transform, type Readable, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import { ZipError } from './errors';
import { ZipCryptoDecrypt } from './zipcrypto';

/** Bounds on what one uploaded ZIP may unpack to; a ZIP bomb or a flood of entries stops at the first breach. */
export interface ZipLimits {
  maxEntries: number;
  /** Uncompressed bytes over all entries that are read. */
  maxTotalBytes: number;
  /** Uncompressed bytes of one entry. */
  maxEntryBytes: number;
  /** Largest uncompressed/compressed ratio of one entry, checked once the entry is bigger than `ratioFloorBytes`. */
  maxRatio: number;
  /** Small entries compress extremely well without being bombs (a run of spaces, an empty array); they are exempt. */
  ratioFloorBytes: number;
  /**
   * Password for entries with traditional PKWARE encryption (central's log import used one fixed password).
   * Without it an encrypted entry is refused; plain entries ignore it.
   */
  password?: string;
}

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxEntries: 1000,
  maxTotalBytes: 1024 * 1024 * 1024,
  maxEntryBytes: 512 * 1024 * 1024,
  // JSON and log text compress 10-30x in practice; 200x leaves room and still stops a bomb early.
  maxRatio: 200,
  ratioFloorBytes: 1024 * 1024,
});

export interface SafeEntry {
  /** The entry's path inside the ZIP (already checked: relative, no `..`, no backslash). */
  readonly name: string;
  readonly size: number;
  readonly compressedSize: number;
  readonly isDirectory: boolean;
  /** The entry's uncompressed bytes, counted against the limits as they flow. */
  open(): Promise<Readable>;
  /** The whole entry in memory; for small entries only (rosters, curriculum packages are bounded by maxEntryBytes). */
  readBuffer(): Promise<Buffer>;
  readText(): Promise<string>;
}

export interface SafeZip {
  /** The entries in the central directory's order; a refused entry stops the iteration with a ZipError. */
  entries(): AsyncGenerator<SafeEntry>;
  close(): void;
}

/** The reason yauzl refused a file name, or ours: the same rules, stated once for a clear message. */
export function unsafeEntryName(name: string): string | null {
  if (name.length === 0) return 'empty entry name';
  if (name.includes('\\')) return `backslash in entry name: ${name}`;
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return `absolute path in entry name: ${name}`;
  if (name.split('/').includes('..')) return `".." in entry name: ${name}`;
  if (name.includes('\u0000')) return `NUL in entry name`;
  return null;
}

function toZipError(err: unknown): ZipError {
  if (err instanceof ZipError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/invalid characters in fileName|absolute path|invalid relative path/.test(message))
    return new ZipError('bad_name', `Unsafe entry name (${message})`);
  return new ZipError('corrupt', `Not a readable ZIP file (${message})`);
}

/**
 * Counts bytes as they pass and fails the stream as soon as a limit is crossed; with `declared`, also
 * when the entry inflates to more or fewer bytes than its header declares.
 */
class ByteLimit extends Transform {
  private seen = 0;
  constructor(
    private readonly name: string,
    private readonly limits: ZipLimits,
    private readonly total: { bytes: number },
    private readonly declared?: number,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    this.total.bytes += chunk.length;
    if (this.seen > this.limits.maxEntryBytes)
      return done(
        new ZipError('entry_too_large', `ZIP entry ${this.name} is larger than ${this.limits.maxEntryBytes} bytes`),
      );
    if (this.total.bytes > this.limits.maxTotalBytes)
      return done(new ZipError('total_too_large', `ZIP content is larger than ${this.limits.maxTotalBytes} bytes`));
    if (this.declared !== undefined && this.seen > this.declared)
      return done(sizeMismatch(this.name, this.declared, `at least ${this.seen}`));
    done(null, chunk);
  }
  override _flush(done: TransformCallback): void {
    if (this.declared !== undefined && this.seen !== this.declared)
      done(sizeMismatch(this.name, this.declared, `only ${this.seen}`));
    else done();
  }
}

const sizeMismatch = (name: string, declared: number, got: string) =>
  new ZipError('corrupt', `Not a readable ZIP file (entry ${name} declares ${declared} bytes, holds ${got})`);

// Inflated output per chunk. zlib's default (16 KB) hands a 36 MB log.ini over in some 2,300 chunks, each
// through the stream machinery; 256 KB chunks read the same entry about a quarter quicker.
const INFLATE_CHUNK = 256 * 1024;

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

type YauzlOpener = (options: yauzl.Options, cb: (err: Error | null, zip: yauzl.ZipFile) => void) => void;

function openWith(opener: YauzlOpener, limits: ZipLimits): Promise<SafeZip> {
  return new Promise((resolve, reject) => {
    // lazyEntries: one entry at a time, so a huge central directory is never held at once;
    // validateEntrySizes: a lying header cannot slip more bytes past the declared size.
    opener(
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true, decodeStrings: true },
      (err, zip) => {
        if (err) return reject(toZipError(err));
        resolve(wrap(zip, limits));
      },
    );
  });
}

function wrap(zip: yauzl.ZipFile, limits: ZipLimits): SafeZip {
  // An 'error' nobody listens to would crash the process; errors that matter reach the reader through entries().
  zip.on('error', () => undefined);
  const total = { bytes: 0 };
  let closed = false;
  const close = () => {
    if (!closed) {
      closed = true;
      zip.close();
    }
  };

  async function* entries(): AsyncGenerator<SafeEntry> {
    if (zip.entryCount > limits.maxEntries)
      throw new ZipError('too_many_entries', `ZIP has more than ${limits.maxEntries} entries`);
    let pending: { resolve: (e: yauzl.Entry | null) => void; reject: (e: unknown) => void } | null = null;
    const onEntry = (e: yauzl.Entry) => pending?.resolve(e);
    const onEnd = () => pending?.resolve(null);
    const onError = (e: unknown) => pending?.reject(e);
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    try {
      let count = 0;
      for (;;) {
        const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
          pending = { resolve, reject };
          zip.readEntry();
        }).catch((e) => {
          throw toZipError(e);
        });
        if (!entry) return;
        count += 1;
        if (count > limits.maxEntries)
          throw new ZipError('too_many_entries', `ZIP has more than ${limits.maxEntries} entries`);
        const problem = unsafeEntryName(entry.fileName);
        if (problem) throw new ZipError('bad_name', `Unsafe entry name (${problem})`);
        if (entry.isEncrypted() && limits.password === undefined)
          throw new ZipError('encrypted', `ZIP entry ${entry.fileName} is encrypted`);
        if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
          throw new ZipError(
            'corrupt',
            `ZIP entry ${entry.fileName} uses an unsupported compression method (${entry.compressionMethod})`,
          );
        }
        if (entry.uncompressedSize > limits.maxEntryBytes) {
          throw new ZipError(
            'entry_too_large',
            `ZIP entry ${entry.fileName} is larger than ${limits.maxEntryBytes} bytes`,
          );
        }
        if (
          entry.uncompressedSize > limits.ratioFloorBytes &&
          entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.maxRatio
        ) {
          throw new ZipError('ratio', `ZIP entry ${entry.fileName} has a suspicious compression ratio`);
        }
        yield makeEntry(zip, entry, limits, total);
      }
    } finally {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    }
  }

  return { entries, close };
}

function makeEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, limits: ZipLimits, total: { bytes: number }): SafeEntry {
  const encrypted = entry.isEncrypted();
  // Deflated entries are read raw and inflated here (larger chunks than yauzl's own inflater, and the
  // declared size checked as yauzl would); encrypted ones are decrypted first.
  const deflated = entry.compressionMethod === 8;
  const open = () =>
    new Promise<Readable>((resolve, reject) => {
      const cb = (err: Error | null, stream: Readable) => {
        if (err) return reject(toZipError(err));
        const limited = new ByteLimit(
          entry.fileName,
          limits,
          total,
          encrypted || deflated ? entry.uncompressedSize : undefined,
        );
        // Bytes start flowing on the next tick, before the caller can attach its own listeners: an early
        // failure (a wrong password in the first chunk) must not be an unhandled 'error' event. The stream
        // keeps the error (readable.errored) and whoever reads it gets it.
        limited.on('error', () => undefined);
        const fail = (e: unknown) => limited.destroy(toZipError(e));
        stream.on('error', fail);
        let out: Readable = stream;
        if (encrypted) {
          // The check byte is the CRC's high byte, or the DOS time's when a data descriptor carries the sizes (bit 3).
          const check =
            entry.generalPurposeBitFlag & 0x8 ? (entry.lastModFileTime >>> 8) & 0xff : (entry.crc32 >>> 24) & 0xff;
          out = out
            .pipe(new ZipCryptoDecrypt(Buffer.from(limits.password ?? '', 'utf8'), check, entry.fileName))
            .on('error', fail);
        }
        if (deflated) out = out.pipe(zlib.createInflateRaw({ chunkSize: INFLATE_CHUNK })).on('error', fail);
        resolve(out.pipe(limited));
      };
      if (encrypted || deflated)
        zip.openReadStream(entry, { decodeFileData: false } as unknown as yauzl.ZipFileOptions, cb as never);
      else zip.openReadStream(entry, cb as never);
    });
  const readBuffer = async () => collect(await open());
  return {
    name: entry.fileName,
    size: entry.uncompressedSize,
    compressedSize: entry.compressedSize,
    isDirectory: entry.fileName.endsWith('/'),
    open,
    readBuffer,
    readText: async () => stripBom((await readBuffer()).toString('utf8')),
  };
}

export const stripBom = (s: string): string => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);

/** Opens a ZIP file on disk (an upload streamed to a temporary file). */
export function openZipFile(path: string, limits: Partial<ZipLimits> = {}): Promise<SafeZip> {
  return openWith((o, cb) => yauzl.open(path, o, cb), { ...DEFAULT_ZIP_LIMITS, ...limits });
}

/** Opens a ZIP held in memory. */
export function openZipBuffer(buffer: Buffer, limits: Partial<ZipLimits> = {}): Promise<SafeZip> {
  return openWith((o, cb) => yauzl.fromBuffer(buffer, o, cb), { ...DEFAULT_ZIP_LIMITS, ...limits });
}

export type ZipSource = { path: string } | { buffer: Buffer };

export function openZip(source: ZipSource, limits: Partial<ZipLimits> = {}): Promise<SafeZip> {
  return 'path' in source ? openZipFile(source.path, limits) : openZipBuffer(source.buffer, limits);
}

/** Runs `use` on an opened ZIP and closes it whatever happens. */
export async function withZip<T>(
  source: ZipSource,
  limits: Partial<ZipLimits>,
  use: (zip: SafeZip) => Promise<T>,
): Promise<T> {
  const zip = await openZip(source, limits);
  try {
    return await use(zip);
  } finally {
    zip.close();
  }
}
