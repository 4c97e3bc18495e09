import type { Response } from 'express';
import type { Readable } from 'node:stream';
import {
  httpError, isExportedLogFile, logWindowStart, noInput, prepareLogZip, staff, writeLogFilesZip, writeReportDataZip,
} from '@lms/shared';
import type { Knex } from '@lms/db';
import { route } from '../../http/route';
import type { Caller, ClassroomRoute } from '../../http/types';
import type { Config } from '../../config';
import { schoolScopeOf, serverLogsInScope } from '../common';
import { userOf } from '../../auth/guards';
import { oldestKeptDay } from '../../logging';
import {
  countBytes,
  exportFileName,
  lastExport,
  logCounts,
  logSource,
  openLogFiles,
  recordExport,
  reportStudents,
} from './store';

/** Access-log kinds of the original (contract A.1). */
const LOG_ACCESS = { exportLog: 12, exportLogFiles: 19 } as const;

/**
 * Streams a ZIP as an attachment. Once the first byte is out the status cannot change any more, so a
 * failure half-way cuts the connection (the client sees a broken download rather than a truncated ZIP
 * that looks whole); `done` runs only after the last byte was handed to the socket.
 */
function sendZip(res: Response, filename: string, zip: Readable, done: (bytes: number) => void): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'application/zip');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  let bytes = 0;
  zip.on('data', (chunk: Buffer) => { bytes += chunk.length; });
  return new Promise((resolve) => {
    zip.on('error', (err) => {
      res.destroy(err);
      resolve();
    });
    zip.on('end', () => {
      done(bytes);
      resolve();
    });
    res.on('close', () => {
      if (!res.writableFinished) zip.destroy();
      resolve();
    });
    zip.pipe(res);
  });
}

/** A school name as a piece of a file name: letters, digits, dot, dash and underscore only. */
const safePart = (s: unknown): string =>
  (typeof s === 'string' ? s : '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60) || 'school';

/**
 * The school whose activity the caller exports, and the server's log files of the export window when the
 * caller may have them (they hold every school's sign-ins: not for one school's staff on a server of several).
 */
async function exportScope(db: Knex, config: Config, caller: Caller, now: Date) {
  const school = await schoolScopeOf(db, caller);
  const bound = { oldestDay: oldestKeptDay(now), maxBytes: config.logExportMaxBytes };
  const allowed = await serverLogsInScope(db, school);
  const files = allowed ? await openLogFiles(config.logDir, isExportedLogFile, bound) : [];
  return { school, files };
}

export const exportRoutes: ClassroomRoute[] = [
  route('GET', '/export/log', staff(), noInput,
    async ({ logger, config, db, res, caller }) => {
    const user = userOf(caller);
    const now = new Date();
    // The files of the export's window, newest days first up to LOG_EXPORT_MAX_MB.
    const { school, files } = await exportScope(db, config, caller, now);
    const zip = await prepareLogZip(logSource(db, logWindowStart(now), school), files);
    let sent: number | null = null;
    // Written after the ZIP is assembled, as the original did: this line travels in the next export.
    await sendZip(res, exportFileName('log', now), zip, (bytes) => {
      sent = bytes;
      logger.info(
        { logaccesstype: LOG_ACCESS.exportLog, userid: user.schooluserid },
        `${user.schoolusername} export log`,
      );
    });
    // Only an export that reached its last byte counts as saved; the response is already complete, so a
    // failure to record it is logged rather than turned into an error the client can no longer receive.
    if (sent !== null) {
      await recordExport(db, { schooluserid: user.schooluserid, at: now, bytes: sent })
        .catch((err: unknown) => logger.error({ err }, 'log export sent but not recorded'));
    }
  },
    {
      summary: 'Activity-log ZIP: log.ini (six-month window) and the RPI-API info/error log files of the window (at ' +
        'most LOG_EXPORT_MAX_MB)',
    }),

  route('GET', '/export/log/summary', staff(), noInput,
    async ({ config, db, caller }) => {
    const now = new Date();
    const since = logWindowStart(now);
    // The exact size of what GET /export/log would send now: the same ZIP, written to a counter.
    const { school, files } = await exportScope(db, config, caller, now);
    const counts = await logCounts(db, since, school);
    const bytes = await countBytes(await prepareLogZip(logSource(db, since, school), files));
    const lastexport = await lastExport(db, school);
    return { ...counts, since: since.toISOString(), logfiles: files.length, bytes, lastexport };
  },
    {
      summary: "What GET /export/log would hold now (learners, results, date range, ZIP bytes) and the last " +
        "completed export",
    }),

  route('GET', '/export/system-log/files', staff(), noInput,
    async ({ logger, config, db, res, caller }) => {
    const user = userOf(caller);
    const now = new Date();
    if (!(await serverLogsInScope(db, await schoolScopeOf(db, caller)))) {
      throw httpError(403, "This server holds other schools' people: its log files are not given to one school's "
        + 'staff');
    }
    const files = await openLogFiles(config.logDir, (name) => name.includes('RPI-API'), {
      oldestDay: oldestKeptDay(now),
      maxBytes: config.logExportMaxBytes,
    });
    const zip = writeLogFilesZip(files);
    await sendZip(res, exportFileName(`logfiles-${safePart(user.claims.schoolname)}`, now), zip, () =>
      logger.info(
        { logaccesstype: LOG_ACCESS.exportLogFiles, userid: user.schooluserid },
        `${user.schoolusername} export log files`,
      ),
    );
  },
    { summary: "ZIP of the server's RPI-API log files" }),

  route('GET', '/export/report-data', staff(), noInput,
    async ({ db, res, caller }) => {
    const since = logWindowStart(new Date());
    const school = await schoolScopeOf(db, caller);
    const log = logSource(db, since, school);
    const students = reportStudents(db, school);
    const zip = writeReportDataZip({
      students, studentprogress: log.progress, studentresult: log.result, studentaccess: log.access,
    });
    await sendZip(res, 'sync-data.zip', zip, () => undefined);
  },
    { summary: 'Learners, progress, results and access rows (six-month window) as syncfile.ini in a ZIP' }),
];
