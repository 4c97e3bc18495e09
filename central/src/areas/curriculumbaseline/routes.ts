import { z } from 'zod';
import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope, scopedCurricula } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf, configOf, depsOf } from '../../http/context';
import { sendCsv } from '../../http/csv';
import {
  BASELINE_RESULT_COLUMNS, baselineResultRows, activateBaseline, activateParams, baselineCreateBody, baselineIdParams, baselineQuery, baselineSchools, baselineUpdateBody, createBaseline,
  deactivateBaseline, deleteBaseline, getBaseline, listBaselines, updateBaseline,
} from './store';

// The id is read as given (any string), as this route always has; the other routes check it as a GUID.
const downloadInput = { params: z.object({ curriculumbaselineid: z.string() }) };

export const curriculumbaselineRoutes: CentralRoute[] = [
  route('POST', '/curriculumbaseline/create', perms('create_baseline-endline'), scope.curriculaOfCaller, { body: baselineCreateBody }, ({ req, scope, body, caller }) => createBaseline(depsOf(req).db, scope, body, actorOf(caller)), { summary: 'create baseline/endline assessment' }),
  route('DELETE', '/curriculumbaseline/:curriculumbaselineid', perms('delete_baseline-endline'), scope.curriculaOfCaller, { params: baselineIdParams }, ({ req, params, caller }) => deleteBaseline(depsOf(req).db, params.curriculumbaselineid, actorOf(caller)), { summary: 'soft-delete baseline/endline assessment (isdeleted flag)' }),
  route('PUT', '/curriculumbaseline/update/:curriculumbaselineid', perms('update_baseline-endline'), scope.curriculaOfCaller, { params: baselineIdParams, body: baselineUpdateBody }, ({ req, scope, params, body, caller }) => updateBaseline(depsOf(req).db, scope, params.curriculumbaselineid, body, actorOf(caller)), { summary: 'update baseline/endline assessment' }),
  route('PUT', '/curriculumbaseline/activate/:curriculumbaselineid/:curriculumid', perms('update_baseline-endline'), scope.curriculaOfCaller, { params: activateParams }, ({ req, params }) => activateBaseline(depsOf(req).db, params.curriculumbaselineid), { summary: 'activate assessment for a curriculum' }),
  route('PUT', '/curriculumbaseline/deactivate/:curriculumbaselineid', perms('update_baseline-endline'), scope.curriculaOfCaller, { params: baselineIdParams }, ({ req, params }) => deactivateBaseline(depsOf(req).db, params.curriculumbaselineid), { summary: 'set baseline/endline assessment status inactive' }),
  route('GET', '/curriculumbaseline/all', perms('view_baseline-endline'), scope.curriculaOfCaller, {}, ({ req, scope }) => listBaselines(depsOf(req).db, scopedCurricula(scope)), { summary: 'list of baseline/endline assessments' }),
  route('GET', '/curriculumbaseline/query', perms('view_baseline-endline'), scope.curriculaOfCaller, { query: baselineQuery }, ({ req, scope, query }) => listBaselines(depsOf(req).db, scopedCurricula(scope), query), { summary: 'assessments filtered by query (name/type)' }),
  route('GET', '/curriculumbaseline/getcurriculumbaseline/:curriculumbaselineid', perms('view_baseline-endline'), scope.curriculaOfCaller, { params: baselineIdParams }, ({ req, params }) => getBaseline(depsOf(req).db, params.curriculumbaselineid), { summary: 'get one assessment' }),
  route('GET', '/curriculumbaseline/school/:curriculumbaselineid', perms('view_baseline-endline'), scope.curriculaOfCaller, { params: baselineIdParams }, ({ req, scope, params }) => baselineSchools(depsOf(req).db, params.curriculumbaselineid, scope), { summary: 'schools of an assessment' }),
  route('GET', '/curriculumbaseline/:curriculumbaselineid/download', perms('view_download_student'), scope.curriculaOfCaller, downloadInput, async ({ req, res, scope, params }) => { await sendCsv(res, 'students-results.csv', BASELINE_RESULT_COLUMNS, await baselineResultRows(depsOf(req).db, configOf(req), params.curriculumbaselineid, scope)); }, { summary: 'CSV of learner results for an assessment (merges classroom data)' }),
];
