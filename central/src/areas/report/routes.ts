import { noInput, perms, type RouteOptions } from '@lms/shared';
import { route } from '../../http/route';
import { multiPagingBody } from '../../http/paging';
import { seesLearnerIdentity } from '../../http/privacy';
import { scope } from '../../http/scope';
import type { CentralCtx, CentralRoute } from '../../http/types';
import {
  countryDashboard,
  countryParams,
  dashboardQuery,
  dashboardSeries,
  disabilityCounts,
  genderCounts,
  offlineOnlineCounts,
  reachQuery,
  schoolDashboard,
  schoolParams,
  studentUsage,
  techDowntime,
  techDowntimeBody,
} from './charts';
import { activityCsv, classCsv, currentLevelCsv, oneLearnerCsv } from './downloads';
import {
  classPage,
  gradeProgressPage,
  lastCompletedPage,
  learnerProgressPage,
  oneLearnerPage,
  studentStatusPage,
  type ReportCtx,
} from './learners';
import { downloadOnlineReport, onlineReportInput, pagedOnlineReport } from './online';
import { syncRecords, syncRecordsBody, syncStatus, syncStatusQuery } from './syncs';

type Ctx = CentralCtx;

/** What every report reads: the database, the caller's school/country scope, whether it may see learner identities. */
const reportOf = ({ db, scope, caller }: Ctx): ReportCtx => ({ db, scope, identity: seesLearnerIdentity(caller) });

/**
 * The options of a report that only reads what others wrote: it may read from the read replica
 * (DATABASE_REPLICA_URL), whose data lags the primary's by at most REPLICA_MAX_LAG_SECONDS.
 */
const fromReplica = (summary: string, more: RouteOptions = {}): RouteOptions =>
  ({ summary, reads: 'replica', ...more });

const multi = { body: multiPagingBody };
const reach = perms('view_plus_reach', 'view_reach_school');

