import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { configOf, depsOf } from '../../http/context';
import { sendCsv } from '../../http/csv';
import { BASELINE_RESULT_COLUMNS, baselineResultRows } from './store';

export const curriculumbaselineRoutes: CentralRoute[] = [
  route('POST', '/curriculumbaseline/create', perms('create_baseline-endline'), noInput, pending, { summary: 'create baseline/endline assessment' }),
  route('DELETE', '/curriculumbaseline/:curriculumbaselineid', perms('delete_baseline-endline'), noInput, pending, { summary: 'soft-delete baseline/endline assessment (isdeleted flag)' }),
  route('PUT', '/curriculumbaseline/update/:curriculumbaselineid', perms('update_baseline-endline'), noInput, pending, { summary: 'update baseline/endline assessment' }),
  route('PUT', '/curriculumbaseline/activate/:curriculumbaselineid/:curriculumid', perms('update_baseline-endline'), noInput, pending, { summary: 'activate assessment for a curriculum' }),
  route('PUT', '/curriculumbaseline/deactivate/:curriculumbaselineid', perms('update_baseline-endline'), noInput, pending, { summary: 'set baseline/endline assessment status inactive' }),
  route('GET', '/curriculumbaseline/all', perms('view_baseline-endline'), noInput, pending, { summary: 'list of baseline/endline assessments' }),
  route('GET', '/curriculumbaseline/query', perms('view_baseline-endline'), noInput, pending, { summary: 'assessments filtered by query (name/type)' }),
  route('GET', '/curriculumbaseline/getcurriculumbaseline/:curriculumbaselineid', perms('view_baseline-endline'), noInput, pending, { summary: 'get one assessment' }),
  route('GET', '/curriculumbaseline/school/:curriculumbaselineid', perms('view_baseline-endline'), noInput, pending, { summary: 'schools of an assessment' }),
  route('GET', '/curriculumbaseline/:curriculumbaselineid/download', perms('view_download_student'), noInput, async ({ req, res, params }) => { await sendCsv(res, 'students-results.csv', BASELINE_RESULT_COLUMNS, await baselineResultRows(depsOf(req).db, configOf(req), params.curriculumbaselineid)); }, { summary: 'CSV of learner results for an assessment (merges classroom data)' }),
];
