import { anyUser, perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { scope, scopedCurricula } from '../../http/scope';
import {
  allGrades,
  allGradesQuery,
  createGrade,
  curriculumParams,
  deleteGrade,
  getGrade,
  gradeBody,
  gradeListBody,
  gradeParams,
  gradesOfCurriculum,
  listGrades,
  setGradeStatus,
  updateGrade,
} from './store';

// Grades belong to a curriculum: a staff account narrowed to some countries works on the grades of the
// curricula offered there (scope.curriculaOfCaller); activate/deactivate take no body (the admin UI sends its
// HTTP options object as one).
export const gradeRoutes: CentralRoute[] = [
  route('GET', '/grade/all', anyUser(), scope.curriculaOfCaller, { query: allGradesQuery },
    ({ db, scope, query }) => allGrades(db, query, scopedCurricula(scope)),
    { summary: 'unpaged grade list (query filters)' }),
  route('POST', '/grade/create', perms('create_grade'), scope.curriculaOfCaller, { body: gradeBody },
    ({ db, scope, body, caller }) => createGrade(db, body, actorOf(caller), scopedCurricula(scope)),
    { summary: 'create grade' }),
  route('DELETE', '/grade/:gradeid', perms('delete_grade'), scope.curriculaOfCaller, { params: gradeParams },
    ({ db, scope, params, caller }) => deleteGrade(db, params.gradeid, actorOf(caller), scopedCurricula(scope)),
    { summary: 'soft-delete grade (isdeleted flag)' }),
  route('PUT', '/grade/deactivate/:gradeid', perms('update_grade'), scope.curriculaOfCaller, { params: gradeParams },
    ({ db, scope, params }) => setGradeStatus(db, params.gradeid, false, scopedCurricula(scope)),
    { summary: 'set grade status inactive' }),
  route('PUT', '/grade/activate/:gradeid', perms('update_grade'), scope.curriculaOfCaller, { params: gradeParams },
    ({ db, scope, params }) => setGradeStatus(db, params.gradeid, true, scopedCurricula(scope)),
    { summary: 'set grade status active' }),
  route('GET', '/grade/:gradeid', perms('view_grade'), scope.curriculaOfCaller, { params: gradeParams },
    ({ db, scope, params }) => getGrade(db, params.gradeid, scopedCurricula(scope)),
    { summary: 'get one grade by id' }),
  route('GET', '/grade/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin', 'teacher'),
    scope.curriculaOfCaller, { params: curriculumParams },
    ({ db, scope, params }) => gradesOfCurriculum(db, params.curriculumid, scopedCurricula(scope)),
    { summary: 'grades of one curriculum (report filter feed)' }),
  route('PUT', '/grade/:gradeid', perms('update_grade'), scope.curriculaOfCaller,
    { params: gradeParams, body: gradeBody },
    ({ db, scope, params, body, caller }) =>
      updateGrade(db, params.gradeid, body, actorOf(caller), scopedCurricula(scope)),
    { summary: 'update grade' }),
  route('POST', '/grade', perms('view_grade'), scope.curriculaOfCaller, { body: gradeListBody },
    ({ db, scope, body }) => listGrades(db, body, scopedCurricula(scope)),
    { summary: 'paged list of grade (pageindex/pagesize/filter)' }),
];