export const reportRoutes: CentralRoute[] = [
  route('GET', '/report/dashboard', perms('view_plus_reach'), scope.schoolsOfCaller, { query: dashboardQuery },
    (ctx) => dashboardSeries(reportOf(ctx), ctx.query), fromReplica('reach dashboard (query countryid, year)')),
  route('GET', '/report/gender', reach, scope.schoolsOfCaller, { query: reachQuery },
    (ctx) => genderCounts(reportOf(ctx), ctx.query),
    fromReplica('learner counts by gender (query countryid, schoolname)')),
  route('GET', '/report/disability', reach, scope.schoolsOfCaller, { query: reachQuery },
    (ctx) => disabilityCounts(reportOf(ctx), ctx.query),
    fromReplica('aggregated disability counts (query countryid, schoolname)')),
  route('GET', '/report/offlineonline', reach, scope.schoolsOfCaller, { query: reachQuery },
    (ctx) => offlineOnlineCounts(reportOf(ctx), ctx.query), fromReplica('offline vs online learner counts')),
  route('POST', '/report/studentprogress', perms('view_offline_quiz_score'), scope.schoolsOfCaller, multi,
    (ctx) => oneLearnerPage(reportOf(ctx), ctx.body, 'lesson'), fromReplica('paged offline quiz-score report')),
  route('POST', '/report/studentprogress/class', perms('view_offline_quiz_score'), scope.schoolsOfCaller, multi,
    (ctx) => classPage(reportOf(ctx), ctx.body, 'lesson'), fromReplica('paged offline class quiz-score report')),
  route('POST', '/report/studentlastcompletedquiz', perms('view_current_level'), scope.schoolsOfCaller, multi,
    (ctx) => lastCompletedPage(reportOf(ctx), ctx.body), fromReplica('paged offline current-level report')),
  route('POST', '/report/studentlevelquiz', perms('view_student_level_quiz'), scope.schoolsOfCaller, multi,
    (ctx) => oneLearnerPage(reportOf(ctx), ctx.body, 'level'), fromReplica('paged offline level-quiz report')),
  route('POST', '/report/studentlevelquiz/class', perms('view_student_level_quiz'), scope.schoolsOfCaller, multi,
    (ctx) => classPage(reportOf(ctx), ctx.body, 'level'), fromReplica('paged offline class level-quiz report')),
  route('POST', '/report/studentstatus', perms('view_active_status'), scope.schoolsOfCaller, multi,
    (ctx) => studentStatusPage(reportOf(ctx), ctx.body), fromReplica('paged offline active-status report')),
  route('POST', '/report/syncrecords', perms('view_sync_record'), scope.schoolsOfCaller, { body: syncRecordsBody },
    (ctx) => syncRecords(reportOf(ctx), ctx.body), fromReplica('paged sync-record list')),
  route('GET', '/report/syncstatus', perms('view_sync_record'), scope.schoolsOfCaller, { query: syncStatusQuery },
    (ctx) => syncStatus(reportOf(ctx), ctx.query),
    fromReplica(
      'per school: last classroom-log upload and last content sent towards its classroom (when, by whom, ' +
        'how many rows); paged (query pageindex, pagesize), filtered by countryid, schoolid, schoolname',
      { addition: true },
    )),
  route('GET', '/report/dashboard/country/:countryid', perms('view_plus_reach'), scope.schoolsOfCaller,
    { params: countryParams }, (ctx) => countryDashboard(reportOf(ctx), ctx.params.countryid),
    fromReplica('reach dashboard for a country')),
  route('GET', '/report/dashboard/school/:schoolname', perms('view_reach_school'), scope.schoolsOfCaller,
    { params: schoolParams }, (ctx) => schoolDashboard(reportOf(ctx), ctx.params.schoolname),
    fromReplica('reach dashboard for a school')),
  route('GET', '/report/studentusage', perms('view_impact'), scope.schoolsOfCaller, noInput,
    (ctx) => studentUsage(reportOf(ctx)), fromReplica('learner app-usage impact report')),
  route('POST', '/report/student-grade-progress', perms('view_offline_report'), scope.schoolsOfCaller, multi,
    (ctx) => gradeProgressPage(reportOf(ctx), ctx.body), fromReplica('paged offline grade-progress report')),
  route('POST', '/report/student-level-progress', perms('view_offline_report'), scope.schoolsOfCaller, multi,
    (ctx) => learnerProgressPage(reportOf(ctx), ctx.body, 'level'), fromReplica('paged offline level-progress report')),
  route('POST', '/report/student-lesson-progress', perms('view_offline_report'), scope.schoolsOfCaller, multi,
    (ctx) => learnerProgressPage(reportOf(ctx), ctx.body, 'lesson'),
    fromReplica('paged offline lesson-progress report')),
  route('POST', '/report/online/studentprogress', perms('view_online_quiz_score'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/studentprogress'),
    { summary: 'paged online quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/online/studentprogress/class', perms('view_online_quiz_score'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/studentprogress/class'),
    { summary: 'paged online class quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/online/studentlastcompletedquiz', perms('view_online_current_level'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/studentlastcompletedquiz'),
    { summary: 'paged online current-level report (proxied to classroom server)' }),
  route('POST', '/report/studentlevelquiz/online', perms('view_online_student_level_quiz'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/studentlevelquiz'),
    { summary: 'paged online level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/online/studentlevelquiz/class', perms('view_online_student_level_quiz'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/studentlevelquiz/class'),
    { summary: 'paged online class level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/online/studentstatus', perms('view_online_active_status'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/studentstatus'),
    { summary: 'paged online active-status report (proxied to classroom server)' }),
  route('POST', '/report/online/student-grade-progress', perms('view_online_report'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/student-grade-progress', { withStudent: true }),
    { summary: 'paged online grade-progress report (proxied to classroom server)' }),
  route('POST', '/report/online/student-level-progress', perms('view_online_report'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/student-level-progress', { withStudent: true }),
    { summary: 'paged online level-progress report (proxied to classroom server)' }),
  route('POST', '/report/online/student-lesson-progress', perms('view_online_report'), scope.schoolsOfCaller,
    onlineReportInput, pagedOnlineReport('/report/student-lesson-progress', { withStudent: true }),
    { summary: 'paged online lesson-progress report (proxied to classroom server)' }),
  route('POST', '/report/studentprogress/download', perms('view_offline_quiz_score'), scope.schoolsOfCaller, multi,
    (ctx) => oneLearnerCsv(ctx.res, reportOf(ctx), ctx.body, 'lesson'),
    fromReplica('CSV download of offline quiz-score report')),
  route('POST', '/report/studentprogress/class/download', perms('view_offline_quiz_score'), scope.schoolsOfCaller,
    multi, (ctx) => classCsv(ctx.res, reportOf(ctx), ctx.body, 'lesson'),
    fromReplica('CSV download of offline class quiz-score report')),
  route('POST', '/report/online/studentprogress/download', perms('view_online_quiz_score'), scope.schoolsOfCaller,
    onlineReportInput, downloadOnlineReport('/report/studentprogress/download', 'quiz'),
    { summary: 'CSV download of online quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/online/studentprogress/class/download', perms('view_online_quiz_score'), scope.schoolsOfCaller,
    onlineReportInput, downloadOnlineReport('/report/studentprogress/class/download', 'quiz'),
    { summary: 'CSV download of online class quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/studentlastcompletedquiz/download', perms('view_current_level'), scope.schoolsOfCaller, multi,
    (ctx) => currentLevelCsv(ctx.res, reportOf(ctx), ctx.body),
    fromReplica('CSV download of offline current-level report')),
  route('POST', '/report/online/studentlastcompletedquiz/download', perms('view_online_current_level'),
    scope.schoolsOfCaller, onlineReportInput,
    downloadOnlineReport('/report/studentlastcompletedquiz/download', 'currentlevel'),
    { summary: 'CSV download of online current-level report (proxied to classroom server)' }),
  route('POST', '/report/studentlevelquiz/download', perms('view_student_level_quiz'), scope.schoolsOfCaller, multi,
    (ctx) => oneLearnerCsv(ctx.res, reportOf(ctx), ctx.body, 'level'),
    fromReplica('CSV download of offline level-quiz report')),
  route('POST', '/report/studentlevelquiz/class/download', perms('view_student_level_quiz'), scope.schoolsOfCaller,
    multi, (ctx) => classCsv(ctx.res, reportOf(ctx), ctx.body, 'level'),
    fromReplica('CSV download of offline class level-quiz report')),
  route('POST', '/report/online/studentlevelquiz/download', perms('view_online_student_level_quiz'),
    scope.schoolsOfCaller, onlineReportInput, downloadOnlineReport('/report/studentlevelquiz/download', 'levelquiz'),
    { summary: 'CSV download of online level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/online/studentlevelquiz/class/download', perms('view_online_student_level_quiz'),
    scope.schoolsOfCaller, onlineReportInput,
    downloadOnlineReport('/report/studentlevelquiz/class/download', 'levelquiz'),
    { summary: 'CSV download of online class level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/studentstatus/download', perms('view_active_status'), scope.schoolsOfCaller, multi,
    (ctx) => activityCsv(ctx.res, reportOf(ctx), ctx.body),
    fromReplica('CSV download of offline active-status report')),
  route('POST', '/report/online/studentstatus/download', perms('view_online_active_status'), scope.schoolsOfCaller,
    onlineReportInput, downloadOnlineReport('/report/studentstatus/download', 'activity'),
    { summary: 'CSV download of online active-status report (proxied to classroom server)' }),
  route('POST', '/report/techdowntime', perms('view_tech_downtime'), scope.schoolsOfCaller, { body: techDowntimeBody },
    (ctx) => techDowntime(reportOf(ctx), ctx.body), fromReplica('tech-downtime report from feedback')),
];
