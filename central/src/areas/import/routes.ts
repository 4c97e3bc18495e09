import type { Request } from 'express';
import busboy from 'busboy';
import { z } from 'zod';
import { httpError, perms, writeTeachersZip } from '@lms/shared';
import { route } from '../../http/route';
import { schoolInScope, scope } from '../../http/scope';
import { hashSchoolUserPassword } from '../../auth/passwords';
import type { CentralCtx, CentralRoute } from '../../http/types';
import { pushPackage } from '../sync/push';
import { schoolExists } from '../sync/store';
import { parseCsv } from './csv';
import { existingUsernames, insertTeachers, type TeacherLine } from './store';

// A teacher list is a few lines per teacher; a megabyte is thousands of teachers.
const MAX_CSV_BYTES = 1024 * 1024;
const INVALID = 'Invalid file';

/** The bytes of the multipart part `importfile`; anything else in the request is drained and ignored. */
function readImportFile(req: Request): Promise<Buffer> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    return Promise.reject(httpError(400, `${INVALID} (expected multipart/form-data with an "importfile" part)`));
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: MAX_CSV_BYTES, fields: 20, parts: 30 } });
    } catch {
      reject(httpError(400, `${INVALID} (malformed multipart request)`));
      return;
    }
    let file: Promise<Buffer> | undefined;
    parser.on('file', (name, stream) => {
      if (name !== 'importfile' || file) {
        stream.resume();
        return;
      }
      file = new Promise((res, rej) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('limit', () => rej(httpError(413, `${INVALID} (larger than ${MAX_CSV_BYTES} bytes)`)));
        stream.on('end', () => res(Buffer.concat(chunks)));
        stream.on('error', rej);
      });
      file.catch(() => undefined);
    });
    parser.on('error', () => reject(httpError(400, `${INVALID} (malformed multipart request)`)));
    parser.on('close', () => {
      if (!file) reject(httpError(400, `${INVALID} (no "importfile" part)`));
      else file.then(resolve, reject);
    });
    req.pipe(parser);
  });
}

/**
 * The list's lines: a header naming `teacherusername` and
 * `teacheruserpassword`, then one teacher per line, every cell filled.
 */
function teacherLines(bytes: Buffer): TeacherLine[] {
  let rows: string[][];
  try {
    rows = parseCsv(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw httpError(400, INVALID);
  }
  const header = (rows.shift() ?? []).map((h) => h.trim().toLowerCase());
  const u = header.indexOf('teacherusername');
  const p = header.indexOf('teacheruserpassword');
  if (u < 0 || p < 0 || rows.length === 0) throw httpError(400, INVALID);
  return rows.map((r) => {
    const teacherusername = (r[u] ?? '').trim();
    const teacheruserpassword = (r[p] ?? '').trim();
    if (!teacherusername || !teacheruserpassword || teacherusername.length > 45) throw httpError(400, INVALID);
    return { teacherusername, teacheruserpassword };
  });
}

const teachersInput = {
  params: z.object({ schoolname: z.string().trim().min(1, 'School name is required').max(250) }),
  // As on POST /teacher/create: `cloud=true` also sends the new teachers to the classroom server.
  query: z.object({ cloud: z.string().optional() }).passthrough(),
};

async function importTeachers(ctx: CentralCtx<typeof teachersInput>): Promise<boolean> {
  const { config, db, req, params, query, caller, scope } = ctx;
  // The body is read first so that a refused request never leaves a half-read upload on the socket.
  const bytes = await readImportFile(req);
  // Another school's name is answered as an unknown school.
  if (!schoolInScope(scope, { schoolname: params.schoolname }) || !(await schoolExists(db, params.schoolname)))
    throw httpError(400, 'Invalid School Name');
  const lines = teacherLines(bytes);

  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const l of lines) (seen.has(l.teacherusername) ? repeated : seen).add(l.teacherusername);
  for (const name of await existingUsernames(db, [...seen])) repeated.add(name);
  if (repeated.size) throw httpError(400, `Duplicate teacher found : ${[...repeated].join(',')}`);

  const teachers = [];
  for (const l of lines)
    teachers.push({
      schoolusername: l.teacherusername,
      schooluserpasswordhash: await hashSchoolUserPassword(l.teacheruserpassword, config.schoolUserPasswordFormat),
    });
  // The push happens before the commit: a classroom server that refuses them leaves central without them
  // too, so the same list can simply be imported again.
  const push =
    query.cloud === 'true'
      ? (rows: Array<Record<string, unknown>>) =>
          pushPackage(ctx, 'teachers', writeTeachersZip(rows)).then(() => undefined)
      : undefined;
  await insertTeachers(db, params.schoolname, teachers, caller.kind === 'staff' ? caller.lmsuserid : null, push);
  return true;
}

export const importRoutes: CentralRoute[] = [
  route('PUT', '/import/:schoolname/teachers', perms('create_import', 'update_import'), scope.schoolsOfCaller,
    teachersInput, importTeachers, { summary: 'multipart import of teachers for a school' }),
];
