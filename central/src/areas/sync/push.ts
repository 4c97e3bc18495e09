import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { httpError } from '@lms/shared';
import type { Config } from '../../config';
import { ClassroomError, classroomClientOf, type ClassroomAnswer } from '../../classroom-client';
import { packageToTempFile } from './store';

/** Streams a package to the client as a ZIP download. */
export async function sendZip(res: Response, filename: string, zip: Readable): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'application/zip');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  await pipeline(zip, res);
}

/**
 * A classroom server that failed becomes a 500 with a message the caller can act on (the spec's answer to
 * a wrong RPI_CLOUD or key). The classroom applies each import in one transaction, so a refused or broken
 * upload leaves its previous content as it was.
 */
export function classroomFailure(err: unknown): never {
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

/** `PUT`s a package file to `{RPI_CLOUD}/import/<kind>` and answers the classroom's `data`; the file is removed afterwards. */
export async function pushFile(config: Config, kind: ImportKind, file: { path: string; dispose: () => void }): Promise<unknown> {
  try {
    const answer = await classroomClientOf(config).putImport(kind, file.path).catch(classroomFailure);
    return classroomData(answer);
  } finally {
    file.dispose();
  }
}

/** Builds a package to a temporary file and pushes it (see pushFile). */
export async function pushPackage(config: Config, kind: ImportKind, zip: Readable): Promise<unknown> {
  return pushFile(config, kind, await packageToTempFile(zip));
}
