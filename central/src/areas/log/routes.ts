import { z } from 'zod';
import { anyUser, httpError, isZipError, metricsOf, startLogReader } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralCtx, CentralRoute } from '../../http/types';
import { logImportSwitch } from '../../http/switches';
import { importLogZip } from './import';
import { schoolUserExists } from './store';
import { importSlotsOf, takeAccountTurn } from './slots';
import { spoolUpload } from './upload';
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf } from '../../http/outage';

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

async function importLog(ctx: CentralCtx<{ query: typeof importQuery }>): Promise<boolean> {
  const { req, res, caller, config, db, logger, objects } = ctx;
  const reqId = String((req as { id?: unknown }).id ?? '');
  // Decided before the upload is read: a staff token, or a school user central no longer has, gets the
  // original's answer without the server spooling a file it will not import.
  if (caller.kind !== 'school' || !caller.schooluserid) throw httpError(400, LOG_IMPORT_MESSAGES.notTeacher);
  let teacherExists: boolean;
  try {
    teacherExists = await schoolUserExists(db, caller.schooluserid);
  } catch (err) {
    throw importFailure(err, logger, reqId);
  }
  if (!teacherExists) throw httpError(400, LOG_IMPORT_MESSAGES.noTeacher);

  const metrics = metricsOf(req);
  // A 429 (the account's turn or every slot taken) is counted as a refused import.
  const counting429 = (err: unknown): never => {
    if ((err as { status?: unknown }).status === 429) metrics?.importsRefused.inc({ kind: 'log' });
    throw err;
  };
  // One import per account from here; an import slot only once the whole upload is on disk (slots.ts).
  const slots = importSlotsOf(config);
  const releaseAccount = await takeAccountTurn(req, caller.schooluserid).catch(counting429);
  // Running from here: receiving the upload, waiting for a slot, importing.
  const counted = metrics?.startImport('log');
  const started = performance.now();
  try {
    const upload = await spoolUpload(req, 'importfile', config.maxUploadBytes, config.uploadIdleMs);
    const spooled = performance.now();
    let releaseSlot: (() => void) | undefined;
    let reader: ReturnType<typeof startLogReader> | undefined;
    try {
      releaseSlot = await slots.slot().catch(counting429);
      reader = startLogReader();
      const summary = await importLogZip(
        { db, objects, logger },
        { filePath: upload.path, schooluserid: caller.schooluserid, offline: ctx.query.offline, reader },
      );
      // The body stays the contract's `{error:false, data:true}`; what was imported travels in a header for
      // tools such as `npm run sync-log`.
      res.setHeader('X-Log-Import', JSON.stringify(summary));
      const ms = { upload: Math.round(spooled - started), import: Math.round(performance.now() - spooled) };
      logger.info({ reqId, ...summary, bytes: upload.size, ms }, 'log imported');
      counted?.finished(Object.values(summary.imported).reduce((n, rows) => n + (rows ?? 0), 0));
      return true;
    } catch (err) {
      throw releaseSlot ? importFailure(err, logger, reqId) : err;
    } finally {
      reader?.dispose();
      releaseSlot?.();
      await upload.dispose();
    }
  } finally {
    // Anything but the success above (a refused file, an outage, a client gone) ends the import as failed.
    counted?.failed();
    releaseAccount();
  }
}

/**
 * Every failure of the import itself is a 400 (spec rule 6); only the known causes are named to the client.
 * A dependency out of reach (the database, the object store) is not the file's fault: the answer keeps the
 * contract's 400 envelope but says so and carries `Retry-After`, which `npm run sync-log` waits for and
 * retries on, while a refusal of the file has none.
 */
function importFailure(
  err: unknown,
  logger: { warn: (o: object, m: string) => void; error: (o: object, m: string) => void },
  reqId: string,
): Error {
  const outage = outageOf(err);
  if (outage) {
    logger.error(
      { err, reqId, dependency: outage },
      `log import failed: the ${outage} is unavailable (rolled back; the client is told to retry)`,
    );
    return httpError(400, `${LOG_IMPORT_MESSAGES.failed} (the ${outage} is unavailable, please try again later)`, {
      'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS),
    });
  }
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
  route('PUT', '/log/import', anyUser(), scope.schoolsOfCaller, { query: importQuery }, importLog, {
    before: [logImportSwitch],
    summary: 'ingest classroom activity-log ZIP (multipart importfile)',
  }),
];
