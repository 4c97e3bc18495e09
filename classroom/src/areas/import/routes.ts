import {
  CONTENT_KEYS,
  HttpError,
  ZipError,
  httpError,
  metricsOf,
  noInput,
  parseContentPackage,
  parseStudentsPackage,
  parseTeachersPackage,
  readPackageJson,
  syncKey,
  syncKeyOrOfflineStaff,
  type ZipLimits,
} from '@lms/shared';
import { route } from '../../http/route';
import { BatchWriteError, analyzeSmallTables, databaseWords } from '@lms/db';
import type { ClassroomCtx, ClassroomRoute } from '../../http/types';
import { applyContent, applyStudents, applyTeachers } from './store';
import { receiveUpload } from './upload';

/** Access-log kinds of the original (contract A.1), kept so that existing log readers still classify lines. */
const LOG_ACCESS = { students: 13, teachers: 14, content: 15 } as const;

const INVALID = 'Invalid file';

/** What the log keeps of a refused write: the table and batch size when known, and the database's words. */
function failureOf(err: unknown): Record<string, unknown> {
  if (err instanceof BatchWriteError)
    return { table: err.table, rows: err.rows, columns: err.columns, code: err.code, message: err.message };
  const code = (err as { code?: unknown } | undefined)?.code;
  return { code: typeof code === 'string' ? code : undefined, message: databaseWords(err) };
}

/** A package is one JSON entry parsed in memory, so its size is capped well below a classroom box's RAM. */
const PACKAGE_LIMITS: Partial<ZipLimits> = {
  maxEntries: 50,
  maxEntryBytes: 256 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
};

/**
 * Receives the upload, reads the package's first entry and applies it. A bad ZIP or document is the
 * uploader's fault (400, or 413 past a size limit) and a failed write rolls back and answers 400
 * "Invalid file", as the original did; the temporary file is always removed.
 */
async function importPackage<T>(
  ctx: ClassroomCtx,
  kind: keyof typeof LOG_ACCESS,
  parse: (json: unknown) => T,
  apply: (pkg: T) => Promise<unknown>,
): Promise<true> {
  const { req, caller, config, logger } = ctx;
  const counted = metricsOf(req)?.startImport(kind);
  let upload: Awaited<ReturnType<typeof receiveUpload>> | undefined;
  try {
    upload = await receiveUpload(req, config.maxUploadBytes);
    let pkg: T;
    try {
      const { json } = await readPackageJson({ path: upload.path }, PACKAGE_LIMITS);
      pkg = parse(json);
    } catch (err) {
      if (err instanceof ZipError) throw httpError(err.status, `${INVALID} (${err.message})`);
      throw err;
    }
    let written: unknown;
    try {
      written = await apply(pkg);
    } catch (err) {
      if (err instanceof HttpError) throw err;
      // A constraint the payload breaks (an unknown curriculum, a learner left pointing at removed content):
      // the uploader's problem, but the database's words stay in our log.
      // Never the error itself: a failed statement's text (hundreds of kB for a batch) would be logged whole.
      logger.warn({ failure: failureOf(err) }, `import ${kind} refused`);
      throw httpError(400, INVALID);
    }
    const who = caller.kind === 'user' ? caller.schoolusername : 'server';
    logger.info(
      { logaccesstype: LOG_ACCESS[kind], userid: caller.kind === 'user' ? caller.schooluserid : 'server' },
      `${who} import ${kind}`,
    );
    counted?.finished(rowsIn(written));
    return true;
  } finally {
    // Anything but the success above ends the import as failed.
    counted?.failed();
    upload?.dispose();
  }
}

/** Rows an apply function reports: a count, or counts per table. */
function rowsIn(written: unknown): number {
  if (typeof written === 'number') return written;
  if (written && typeof written === 'object')
    return Object.values(written).reduce<number>((n, v) => n + (typeof v === 'number' ? v : 0), 0);
  return 0;
}

/**
 * The package's tables analysed once it is applied (PostgreSQL), so that the planner sees the curriculum it
 * reports on: a small one never reaches autovacuum's thresholds. The package is in whatever happens here.
 */
async function applyContentAndAnalyze(ctx: ClassroomCtx, pkg: Parameters<typeof applyContent>[1]) {
  const written = await applyContent(ctx.db, pkg);
  await analyzeSmallTables(ctx.db, { tables: Object.values(CONTENT_KEYS) }).catch((err: unknown) =>
    ctx.logger.warn({ failure: failureOf(err) }, 'content tables not analysed after the import; the next one does'));
  return written;
}

export const importRoutes: ClassroomRoute[] = [
  route('PUT', '/import/students', syncKey(), noInput, (ctx) =>
    importPackage(ctx, 'students', parseStudentsPackage, (pkg) => applyStudents(ctx.db, pkg)),
  { summary: 'Learner roster from the central API (multipart importfile: ZIP with students.ini)' }),

  route('PUT', '/import/teachers', syncKey(), noInput, (ctx) =>
    importPackage(ctx, 'teachers', parseTeachersPackage, (rows) => applyTeachers(ctx.db, rows)),
  { summary: 'Teacher roster from the central API (multipart importfile: ZIP with teachers.ini)' }),

  route('PUT', '/import/master', syncKeyOrOfflineStaff(), noInput,
    (ctx) =>
    importPackage(ctx, 'content', parseContentPackage, (pkg) => applyContentAndAnalyze(ctx, pkg)),
    {
      summary: 'Curriculum package (multipart importfile: ZIP with syncfile.ini), applied all-or-nothing; staff ' +
        'tokens only while offline',
    }),
];
