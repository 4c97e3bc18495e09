import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Request } from 'express';
import busboy from 'busboy';
import { httpError, uploadStorageError } from '@lms/shared';

/** The multipart file part every import carries (central and the teacher app both name it so). */
export const UPLOAD_FIELD = 'importfile';

export interface Upload {
  /** A temporary file holding the part's bytes. */
  path: string;
  size: number;
  /** Removes the temporary file; safe to call twice. */
  dispose(): void;
}

/**
 * Streams the `importfile` part of a multipart request to a temporary file, never holding it in memory,
 * and stops at `maxBytes` with a 413. Other parts are drained and ignored; a request without the part is a 400.
 */
export async function receiveUpload(req: Request, maxBytes: number): Promise<Upload> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? ''))
    throw httpError(400, `Invalid file (expected multipart/form-data with a "${UPLOAD_FIELD}" part)`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024)
    throw httpError(413, `Invalid file (larger than ${maxBytes} bytes)`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-upload-'));
  const file = path.join(dir, 'upload.zip');
  const dispose = () => fs.rmSync(dir, { recursive: true, force: true });

  try {
    const size = await new Promise<number>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: maxBytes, fields: 20, parts: 30 } });
      } catch {
        reject(httpError(400, 'Invalid file (malformed multipart request)'));
        return;
      }
      let written: Promise<number> | undefined;
      let tooLarge = false;
      parser.on('file', (name, stream) => {
        if (name !== UPLOAD_FIELD || written) {
          stream.resume();
          return;
        }
        let bytes = 0;
        stream.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        stream.on('limit', () => {
          tooLarge = true;
        });
        written = pipeline(stream, fs.createWriteStream(file)).then(() => bytes);
        // A write that fails (a full disk) answers at once; the rest of the request is read and dropped.
        written.catch((err: unknown) => {
          req.unpipe(parser);
          req.resume();
          reject(err);
        });
      });
      parser.on('error', () => reject(httpError(400, 'Invalid file (malformed multipart request)')));
      parser.on('close', () => {
        if (!written) return reject(httpError(400, `Invalid file (no "${UPLOAD_FIELD}" part)`));
        written.then(
          (n) => (tooLarge ? reject(httpError(413, `Invalid file (larger than ${maxBytes} bytes)`)) : resolve(n)),
          reject,
        );
      });
      req.on('error', reject);
      // A client that gives up mid-upload must not leave the request (and its temporary file) pending.
      req.on('close', () => {
        if (!req.complete) reject(httpError(400, 'Invalid file (upload interrupted)'));
      });
      req.pipe(parser);
    });
    return { path: file, size, dispose };
  } catch (err) {
    dispose();
    throw uploadStorageError(err);
  }
}
