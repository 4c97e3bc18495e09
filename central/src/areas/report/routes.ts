import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { depsOf } from '../../http/context';
import { disabilityCounts, disabilityQuery, multiPagingBody, studentStatus } from './store';
import { downloadOnlineReport, onlineReportInput, pagedOnlineReport } from './online';

export const reportRoutes: CentralRoute[] = [
  route('GET', '/report/dashboard', perms('view_plus_reach'), noInput, pending, { summary: 'reach dashboard (query countryid, year)' }),
  route('GET', '/report/gender', perms('view_plus_reach', 'view_reach_school'), noInput, pending, { summary: 'learner counts by gender (query countryid, schoolname)' }),
  route('GET', '/report/disability', perms('view_plus_reach', 'view_reach_school'), { query: disabilityQuery }, ({ req, query }) => disabilityCounts(depsOf(req).db, query), { summary: 'aggregated disability counts (query countryid, schoolname)' }),
  route('GET', '/report/offlineonline', perms('view_plus_reach', 'view_reach_school'), noInput, pending, { summary: 'offline vs online learner counts' }),
  route('POST', '/report/studentprogress', perms('view_offline_quiz_score'), noInput, pending, { summary: 'paged offline quiz-score report' }),
  route('POST', '/report/studentprogress/class', perms('view_offline_quiz_score'), noInput, pending, { summary: 'paged offline class quiz-score report' }),
  route('POST', '/report/studentlastcompletedquiz', perms('view_current_level'), noInput, pending, { summary: 'paged offline current-level report' }),
  route('POST', '/report/studentlevelquiz', perms('view_student_level_quiz'), noInput, pending, { summary: 'paged offline level-quiz report' }),
  route('POST', '/report/studentlevelquiz/class', perms('view_student_level_quiz'), noInput, pending, { summary: 'paged offline class level-quiz report' }),
  route('POST', '/report/studentstatus', perms('view_active_status'), { body: multiPagingBody }, ({ req, body, caller }) => studentStatus(depsOf(req).db, body, caller.kind === 'staff' && Array.isArray(caller.claims.schools) ? (caller.claims.schools as string[]) : []), { summary: 'paged offline active-status report' }),
  route('POST', '/report/syncrecords', perms('view_sync_record'), noInput, pending, { summary: 'paged sync-record list' }),
  route('GET', '/report/dashboard/country/:countryid', perms('view_plus_reach'), noInput, pending, { summary: 'reach dashboard for a country' }),
  route('GET', '/report/dashboard/school/:schoolname', perms('view_reach_school'), noInput, pending, { summary: 'reach dashboard for a school' }),
  route('GET', '/report/studentusage', perms('view_impact'), noInput, pending, { summary: 'learner app-usage impact report' }),
  route('POST', '/report/student-grade-progress', perms('view_offline_report'), noInput, pending, { summary: 'paged offline grade-progress report' }),
  route('POST', '/report/student-level-progress', perms('view_offline_report'), noInput, pending, { summary: 'paged offline level-progress report' }),
  route('POST', '/report/student-lesson-progress', perms('view_offline_report'), noInput, pending, { summary: 'paged offline lesson-progress report' }),
  route('POST', '/report/online/studentprogress', perms('view_online_quiz_score'), onlineReportInput, pagedOnlineReport('/report/studentprogress'), { summary: 'paged online quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/online/studentprogress/class', perms('view_online_quiz_score'), onlineReportInput, pagedOnlineReport('/report/studentprogress/class'), { summary: 'paged online class quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/online/studentlastcompletedquiz', perms('view_online_current_level'), onlineReportInput, pagedOnlineReport('/report/studentlastcompletedquiz'), { summary: 'paged online current-level report (proxied to classroom server)' }),
  route('POST', '/report/studentlevelquiz/online', perms('view_online_student_level_quiz'), onlineReportInput, pagedOnlineReport('/report/studentlevelquiz'), { summary: 'paged online level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/online/studentlevelquiz/class', perms('view_online_student_level_quiz'), onlineReportInput, pagedOnlineReport('/report/studentlevelquiz/class'), { summary: 'paged online class level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/online/studentstatus', perms('view_online_active_status'), onlineReportInput, pagedOnlineReport('/report/studentstatus', { scopeToSchools: true }), { summary: 'paged online active-status report (proxied to classroom server)' }),
  route('POST', '/report/online/student-grade-progress', perms('view_online_report'), onlineReportInput, pagedOnlineReport('/report/student-grade-progress', { withStudent: true }), { summary: 'paged online grade-progress report (proxied to classroom server)' }),
  route('POST', '/report/online/student-level-progress', perms('view_online_report'), onlineReportInput, pagedOnlineReport('/report/student-level-progress', { withStudent: true }), { summary: 'paged online level-progress report (proxied to classroom server)' }),
  route('POST', '/report/online/student-lesson-progress', perms('view_online_report'), onlineReportInput, pagedOnlineReport('/report/student-lesson-progress', { withStudent: true }), { summary: 'paged online lesson-progress report (proxied to classroom server)' }),
  route('POST', '/report/studentprogress/download', perms('view_offline_quiz_score'), noInput, pending, { summary: 'CSV download of offline quiz-score report' }),
  route('POST', '/report/studentprogress/class/download', perms('view_offline_quiz_score'), noInput, pending, { summary: 'CSV download of offline class quiz-score report' }),
  route('POST', '/report/online/studentprogress/download', perms('view_online_quiz_score'), onlineReportInput, downloadOnlineReport('/report/studentprogress/download'), { summary: 'CSV download of online quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/online/studentprogress/class/download', perms('view_online_quiz_score'), onlineReportInput, downloadOnlineReport('/report/studentprogress/class/download'), { summary: 'CSV download of online class quiz-score report (proxied to classroom server)' }),
  route('POST', '/report/studentlastcompletedquiz/download', perms('view_current_level'), noInput, pending, { summary: 'CSV download of offline current-level report' }),
  route('POST', '/report/online/studentlastcompletedquiz/download', perms('view_online_current_level'), onlineReportInput, downloadOnlineReport('/report/studentlastcompletedquiz/download'), { summary: 'CSV download of online current-level report (proxied to classroom server)' }),
  route('POST', '/report/studentlevelquiz/download', perms('view_student_level_quiz'), noInput, pending, { summary: 'CSV download of offline level-quiz report' }),
  route('POST', '/report/studentlevelquiz/class/download', perms('view_student_level_quiz'), noInput, pending, { summary: 'CSV download of offline class level-quiz report' }),
  route('POST', '/report/online/studentlevelquiz/download', perms('view_online_student_level_quiz'), onlineReportInput, downloadOnlineReport('/report/studentlevelquiz/download'), { summary: 'CSV download of online level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/online/studentlevelquiz/class/download', perms('view_online_student_level_quiz'), onlineReportInput, downloadOnlineReport('/report/studentlevelquiz/class/download'), { summary: 'CSV download of online class level-quiz report (proxied to classroom server)' }),
  route('POST', '/report/studentstatus/download', perms('view_active_status'), noInput, pending, { summary: 'CSV download of offline active-status report' }),
  route('POST', '/report/online/studentstatus/download', perms('view_online_active_status'), onlineReportInput, downloadOnlineReport('/report/studentstatus/download', { scopeToSchools: true }), { summary: 'CSV download of online active-status report (proxied to classroom server)' }),
  route('POST', '/report/techdowntime', perms('view_tech_downtime'), noInput, pending, { summary: 'tech-downtime report from feedback' }),
];
