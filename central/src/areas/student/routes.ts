import { anyUser, perms, publicGate, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { studentClassGuard } from '../../http/gates';
import { actorOf } from '../../http/context';
import { sendCsv } from '../../http/csv';
import { dryrunQuery } from '../../http/batch';
import { scope } from '../../http/scope';
import { createStudentsHandler, createStudentsQuery } from './create';
import { updateStudentsHandler } from './update';
import {
  downloadQuery,
  downloadStudents,
  getStudent,
  listStudents,
  schooluserParams,
  studentAttempts,
  studentListBody,
  studentParams,
  studentStats,
} from './read';
import {
  allStudents,
  allStudentsQuery,
  deleteStudent,
  migrateStudentStandardIds,
  migrateSubjectCurriculum,
} from './store';

// 500 learner rows of any script are far above the 1 MB every other route reads.
const BULK_LIMIT = '5mb';

// Every route answers only within the caller's schools/countries (a learner elsewhere is refused as an
// unknown one is). Teachers never reach these routes (the class guard), so learner identities stay
// with the roles that hold view_student (the spec's rule 8).
export const studentRoutes: CentralRoute[] = [
  // The spec: this route relies on the class guard alone (its own guard was commented out), so the API key is accepted.
  route('GET', '/student/download-students', publicGate(), scope.schoolsOfCaller, { query: downloadQuery },
    async ({ db, res, scope, query }) => {
    const { filename, columns, rows } = await downloadStudents(db, scope, query);
    await sendCsv(res, filename, columns, rows);
  },
    { classGuard: studentClassGuard, summary: 'CSV of learner personal data (query filters)' }),
  route('GET', '/student/all', anyUser(), scope.schoolsOfCaller, { query: allStudentsQuery },
    ({ db, scope, query }) => allStudents(db, scope, query),
    { classGuard: studentClassGuard, summary: 'unpaged learner list with identity fields (query filters)' }),
  route('POST', '/student', perms('view_student'), scope.schoolsOfCaller, { body: studentListBody },
    ({ config, db, scope, body }) => listStudents(db, config, scope, body),
    { classGuard: studentClassGuard, summary: 'paged learner list' }),
  // Bodies of the two bulk routes are checked by their handlers: a dry run answers every problem with 200.
  route('POST', '/student/create', roles('apikey', 'superadmin', 'admin'), scope.schoolsOfCaller,
    { query: createStudentsQuery }, createStudentsHandler,
    {
      classGuard: studentClassGuard,
      bodyLimit: BULK_LIMIT,
      summary: 'bulk-create learners (+ optional push to classroom with ?cloud; ?dryrun=true only checks)',
    }),
  route('DELETE', '/student/:schooluserid', perms('delete_student'), scope.schoolsOfCaller,
    { params: schooluserParams },
    ({ db, scope, caller, params }) => deleteStudent(db, scope, params.schooluserid, actorOf(caller)),
    { classGuard: studentClassGuard, summary: 'soft-delete a learner (by school user id; isdeleted flag)' }),
  route('GET', '/student/:studentid', perms('view_student'), scope.schoolsOfCaller, { params: studentParams },
    ({ config, db, scope, params }) => getStudent(db, config, scope, params.studentid),
    { classGuard: studentClassGuard, summary: 'get one learner' }),
  route('GET', '/student/stats/:studentid', perms('view_student'), scope.schoolsOfCaller, { params: studentParams },
    ({ db, scope, params }) => studentStats(db, scope, params.studentid),
    { classGuard: studentClassGuard, summary: 'learner progress summary' }),
  route('GET', '/student/stats/:studentid/practice', perms('view_student'), scope.schoolsOfCaller,
    { params: studentParams }, ({ db, scope, params }) => studentAttempts(db, scope, params.studentid, 'practice'),
    { classGuard: studentClassGuard, summary: 'learner practice stats' }),
  route('GET', '/student/stats/:studentid/quiz', perms('view_student'), scope.schoolsOfCaller,
    { params: studentParams }, ({ db, scope, params }) => studentAttempts(db, scope, params.studentid, 'quiz'),
    { classGuard: studentClassGuard, summary: 'learner quiz stats' }),
  route('GET', '/student/stats/:studentid/level', perms('view_student'), scope.schoolsOfCaller,
    { params: studentParams }, ({ db, scope, params }) => studentAttempts(db, scope, params.studentid, 'level'),
    { classGuard: studentClassGuard, summary: 'learner level stats' }),
  route('POST', '/student/migrate-standardid', roles('superadmin'), scope.wholeOrganisation, {},
    ({ db }) => migrateStudentStandardIds(db),
    { classGuard: studentClassGuard, summary: 'data migration: learner class ids' }),
  route('PUT', '/student/update', roles('apikey', 'superadmin', 'admin'), scope.schoolsOfCaller, { query: dryrunQuery },
    updateStudentsHandler,
    {
      classGuard: studentClassGuard,
      bodyLimit: BULK_LIMIT,
      summary: 'bulk-update learners from the learner CSV (?dryrun=true only checks)',
    }),
  route('POST', '/student/migrate-subject-curriculum', roles('superadmin'), scope.wholeOrganisation, {},
    ({ db }) => migrateSubjectCurriculum(db),
    { classGuard: studentClassGuard, summary: 'data migration: subject/curriculum links' }),
];
