import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fs from 'node:fs';
import type { Response } from 'express';
import { httpError } from '@lms/shared';
import { ClassroomError, classroomClientOf, type ClassroomAnswer } from '../../classroom-client';
import type { CentralCtx } from '../../http/types';
import { packageToTempFile } from './store';

/** Streams a package to the client as a ZIP download. */
export async function sendZip(
  res: Response,
  filename: string,
  zip: Readable,
  beforeEnd?: () => Promise<void>,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'application/zip');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  // Rosters and curriculum are not for shared caches.
  res.setHeader('Cache-Control', 'no-store');
  if (!beforeEnd) {
    await pipeline(zip, res);
    return;
  }
  // What the whole package tells (how many rows it held) is recorded before the client sees its end.
  await pipeline(zip, res, { end: false });
  try {
    await beforeEnd();
  } finally {
    res.end();
  }
}

/**
 * A classroom server that failed becomes a 500 with a message the caller can act on (the spec's answer to
 * a wrong RPI_CLOUD or key). The classroom applies each import in one transaction, so a refused or broken
 * upload leaves its previous content as it was.
 */
export function classroomFailure(err: unknown): never {
  // 409: the classroom holds something the package conflicts with (a roster for a school whose content was never
  // pushed, content that learners are still on); its words say what to do, and retrying will not help.
  if (err instanceof ClassroomError && err.status === 409) {
    throw httpError(409, `Classroom server: ${err.remoteMessage ?? err.message}`);
  }
  if (err instanceof ClassroomError) throw httpError(500, err.message);
  throw err;
}

/** The `data` of the classroom's envelope; a 2xx that is not a success envelope counts as a failure. */
export function classroomData(answer: ClassroomAnswer): unknown {
  const body = answer.body as { error?: unknown; data?: unknown; errormessage?: unknown } | undefined;
  if (!body || typeof body !== 'object' || body.error !== false) {
    throw httpError(500, `Classroom server answered ${answer.status} without a success envelope`);
  }
  return body.data;
}

type ImportKind = 'master' | 'students' | 'teachers';

/** What a push needs of the handler's context: the request (its id goes in the log), the configuration, the logger. */
export type PushCtx = Pick<CentralCtx, 'req' | 'config' | 'logger'>;

/**
 * `PUT`s a package file to `{RPI_CLOUD}/import/<kind>` and answers the classroom's `data`; the file is
 * removed afterwards. Both outcomes are logged: an operator looking for why a school has old content
 * finds the classroom's own words there.
 */
export async function pushFile(
  ctx: PushCtx,
  kind: ImportKind,
  file: { path: string; dispose: () => void },
): Promise<unknown> {
  const { req, config, logger } = ctx;
  const bytes = fs.statSync(file.path).size;
  try {
    const answer = await classroomClientOf(config).putImport(kind, file.path);
    const data = classroomData(answer);
    logger.info({ reqId: (req as { id?: unknown }).id, import: kind, bytes }, 'package pushed to the classroom server');
    return data;
  } catch (err) {
    if (err instanceof ClassroomError) {
      logger.warn(
        {
          reqId: (req as { id?: unknown }).id,
          import: kind,
          bytes,
          failure: err.kind,
          status: err.status,
          remote: err.remoteMessage,
        },
        'classroom server push failed',
      );
    }
    return classroomFailure(err);
  } finally {
    file.dispose();
  }
}

/** Builds a package to a temporary file and pushes it (see pushFile). */
export async function pushPackage(ctx: PushCtx, kind: ImportKind, zip: Readable): Promise<unknown> {
  return pushFile(ctx, kind, await packageToTempFile(zip));
}
