import { z } from 'zod';
import { httpError, perms, writeStudentsZip, writeTeachersZip } from '@lms/shared';
import { route } from '../../http/route';
import { schoolInScope, scope } from '../../http/scope';
import type { CentralCtx, CentralRoute } from '../../http/types';
import { sendZip } from '../sync/push';
import { rosterProgress, schoolExists, schoolRoster, schoolTeachers } from '../sync/store';
import { curriculumDocuments, curriculumExists } from './store';

type Ctx = CentralCtx;

const schoolname = z.string().trim().min(1, 'School name is required').max(250);
const studentsInput = {
  params: z.object({ schoolname }),
  // The original read `cloud` as a raw string; only `true` widens the roster to teacher accounts.
  query: z.object({ cloud: z.string().optional() }).passthrough(),
};
const teachersInput = { params: z.object({ schoolname }) };
const documentsInput = { params: z.object({ curriculumid: z.string().uuid('"Curriculum ID" must be a valid GUID') }) };

/** A file name safe in a Content-Disposition header whatever the school is called. */
const safeName = (s: string) => s.replace(/[^A-Za-z0-9 ._-]+/g, '_');

/** The school must exist and be one of the caller's (another school's is answered as unknown). */
async function requireSchool(ctx: Ctx, name: string): Promise<void> {
  if (!schoolInScope(ctx.scope, { schoolname: name }) || !(await schoolExists(ctx.db, name)))
    throw httpError(400, 'Invalid School Name');
}

/**
 * A school's learners with their progress, for a device to carry. Password hashes stay on the server:
 * this file reaches a person's computer, and the roster the classroom signs learners in with is pushed
 * server to server (`POST /sync/cloud/:schoolname/students`).
 */
async function exportStudents(ctx: CentralCtx<typeof studentsInput>): Promise<void> {
  const { db, res, params, query } = ctx;
  await requireSchool(ctx, params.schoolname);
  const studentusers = await schoolRoster(db, params.schoolname, {
    teacherAccounts: query.cloud === 'true',
    hash: false,
  });
  if (studentusers.length === 0) throw httpError(400, 'No student available');
  const studentprogresses = await rosterProgress(
    db,
    studentusers.map((u) => u.student.studentid as string),
  );
  await sendZip(
    res,
    `students-${safeName(params.schoolname)}.zip`,
    writeStudentsZip({ studentusers, studentprogresses }),
  );
}

async function exportTeachers(ctx: CentralCtx<typeof teachersInput>): Promise<void> {
  const { db, res, params } = ctx;
  await requireSchool(ctx, params.schoolname);
  const teachers = await schoolTeachers(db, params.schoolname);
  if (teachers.length === 0) throw httpError(400, 'No teacher available');
  await sendZip(res, `teachers-${safeName(params.schoolname)}.zip`, writeTeachersZip(teachers));
}

/** A bare JSON array, without the envelope, as existing scripts read it (decision 18). */
async function exportDocuments({ db, res, params }: CentralCtx<typeof documentsInput>): Promise<void> {
  if (!(await curriculumExists(db, params.curriculumid))) throw httpError(400, 'Invalid Curriculum id');
  res.status(200).json(await curriculumDocuments(db, params.curriculumid));
}

export const exportRoutes: CentralRoute[] = [
  route('GET', '/export/:schoolname/students', perms('view_download_student'), scope.schoolsOfCaller, studentsInput,
    exportStudents, { summary: 'ZIP of a school\'s student users' }),
  route('GET', '/export/:schoolname/teachers', perms('view_teacher'), scope.schoolsOfCaller, teachersInput,
    exportTeachers, { summary: 'ZIP of a school\'s teacher users' }),
  route('GET', '/export/documents/:curriculumid', perms('view_document'), scope.curriculaOfCaller, documentsInput,
    exportDocuments, { summary: 'media file names used by a curriculum (raw body, no envelope)' }),
];
