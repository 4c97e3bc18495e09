import { z } from 'zod';
import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope, scopedCurricula } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { sendCsv } from '../../http/csv';
import {
  BASELINE_RESULT_COLUMNS,
  baselineResultRows,
  activateBaseline,
  activateParams,
  baselineCreateBody,
  baselineIdParams,
  baselineQuery,
  baselineSchools,
  baselineUpdateBody,
  createBaseline,
  deactivateBaseline,
  deleteBaseline,
  getBaseline,
  listBaselines,
  updateBaseline,
} from './store';

// The id is read as given (any string), as this route always has; the other routes check it as a GUID.
const downloadInput = { params: z.object({ curriculumbaselineid: z.string() }) };

export const curriculumbaselineRoutes: CentralRoute[] = [
  route('POST', '/curriculumbaseline/create', perms('create_baseline-endline'), scope.curriculaOfCaller,
    { body: baselineCreateBody }, ({ db, scope, body, caller }) => createBaseline(db, scope, body, actorOf(caller)),
    { summary: 'create baseline/endline assessment' }),
  route('DELETE', '/curriculumbaseline/:curriculumbaselineid', perms('delete_baseline-endline'),
    scope.curriculaOfCaller, { params: baselineIdParams },
    ({ db, params, caller }) => deleteBaseline(db, params.curriculumbaselineid, actorOf(caller)),
    { summary: 'soft-delete baseline/endline assessment (isdeleted flag)' }),
  route('PUT', '/curriculumbaseline/update/:curriculumbaselineid', perms('update_baseline-endline'),
    scope.curriculaOfCaller, { params: baselineIdParams, body: baselineUpdateBody },
    ({ db, scope, params, body, caller }) =>
      updateBaseline(db, scope, params.curriculumbaselineid, body, actorOf(caller)),
    { summary: 'update baseline/endline assessment' }),
  route('PUT', '/curriculumbaseline/activate/:curriculumbaselineid/:curriculumid', perms('update_baseline-endline'),
    scope.curriculaOfCaller, { params: activateParams },
    ({ db, params }) => activateBaseline(db, params.curriculumbaselineid),
    { summary: 'activate assessment for a curriculum' }),
  route('PUT', '/curriculumbaseline/deactivate/:curriculumbaselineid', perms('update_baseline-endline'),
    scope.curriculaOfCaller, { params: baselineIdParams },
    ({ db, params }) => deactivateBaseline(db, params.curriculumbaselineid),
    { summary: 'set baseline/endline assessment status inactive' }),
  route('GET', '/curriculumbaseline/all', perms('view_baseline-endline'), scope.curriculaOfCaller, {},
    ({ db, scope }) => listBaselines(db, scopedCurricula(scope)), { summary: 'list of baseline/endline assessments' }),
  route('GET', '/curriculumbaseline/query', perms('view_baseline-endline'), scope.curriculaOfCaller,
    { query: baselineQuery }, ({ db, scope, query }) => listBaselines(db, scopedCurricula(scope), query),
    { summary: 'assessments filtered by query (name/type)' }),
  route('GET', '/curriculumbaseline/getcurriculumbaseline/:curriculumbaselineid', perms('view_baseline-endline'),
    scope.curriculaOfCaller, { params: baselineIdParams },
    ({ db, params }) => getBaseline(db, params.curriculumbaselineid), { summary: 'get one assessment' }),
  route('GET', '/curriculumbaseline/school/:curriculumbaselineid', perms('view_baseline-endline'),
    scope.curriculaOfCaller, { params: baselineIdParams },
    ({ db, scope, params }) => baselineSchools(db, params.curriculumbaselineid, scope),
    { summary: 'schools of an assessment' }),
  route('GET', '/curriculumbaseline/:curriculumbaselineid/download', perms('view_download_student'),
    scope.curriculaOfCaller, downloadInput,
    async ({ config, db, res, scope, params }) => {
      const rows = await baselineResultRows(db, config, params.curriculumbaselineid, scope);
      await sendCsv(res, 'students-results.csv', BASELINE_RESULT_COLUMNS, rows);
    },
    { summary: 'CSV of learner results for an assessment (merges classroom data)' }),
];
