import { anyUser, perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { scope, scopedCurricula } from '../../http/scope';
import {
  allGrades, allGradesQuery, createGrade, curriculumParams, deleteGrade, getGrade, gradeBody, gradeListBody, gradeParams, gradesOfCurriculum, listGrades,
  setGradeStatus, updateGrade,
} from './store';

// Grades belong to a curriculum: a staff account narrowed to some countries works on the grades of the
// curricula offered there (scope.curriculaOfCaller); activate/deactivate take no body (the admin UI sends its
// HTTP options object as one).
export const gradeRoutes: CentralRoute[] = [
  route('GET', '/grade/all', anyUser(), scope.curriculaOfCaller, { query: allGradesQuery }, ({ req, scope, query }) => allGrades(depsOf(req).db, query, scopedCurricula(scope)), { summary: 'unpaged grade list (query filters)' }),
  route('POST', '/grade/create', perms('create_grade'), scope.curriculaOfCaller, { body: gradeBody }, ({ req, scope, body, caller }) => createGrade(depsOf(req).db, body, actorOf(caller), scopedCurricula(scope)), { summary: 'create grade' }),
  route('DELETE', '/grade/:gradeid', perms('delete_grade'), scope.curriculaOfCaller, { params: gradeParams }, ({ req, scope, params, caller }) => deleteGrade(depsOf(req).db, params.gradeid, actorOf(caller), scopedCurricula(scope)), { summary: 'soft-delete grade (isdeleted flag)' }),
  route('PUT', '/grade/deactivate/:gradeid', perms('update_grade'), scope.curriculaOfCaller, { params: gradeParams }, ({ req, scope, params }) => setGradeStatus(depsOf(req).db, params.gradeid, false, scopedCurricula(scope)), { summary: 'set grade status inactive' }),
  route('PUT', '/grade/activate/:gradeid', perms('update_grade'), scope.curriculaOfCaller, { params: gradeParams }, ({ req, scope, params }) => setGradeStatus(depsOf(req).db, params.gradeid, true, scopedCurricula(scope)), { summary: 'set grade status active' }),
  route('GET', '/grade/:gradeid', perms('view_grade'), scope.curriculaOfCaller, { params: gradeParams }, ({ req, scope, params }) => getGrade(depsOf(req).db, params.gradeid, scopedCurricula(scope)), { summary: 'get one grade by id' }),
  route('GET', '/grade/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.curriculaOfCaller, { params: curriculumParams }, ({ req, scope, params }) => gradesOfCurriculum(depsOf(req).db, params.curriculumid, scopedCurricula(scope)), { summary: 'grades of one curriculum (report filter feed)' }),
  route('PUT', '/grade/:gradeid', perms('update_grade'), scope.curriculaOfCaller, { params: gradeParams, body: gradeBody }, ({ req, scope, params, body, caller }) => updateGrade(depsOf(req).db, params.gradeid, body, actorOf(caller), scopedCurricula(scope)), { summary: 'update grade' }),
  route('POST', '/grade', perms('view_grade'), scope.curriculaOfCaller, { body: gradeListBody }, ({ req, scope, body }) => listGrades(depsOf(req).db, body, scopedCurricula(scope)), { summary: 'paged list of grade (pageindex/pagesize/filter)' }),
];
