import { anyUser, noInput, perms, publicGate, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { studentClassGuard } from '../../http/gates';
import { depsOf } from '../../http/context';
import { createStudentsHandler } from './create';
import { allStudents, allStudentsQuery, createStudentsBody, createStudentsQuery, downloadQuery, downloadStudents, migrateStudentStandardIds, migrateSubjectCurriculum } from './store';
import { sendCsv } from '../../http/csv';

export const studentRoutes: CentralRoute[] = [
  // The spec: this route relies on the class guard alone (its own guard was commented out), so the API key is accepted.
  route('GET', '/student/download-students', publicGate(), { query: downloadQuery }, async ({ req, res, query }) => { const { filename, columns, rows } = await downloadStudents(depsOf(req).db, query); await sendCsv(res, filename, columns, rows); }, { classGuard: studentClassGuard, summary: 'CSV of learner personal data (query filters)' }),
  route('GET', '/student/all', anyUser(), { query: allStudentsQuery }, ({ req, query }) => allStudents(depsOf(req).db, query), { classGuard: studentClassGuard, summary: 'unpaged learner list with identity fields (query filters)' }),
  route('POST', '/student', perms('view_student'), noInput, pending, { classGuard: studentClassGuard, summary: 'paged learner list' }),
  route('POST', '/student/create', roles('apikey', 'superadmin', 'admin'), { query: createStudentsQuery, body: createStudentsBody }, createStudentsHandler, { classGuard: studentClassGuard, summary: 'bulk-create learners (+ optional push to classroom with ?cloud)' }),
  route('DELETE', '/student/:schooluserid', perms('delete_student'), noInput, pending, { classGuard: studentClassGuard, summary: 'soft-delete a learner (by school user id; isdeleted flag)' }),
  route('GET', '/student/:studentid', perms('view_student'), noInput, pending, { classGuard: studentClassGuard, summary: 'get one learner' }),
  route('GET', '/student/stats/:studentid', perms('view_student'), noInput, pending, { classGuard: studentClassGuard, summary: 'learner progress summary' }),
  route('GET', '/student/stats/:studentid/practice', perms('view_student'), noInput, pending, { classGuard: studentClassGuard, summary: 'learner practice stats' }),
  route('GET', '/student/stats/:studentid/quiz', perms('view_student'), noInput, pending, { classGuard: studentClassGuard, summary: 'learner quiz stats' }),
  route('GET', '/student/stats/:studentid/level', perms('view_student'), noInput, pending, { classGuard: studentClassGuard, summary: 'learner level stats' }),
  route('POST', '/student/migrate-standardid', roles('superadmin'), noInput, ({ req }) => migrateStudentStandardIds(depsOf(req).db), { classGuard: studentClassGuard, summary: 'data migration: learner class ids' }),
  route('PUT', '/student/update', roles('apikey', 'superadmin', 'admin'), noInput, pending, { classGuard: studentClassGuard, summary: 'bulk-update learners' }),
  route('POST', '/student/migrate-subject-curriculum', roles('superadmin'), noInput, ({ req }) => migrateSubjectCurriculum(depsOf(req).db), { classGuard: studentClassGuard, summary: 'data migration: subject/curriculum links' }),
];
