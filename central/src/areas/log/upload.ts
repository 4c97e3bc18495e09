import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Request } from 'express';
import busboy from 'busboy';
import { httpError, uploadStorageError } from '@lms/shared';
import { watchSilence } from '../../http/uploads';
import { spoolPrefix } from '../../http/spool';

export interface SpooledFile {
  /** Absolute path of the temporary copy; remove it with `dispose`. */
  path: string;
  size: number;
  /** The name the client gave the part (the app sends `studentlog`), for the log only. */
  filename: string;
  dispose(): Promise<void>;
}

/**
 * Streams the multipart file part `field` to a temporary file, never holding the upload in memory
 * (a six-month log can be tens of megabytes and the original crashed on such uploads). Other parts
 * are drained and ignored. Over `maxBytes` the request is refused with 413 before more is written.
 */
export async function spoolUpload(
  req: Request,
  field: string,
  maxBytes: number,
  idleMs = 30_000,
): Promise<SpooledFile> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType))
    throw httpError(400, `Invalid File (send the ZIP as multipart/form-data field ${field})`);

  const dir = await fsp.mkdtemp(spoolPrefix('logimport'));
  const file = path.join(dir, `${crypto.randomUUID()}.zip`);
  const dispose = () => fsp.rm(dir, { recursive: true, force: true });

  try {
    const result = await new Promise<{ size: number; filename: string } | null>((resolve, reject) => {
      let bb: busboy.Busboy;
      try {
        bb = busboy({ headers: req.headers, limits: { fileSize: maxBytes, files: 1, fields: 20, parts: 30 } });
      } catch (err) {
        reject(httpError(400, `Invalid File (${err instanceof Error ? err.message : 'bad multipart request'})`));
        return;
      }
      let writing: Promise<{ size: number; filename: string }> | null = null;
      let failed = false;
      // An upload that stops sending holds a slot, a temporary file and a reader: it is given up.
      const stopWatching = watchSilence(req, idleMs, () => {
        // The client stalled: the answer closes the connection rather than wait for the rest (after the
        // import has given up its slot, so a client that retries at once finds it free).
        req.res?.setHeader('Connection', 'close');
        fail(httpError(408, `Invalid File (the upload sent nothing for ${Math.round(idleMs / 1000)} s)`));
      });
      const fail = (err: unknown) => {
        if (failed) return;
        failed = true;
        stopWatching();
        req.unpipe(bb);
        // Keep reading (and discarding) so that the client sees our answer instead of a reset connection.
        req.resume();
        reject(err);
      };
      bb.on('file', (name, stream, info) => {
        if (name !== field || writing) {
          stream.resume();
          return;
        }
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
        });
        stream.on('limit', () =>
          fail(httpError(413, `Invalid File (the upload is larger than ${Math.floor(maxBytes / (1024 * 1024))} MB)`)),
        );
        writing = pipeline(stream, fs.createWriteStream(file, { flags: 'wx' })).then(() => ({
          size,
          filename: info.filename ?? '',
        }));
        writing.catch(fail);
      });
      bb.on('error', (err) =>
        fail(httpError(400, `Invalid File (${err instanceof Error ? err.message : 'bad multipart request'})`)),
      );
      bb.on('close', () => {
        stopWatching();
        if (failed) return;
        if (!writing) resolve(null);
        else writing.then(resolve, fail);
      });
      req.on('aborted', () => fail(httpError(400, 'Invalid File (the upload was interrupted)')));
      req.pipe(bb);
    });
    if (!result) throw httpError(400, `Invalid File (no file in field ${field})`);
    return { path: file, size: result.size, filename: result.filename, dispose };
  } catch (err) {
    await dispose();
    throw uploadStorageError(err);
  }
}
