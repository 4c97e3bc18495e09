import { noInput, perms, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { actorOf, configOf, depsOf } from '../../http/context';
import { scopeOf } from '../../http/scope';
import { sendCsv } from '../../http/csv';
import {
  BASELINE_RESULT_COLUMNS, baselineResultRows, activateBaseline, activateParams, baselineCreateBody, baselineIdParams, baselineQuery, baselineSchools, baselineUpdateBody, createBaseline,
  deactivateBaseline, deleteBaseline, getBaseline, listBaselines, updateBaseline,
} from './store';

export const curriculumbaselineRoutes: CentralRoute[] = [
  route('POST', '/curriculumbaseline/create', perms('create_baseline-endline'), { body: baselineCreateBody }, ({ req, body, caller }) => createBaseline(depsOf(req).db, body, actorOf(caller)), { summary: 'create baseline/endline assessment' }),
  route('DELETE', '/curriculumbaseline/:curriculumbaselineid', perms('delete_baseline-endline'), { params: baselineIdParams }, ({ req, params, caller }) => deleteBaseline(depsOf(req).db, params.curriculumbaselineid, actorOf(caller)), { summary: 'soft-delete baseline/endline assessment (isdeleted flag)' }),
  route('PUT', '/curriculumbaseline/update/:curriculumbaselineid', perms('update_baseline-endline'), { params: baselineIdParams, body: baselineUpdateBody }, ({ req, params, body, caller }) => updateBaseline(depsOf(req).db, params.curriculumbaselineid, body, actorOf(caller)), { summary: 'update baseline/endline assessment' }),
  route('PUT', '/curriculumbaseline/activate/:curriculumbaselineid/:curriculumid', perms('update_baseline-endline'), { params: activateParams }, ({ req, params }) => activateBaseline(depsOf(req).db, params.curriculumbaselineid), { summary: 'activate assessment for a curriculum' }),
  route('PUT', '/curriculumbaseline/deactivate/:curriculumbaselineid', perms('update_baseline-endline'), { params: baselineIdParams }, ({ req, params }) => deactivateBaseline(depsOf(req).db, params.curriculumbaselineid), { summary: 'set baseline/endline assessment status inactive' }),
  route('GET', '/curriculumbaseline/all', perms('view_baseline-endline'), {}, ({ req }) => listBaselines(depsOf(req).db), { summary: 'list of baseline/endline assessments' }),
  route('GET', '/curriculumbaseline/query', perms('view_baseline-endline'), { query: baselineQuery }, ({ req, query }) => listBaselines(depsOf(req).db, query), { summary: 'assessments filtered by query (name/type)' }),
  route('GET', '/curriculumbaseline/getcurriculumbaseline/:curriculumbaselineid', perms('view_baseline-endline'), { params: baselineIdParams }, ({ req, params }) => getBaseline(depsOf(req).db, params.curriculumbaselineid), { summary: 'get one assessment' }),
  route('GET', '/curriculumbaseline/school/:curriculumbaselineid', perms('view_baseline-endline'), { params: baselineIdParams }, ({ req, params, caller }) => baselineSchools(depsOf(req).db, params.curriculumbaselineid, scopeOf(caller)), { summary: 'schools of an assessment' }),
  route('GET', '/curriculumbaseline/:curriculumbaselineid/download', perms('view_download_student'), noInput, async ({ req, res, params }) => { await sendCsv(res, 'students-results.csv', BASELINE_RESULT_COLUMNS, await baselineResultRows(depsOf(req).db, configOf(req), params.curriculumbaselineid)); }, { summary: 'CSV of learner results for an assessment (merges classroom data)' }),
];
