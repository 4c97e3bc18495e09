import { anyUser } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { callerOffset } from '../../http/clock';
import { sendCsv } from '../../http/csv';
import { scope } from '../../http/scope';
import {
  allDashboard, amountsBody, createBody, createRecord, dashboardQuery, deleteRecord, deleteSchoolRecords, filteredDashboard, getRecord, listRecords, newestRecords,
  recordListBody, recordParams, renameBody, renameRecords, REPORT_COLUMNS, reportBody, reportRows, schoolDashboard, schoolParams, schoolRecords, updateAmounts,
} from './store';

export const schoolcontributeRoutes: CentralRoute[] = [
  route('POST', '/school-contribute/create', anyUser(), scope.schoolsOfCaller, { body: createBody },
    ({ db, req, scope, caller, body }) => createRecord(db, scope, callerOffset(req), body, actorOf(caller)),
    { summary: 'create a school fee-contribution record' }),
  route('POST', '/school-contribute/getallschoolcontribute/:schoolid', anyUser(), scope.schoolsOfCaller,
    { params: schoolParams, body: recordListBody },
    ({ db, scope, params, body }) => listRecords(db, scope, params.schoolid, body),
    { summary: 'paged contribution records of one school' }),
  route('PUT', '/school-contribute/updateschoolname/:schoolid', anyUser(), scope.schoolsOfCaller,
    { params: schoolParams, body: renameBody },
    ({ db, scope, caller, params, body }) => renameRecords(db, scope, params.schoolid, body, actorOf(caller)),
    { summary: 'update contribution record (by school)' }),
  route('PUT', '/school-contribute/updateschooldashboard/:schoolcontributeid', anyUser(), scope.schoolsOfCaller,
    { params: recordParams, body: amountsBody },
    ({ db, scope, caller, params, body }) => updateAmounts(db, scope, params.schoolcontributeid, body, actorOf(caller)),
    { summary: 'update one contribution record (expected/actual)' }),
  route('DELETE', '/school-contribute/deleteschoolcontribute/:schoolid', anyUser(), scope.schoolsOfCaller,
    { params: schoolParams },
    ({ db, scope, caller, params }) => deleteSchoolRecords(db, scope, params.schoolid, actorOf(caller)),
    { summary: 'soft-delete contribution records of a school' }),
  route('DELETE', '/school-contribute/deleteschoolcontributeid/:schoolcontributeid', anyUser(), scope.schoolsOfCaller,
    { params: recordParams },
    ({ db, scope, caller, params }) => deleteRecord(db, scope, params.schoolcontributeid, actorOf(caller)),
    { summary: 'soft-delete one contribution record' }),
  route('GET', '/school-contribute/getschooldashboard/schoolcontributeid/:schoolcontributeid', anyUser(),
    scope.schoolsOfCaller, { params: recordParams },
    ({ db, scope, params }) => getRecord(db, scope, params.schoolcontributeid),
    { summary: 'get one contribution record' }),
  route('GET', '/school-contribute/getschooldashboardid/:schoolid', anyUser(), scope.schoolsOfCaller,
    { params: schoolParams },
    ({ db, req, scope, params }) => schoolDashboard(db, scope, callerOffset(req), params.schoolid),
    { summary: 'contribution dashboard of one school' }),
  route('GET', '/school-contribute/getallschooldashboard', anyUser(), scope.schoolsOfCaller, {},
    ({ db, scope }) => allDashboard(db, scope), { summary: 'contribution dashboard of all schools' }),
  route('GET', '/school-contribute/getschoolcontribute/:schoolid', anyUser(), scope.schoolsOfCaller,
    { params: schoolParams }, ({ db, scope, params }) => schoolRecords(db, scope, params.schoolid),
    { summary: 'contribution summary of one school' }),
  // Decision 18: a bare array, as the original answers (scripts written against it keep working).
  route('GET', '/school-contribute/getallschoolcontribute', anyUser(), scope.schoolsOfCaller, {},
    async ({ db, scope, res }) => { res.json(await newestRecords(db, scope)); },
    { summary: 'all contribution rows (raw array, no envelope)' }),
  route('GET', '/school-contribute/all', anyUser(), scope.schoolsOfCaller, { query: dashboardQuery },
    ({ db, req, scope, query }) => filteredDashboard(db, scope, callerOffset(req), query),
    { summary: 'contribution dashboard filtered by query countryid/schoolname/date' }),
  route('POST', '/school-contribute/report/download', anyUser(), scope.schoolsOfCaller, { body: reportBody },
    async ({ db, req, res, scope, body }) => {
    await sendCsv(res, 'report-schoolcontribute.csv', REPORT_COLUMNS, await reportRows(db, scope, callerOffset(req), body.date));
  },
    { summary: 'CSV download of contribution report (query date)' }),
];
