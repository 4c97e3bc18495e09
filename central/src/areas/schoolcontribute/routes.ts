import { anyUser } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { callerOffset } from '../../http/clock';
import { sendCsv } from '../../http/csv';
import { scope } from '../../http/scope';
import {
  allDashboard, amountsBody, createBody, createRecord, dashboardQuery, deleteRecord, deleteSchoolRecords, filteredDashboard, getRecord, listRecords, newestRecords,
  recordListBody, recordParams, renameBody, renameRecords, REPORT_COLUMNS, reportBody, reportRows, schoolDashboard, schoolParams, schoolRecords, updateAmounts,
} from './store';

export const schoolcontributeRoutes: CentralRoute[] = [
  route('POST', '/school-contribute/create', anyUser(), scope.schoolsOfCaller, { body: createBody }, ({ req, scope, caller, body }) => createRecord(depsOf(req).db, scope, callerOffset(req), body, actorOf(caller)), { summary: 'create a school fee-contribution record' }),
  route('POST', '/school-contribute/getallschoolcontribute/:schoolid', anyUser(), scope.schoolsOfCaller, { params: schoolParams, body: recordListBody }, ({ req, scope, params, body }) => listRecords(depsOf(req).db, scope, params.schoolid, body), { summary: 'paged contribution records of one school' }),
  route('PUT', '/school-contribute/updateschoolname/:schoolid', anyUser(), scope.schoolsOfCaller, { params: schoolParams, body: renameBody }, ({ req, scope, caller, params, body }) => renameRecords(depsOf(req).db, scope, params.schoolid, body, actorOf(caller)), { summary: 'update contribution record (by school)' }),
  route('PUT', '/school-contribute/updateschooldashboard/:schoolcontributeid', anyUser(), scope.schoolsOfCaller, { params: recordParams, body: amountsBody }, ({ req, scope, caller, params, body }) => updateAmounts(depsOf(req).db, scope, params.schoolcontributeid, body, actorOf(caller)), { summary: 'update one contribution record (expected/actual)' }),
  route('DELETE', '/school-contribute/deleteschoolcontribute/:schoolid', anyUser(), scope.schoolsOfCaller, { params: schoolParams }, ({ req, scope, caller, params }) => deleteSchoolRecords(depsOf(req).db, scope, params.schoolid, actorOf(caller)), { summary: 'soft-delete contribution records of a school' }),
  route('DELETE', '/school-contribute/deleteschoolcontributeid/:schoolcontributeid', anyUser(), scope.schoolsOfCaller, { params: recordParams }, ({ req, scope, caller, params }) => deleteRecord(depsOf(req).db, scope, params.schoolcontributeid, actorOf(caller)), { summary: 'soft-delete one contribution record' }),
  route('GET', '/school-contribute/getschooldashboard/schoolcontributeid/:schoolcontributeid', anyUser(), scope.schoolsOfCaller, { params: recordParams }, ({ req, scope, params }) => getRecord(depsOf(req).db, scope, params.schoolcontributeid), { summary: 'get one contribution record' }),
  route('GET', '/school-contribute/getschooldashboardid/:schoolid', anyUser(), scope.schoolsOfCaller, { params: schoolParams }, ({ req, scope, params }) => schoolDashboard(depsOf(req).db, scope, callerOffset(req), params.schoolid), { summary: 'contribution dashboard of one school' }),
  route('GET', '/school-contribute/getallschooldashboard', anyUser(), scope.schoolsOfCaller, {}, ({ req, scope }) => allDashboard(depsOf(req).db, scope), { summary: 'contribution dashboard of all schools' }),
  route('GET', '/school-contribute/getschoolcontribute/:schoolid', anyUser(), scope.schoolsOfCaller, { params: schoolParams }, ({ req, scope, params }) => schoolRecords(depsOf(req).db, scope, params.schoolid), { summary: 'contribution summary of one school' }),
  // Decision 18: a bare array, as the original answers (scripts written against it keep working).
  route('GET', '/school-contribute/getallschoolcontribute', anyUser(), scope.schoolsOfCaller, {}, async ({ req, scope, res }) => { res.json(await newestRecords(depsOf(req).db, scope)); }, { summary: 'all contribution rows (raw array, no envelope)' }),
  route('GET', '/school-contribute/all', anyUser(), scope.schoolsOfCaller, { query: dashboardQuery }, ({ req, scope, query }) => filteredDashboard(depsOf(req).db, scope, callerOffset(req), query), { summary: 'contribution dashboard filtered by query countryid/schoolname/date' }),
  route('POST', '/school-contribute/report/download', anyUser(), scope.schoolsOfCaller, { body: reportBody }, async ({ req, res, scope, body }) => {
    await sendCsv(res, 'report-schoolcontribute.csv', REPORT_COLUMNS, await reportRows(depsOf(req).db, scope, callerOffset(req), body.date));
  }, { summary: 'CSV download of contribution report (query date)' }),
];
