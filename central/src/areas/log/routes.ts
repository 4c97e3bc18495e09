import { z } from 'zod';
import { anyUser, httpError, isZipError, metricsOf, route, startLogReader, type HandlerContext } from '@lms/shared';
import type { CentralRoute, Caller } from '../../http/types';
import { configOf, depsOf, objectsOf } from '../../http/context';
import { logImportSwitch } from '../../http/switches';
import { importLogZip } from './import';
import { schoolUserExists } from './store';
import { spoolUpload } from './upload';
import type { Config } from '../../config';

// The app sends `offline=true|false`; 1/0 are accepted too, and anything else is a clear 400.
const importQuery = z.object({
  offline: z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .transform((v) => v === 'true' || v === '1'),
});

/** Messages the original sent for these failures; clients may show them as they are. */
export const LOG_IMPORT_MESSAGES = {
  notTeacher: 'Please login as a teacher!',
  noTeacher: 'Teacher does not exist!',
  empty: 'Invalid file (Zip-file is empty)',
  invalidEntry: 'There is invalid file inside zip-file',
  failed: 'Invalid File',
} as const;

/** Imports at once per instance: each holds a reader thread, a temporary file and a transaction. */
const importSlots = new WeakMap<Config, { used: number }>();

function takeImportSlot(config: Config): () => void {
  let slots = importSlots.get(config);
  if (!slots) importSlots.set(config, (slots = { used: 0 }));
  if (slots.used >= config.maxConcurrentImports) {
    throw httpError(429, 'Too many log imports in progress, please try again later.', { 'Retry-After': '30' });
  }
  slots.used += 1;
  let released = false;
  const s = slots;
  return () => {
    if (released) return;
    released = true;
    s.used -= 1;
  };
}

async function importLog(ctx: HandlerContext<Caller>): Promise<boolean> {
  const { req, res, caller } = ctx;
  const deps = depsOf(req);
  const config = configOf(req);
  const reqId = String((req as { id?: unknown }).id ?? '');
  // Decided before the upload is read: a staff token, or a school user central no longer has, gets the
  // original's answer without the server spooling a file it will not import.
  if (caller.kind !== 'school' || !caller.schooluserid) throw httpError(400, LOG_IMPORT_MESSAGES.notTeacher);
  if (!(await schoolUserExists(deps.db, caller.schooluserid))) throw httpError(400, LOG_IMPORT_MESSAGES.noTeacher);

  const metrics = metricsOf(req);
  let release: () => void;
  try {
    release = takeImportSlot(config);
  } catch (err) {
    metrics?.importsRefused.inc({ kind: 'log' });
    throw err;
  }
  const counted = metrics?.startImport('log');
  const started = performance.now();
  // The log reader's thread boots while the upload arrives (only once the import has its slot).
  const reader = startLogReader();
  try {
    const upload = await spoolUpload(req, 'importfile', config.maxUploadBytes, config.uploadIdleMs);
    const spooled = performance.now();
    try {
      const summary = await importLogZip(
        { db: deps.db, objects: objectsOf(req), logger: deps.logger },
        { filePath: upload.path, schooluserid: caller.schooluserid, offline: ctx.query.offline as boolean, reader },
      );
      // The body stays the contract's `{error:false, data:true}`; what was imported travels in a header for
      // tools such as `npm run sync-log`.
      res.setHeader('X-Log-Import', JSON.stringify(summary));
      const ms = { upload: Math.round(spooled - started), import: Math.round(performance.now() - spooled) };
      deps.logger.info({ reqId, ...summary, bytes: upload.size, ms }, 'log imported');
      counted?.finished(Object.values(summary.imported).reduce((n, rows) => n + (rows ?? 0), 0));
      return true;
    } catch (err) {
      throw importFailure(err, deps.logger, reqId);
    } finally {
      await upload.dispose();
    }
  } finally {
    // Anything but the success above (a refused file, an outage, a client gone) ends the import as failed.
    counted?.failed();
    reader.dispose();
    release();
  }
}

/** Every failure of the import itself is a 400 (spec rule 6); only the known causes are named to the client. */
function importFailure(err: unknown, logger: { warn: (o: object, m: string) => void }, reqId: string): Error {
  if (isZipError(err)) {
    if (err.code === 'empty') return httpError(400, LOG_IMPORT_MESSAGES.empty);
    if (err.message === LOG_IMPORT_MESSAGES.invalidEntry) return httpError(400, LOG_IMPORT_MESSAGES.invalidEntry);
    return httpError(400, `${LOG_IMPORT_MESSAGES.failed} (${err.message})`);
  }
  // A database or object-store error: its text may hold SQL or paths, so the client gets the generic message.
  logger.warn({ err, reqId }, 'log import failed and was rolled back');
  return httpError(400, LOG_IMPORT_MESSAGES.failed);
}

export const logRoutes: CentralRoute[] = [
  route('PUT', '/log/import', anyUser(), { query: importQuery }, importLog, {
    before: [logImportSwitch],
    summary: 'ingest classroom activity-log ZIP (multipart importfile)',
  }),
];
