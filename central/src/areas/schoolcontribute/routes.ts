import { anyUser, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { callerOffset } from '../../http/clock';
import { sendCsv } from '../../http/csv';
import { scopeOf } from '../../http/scope';
import {
  allDashboard, amountsBody, createBody, createRecord, dashboardQuery, deleteRecord, deleteSchoolRecords, filteredDashboard, getRecord, listRecords, newestRecords,
  recordListBody, recordParams, renameBody, renameRecords, REPORT_COLUMNS, reportBody, reportRows, schoolDashboard, schoolParams, schoolRecords, updateAmounts,
} from './store';

export const schoolcontributeRoutes: CentralRoute[] = [
  route('POST', '/school-contribute/create', anyUser(), { body: createBody }, ({ req, caller, body }) => createRecord(depsOf(req).db, scopeOf(caller), callerOffset(req), body, actorOf(caller)), { summary: 'create a school fee-contribution record' }),
  route('POST', '/school-contribute/getallschoolcontribute/:schoolid', anyUser(), { params: schoolParams, body: recordListBody }, ({ req, caller, params, body }) => listRecords(depsOf(req).db, scopeOf(caller), params.schoolid, body), { summary: 'paged contribution records of one school' }),
  route('PUT', '/school-contribute/updateschoolname/:schoolid', anyUser(), { params: schoolParams, body: renameBody }, ({ req, caller, params, body }) => renameRecords(depsOf(req).db, scopeOf(caller), params.schoolid, body, actorOf(caller)), { summary: 'update contribution record (by school)' }),
  route('PUT', '/school-contribute/updateschooldashboard/:schoolcontributeid', anyUser(), { params: recordParams, body: amountsBody }, ({ req, caller, params, body }) => updateAmounts(depsOf(req).db, scopeOf(caller), params.schoolcontributeid, body, actorOf(caller)), { summary: 'update one contribution record (expected/actual)' }),
  route('DELETE', '/school-contribute/deleteschoolcontribute/:schoolid', anyUser(), { params: schoolParams }, ({ req, caller, params }) => deleteSchoolRecords(depsOf(req).db, scopeOf(caller), params.schoolid, actorOf(caller)), { summary: 'soft-delete contribution records of a school' }),
  route('DELETE', '/school-contribute/deleteschoolcontributeid/:schoolcontributeid', anyUser(), { params: recordParams }, ({ req, caller, params }) => deleteRecord(depsOf(req).db, scopeOf(caller), params.schoolcontributeid, actorOf(caller)), { summary: 'soft-delete one contribution record' }),
  route('GET', '/school-contribute/getschooldashboard/schoolcontributeid/:schoolcontributeid', anyUser(), { params: recordParams }, ({ req, caller, params }) => getRecord(depsOf(req).db, scopeOf(caller), params.schoolcontributeid), { summary: 'get one contribution record' }),
  route('GET', '/school-contribute/getschooldashboardid/:schoolid', anyUser(), { params: schoolParams }, ({ req, caller, params }) => schoolDashboard(depsOf(req).db, scopeOf(caller), callerOffset(req), params.schoolid), { summary: 'contribution dashboard of one school' }),
  route('GET', '/school-contribute/getallschooldashboard', anyUser(), {}, ({ req, caller }) => allDashboard(depsOf(req).db, scopeOf(caller)), { summary: 'contribution dashboard of all schools' }),
  route('GET', '/school-contribute/getschoolcontribute/:schoolid', anyUser(), { params: schoolParams }, ({ req, caller, params }) => schoolRecords(depsOf(req).db, scopeOf(caller), params.schoolid), { summary: 'contribution summary of one school' }),
  // Decision 18: a bare array, as the original answers (scripts written against it keep working).
  route('GET', '/school-contribute/getallschoolcontribute', anyUser(), {}, async ({ req, res, caller }) => { res.json(await newestRecords(depsOf(req).db, scopeOf(caller))); }, { summary: 'all contribution rows (raw array, no envelope)' }),
  route('GET', '/school-contribute/all', anyUser(), { query: dashboardQuery }, ({ req, caller, query }) => filteredDashboard(depsOf(req).db, scopeOf(caller), callerOffset(req), query), { summary: 'contribution dashboard filtered by query countryid/schoolname/date' }),
  route('POST', '/school-contribute/report/download', anyUser(), { body: reportBody }, async ({ req, res, caller, body }) => {
    await sendCsv(res, 'report-schoolcontribute.csv', REPORT_COLUMNS, await reportRows(depsOf(req).db, scopeOf(caller), callerOffset(req), body.date));
  }, { summary: 'CSV download of contribution report (query date)' }),
];
