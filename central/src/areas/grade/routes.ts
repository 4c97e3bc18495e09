import { anyUser, perms, roles, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { scopedCurriculumIds } from '../../http/scope';
import {
  allGrades, allGradesQuery, createGrade, curriculumParams, deleteGrade, getGrade, gradeBody, gradeListBody, gradeParams, gradesOfCurriculum, listGrades,
  setGradeStatus, updateGrade,
} from './store';

// Grades belong to a curriculum: a staff account narrowed to some countries works on the grades of the
// curricula offered there (scopedCurriculumIds); activate/deactivate take no body (the admin UI sends its
// HTTP options object as one).
export const gradeRoutes: CentralRoute[] = [
  route('GET', '/grade/all', anyUser(), { query: allGradesQuery }, ({ req, query, caller }) => allGrades(depsOf(req).db, query, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'unpaged grade list (query filters)' }),
  route('POST', '/grade/create', perms('create_grade'), { body: gradeBody }, ({ req, body, caller }) => createGrade(depsOf(req).db, body, actorOf(caller), scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'create grade' }),
  route('DELETE', '/grade/:gradeid', perms('delete_grade'), { params: gradeParams }, ({ req, params, caller }) => deleteGrade(depsOf(req).db, params.gradeid, actorOf(caller), scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'soft-delete grade (isdeleted flag)' }),
  route('PUT', '/grade/deactivate/:gradeid', perms('update_grade'), { params: gradeParams }, ({ req, params, caller }) => setGradeStatus(depsOf(req).db, params.gradeid, false, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'set grade status inactive' }),
  route('PUT', '/grade/activate/:gradeid', perms('update_grade'), { params: gradeParams }, ({ req, params, caller }) => setGradeStatus(depsOf(req).db, params.gradeid, true, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'set grade status active' }),
  route('GET', '/grade/:gradeid', perms('view_grade'), { params: gradeParams }, ({ req, params, caller }) => getGrade(depsOf(req).db, params.gradeid, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'get one grade by id' }),
  route('GET', '/grade/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin', 'teacher'), { params: curriculumParams }, ({ req, params }) => gradesOfCurriculum(depsOf(req).db, params.curriculumid), { summary: 'grades of one curriculum (report filter feed)' }),
  route('PUT', '/grade/:gradeid', perms('update_grade'), { params: gradeParams, body: gradeBody }, ({ req, params, body, caller }) => updateGrade(depsOf(req).db, params.gradeid, body, actorOf(caller), scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'update grade' }),
  route('POST', '/grade', perms('view_grade'), { body: gradeListBody }, ({ req, body, caller }) => listGrades(depsOf(req).db, body, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'paged list of grade (pageindex/pagesize/filter)' }),
];
