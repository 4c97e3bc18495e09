import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Media files: lesson documents (pictures, audio, video, PDFs) and teachers' feedback pictures. What
 * both servers and the sync tool agree on: which names are media, what type an extension means
 * (contract §0 file-type classification), and how a media file is served over HTTP.
 */

/** documents.documenttypeid values (contract §0). */
export const FILE_TYPE = { invalid: 0, audio: 1, video: 2, html: 3, text: 4, pdf: 5, image: 6, zip: 7 } as const;

interface MediaKind {
  filetype: number;
  contentType: string;
}

// `log` counts as an image in the original's classification (a classroom's log files attached to
// feedback); it is served as plain text, which is what it is.
const KINDS: Record<string, MediaKind> = {
  mp3: { filetype: FILE_TYPE.audio, contentType: 'audio/mpeg' },
  mp4: { filetype: FILE_TYPE.video, contentType: 'video/mp4' },
  pdf: { filetype: FILE_TYPE.pdf, contentType: 'application/pdf' },
  jpg: { filetype: FILE_TYPE.image, contentType: 'image/jpeg' },
  jpeg: { filetype: FILE_TYPE.image, contentType: 'image/jpeg' },
  png: { filetype: FILE_TYPE.image, contentType: 'image/png' },
  gif: { filetype: FILE_TYPE.image, contentType: 'image/gif' },
  log: { filetype: FILE_TYPE.image, contentType: 'text/plain; charset=utf-8' },
};

/** The extension after the last dot, lower-cased; '' when the name has none. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 || dot === name.length - 1 ? '' : name.slice(dot + 1).toLowerCase();
}

/** The file type a name's extension means (0 for anything that is not media). */
export function mediaFileType(name: string): number {
  return KINDS[extensionOf(name)]?.filetype ?? FILE_TYPE.invalid;
}

export function mediaContentType(name: string): string | undefined {
  return KINDS[extensionOf(name)]?.contentType;
}

/**
 * A media file name that is safe as one path segment on every file system and in a URL: letters,
 * digits, `_`, `-` and dots (never two in a row, never first), a known media extension, at most 200
 * characters. Uploads are held to stricter rules; this is what a server serves and the sync tool
 * writes to disk, so that a name from a database or a remote list can never leave its folder.
 */
export function isMediaFileName(name: string): boolean {
  return (
    /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/.test(name) &&
    !name.includes('..') &&
    mediaFileType(name) !== FILE_TYPE.invalid
  );
}

/** How deep a media name's folders may go (`demo/counting-to-ten.mp4` is one folder deep). */
export const MAX_MEDIA_FOLDERS = 8;

/**
 * A media name that may hold folders: `/`-separated segments, each safe as a file name (the rules of
 * isMediaFileName but for the extension, so never empty, `.` or `..`, never hidden), the last a media
 * file name, at most 300 characters. A name that passes stays inside the folder it is joined to.
 */
export function isMediaPath(name: string): boolean {
  if (name.length > 300) return false;
  const parts = name.split('/');
  if (parts.length > MAX_MEDIA_FOLDERS + 1) return false;
  const file = parts.pop() as string;
  return (
    isMediaFileName(file) && parts.every((p) => /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/.test(p) && !p.includes('..'))
  );
}

/** Where feedback pictures live in the object store, below the documents at the root. */
export const FEEDBACK_PREFIX = 'feedback/';

/**
 * A media object key: a document name (which may hold folders, `demo/counting-to-ten.mp4`), or a
 * feedback picture under `feedback/`.
 */
export function isMediaKey(key: string): boolean {
  return key.startsWith(FEEDBACK_PREFIX) ? isMediaFileName(key.slice(FEEDBACK_PREFIX.length)) : isMediaPath(key);
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/** What a server knows of one media file before it reads it. */
export interface MediaFile {
  size: number;
  /** The file's entity tag, without quotes. */
  etag: string;
  lastModified?: string;
  contentType: string;
  /** The file's bytes, or the inclusive range of them. */
  open(range?: ByteRange): Promise<Readable>;
}

/**
 * One range of a `Range` header (`bytes=a-b`, `bytes=a-`, `bytes=-n`) against a size; `null` when the
 * header asks for nothing this file has (416), `undefined` when it is absent, several ranges or not
 * understood (the whole file, as RFC 9110 allows).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return null;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return null;
  return { start, end };
}

const quoted = (etag: string) => `"${etag.replace(/^W\//, '').replace(/"/g, '')}"`;

/** Whether an `If-None-Match` list names this entity (weak comparison, as RFC 9110 asks for GET). */
function matchesAny(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const want = quoted(etag);
  return header.split(',').some((t) => quoted(t.trim()) === want);
}

/**
 * Answers a GET or HEAD of a media file: `ETag`, `If-None-Match` (304), one `Range` (206, 416 when
 * unsatisfiable, the whole file when `If-Range` names another version), the type the name's extension
 * means and `nosniff`, so that a browser never runs an uploaded file as a page.
 */
export async function sendMedia(req: Request, res: Response, file: MediaFile): Promise<void> {
  const etag = quoted(file.etag);
  res.setHeader('ETag', etag);
  if (file.lastModified) res.setHeader('Last-Modified', new Date(file.lastModified).toUTCString());
  res.setHeader('Accept-Ranges', 'bytes');
  // Public, but a replaced file (a document deleted and uploaded again) must show: revalidate by ETag.
  res.setHeader('Cache-Control', 'public, no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  res.setHeader('Content-Type', file.contentType);

  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch && matchesAny(ifNoneMatch, file.etag)) {
    res.status(304).end();
    return;
  }
  const ifRange = req.get('if-range');
  let range = parseRange(req.headers.range, file.size);
  if (range !== undefined && ifRange && quoted(ifRange) !== etag) range = undefined;
  if (range === null) {
    res.setHeader('Content-Range', `bytes */${file.size}`);
    res.removeHeader('Content-Type');
    res.status(416).end();
    return;
  }
  if (range) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    res.status(200);
    res.setHeader('Content-Length', String(file.size));
  }
  if (req.method === 'HEAD' || file.size === 0) {
    res.end();
    return;
  }
  const body = await file.open(range ?? undefined);
  try {
    await pipeline(body, res);
  } catch {
    // The client went away, or the store failed midway: the status line is out, so the connection
    // is all there is left to end.
    body.destroy();
    res.destroy();
  }
}
