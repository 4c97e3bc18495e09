import {
  FLEET_BODY_LIMIT,
  appliedBody,
  boxCredential,
  contactBody,
  diagnosticsBody,
  enrolBody,
  enrolmentCode,
  httpError,
  perms,
  releaseReportBody,
  roles,
} from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import { actorOf } from '../../http/context';
import type { Caller, CentralRoute } from '../../http/types';
import {
  boxParams,
  contact,
  enrol,
  getBox,
  listBoxes,
  listQuery,
  newCode,
  registerBody,
  registerBox,
  revokeBox,
} from './store';
import { receivePiece } from './up';
import {
  downApplied,
  downBody,
  downMedia,
  downMediaFile,
  downQuery,
  downReport,
  downState,
  mediaFileQuery,
  reportBody,
  withoutBrowserHeaders,
} from './down';
import {
  createRelease, getRelease, listReleases, offeredRelease, releaseBody, releaseParams, reportRelease, setReleaseState,
  stageBody, stageRelease,
} from './releases';
import {
  boxSettingsView, fleetSettings, putBoxSettings, putFleetSettings, putSchoolSettings, schoolParams, schoolSettings,
  settingsBody,
} from './settings';
import {
  DIAGNOSTICS_BODY_LIMIT, boxDiagnosticParams, diagnosticParams, getDiagnostics, listDiagnostics, receiveDiagnostics,
  requestDiagnostics,
} from './diagnostics';

// The fleet (docs/fleet-protocol.md). Staff manage the boxes of their schools (`getBox` answers 404 for a box
// outside them, before anything of it is read or written): the school-management
// permission, narrowed as every school route is (a box of another school is answered 404, as one that does
// not exist). A box speaks with its own credential on routes that admit nothing else, and the enrolment
// code is the credential of its one exchange (so it is no public route). Routes beyond the catalogue.
const manage = perms('update_school');
// A release reaches every school's box: the organisation's superadmins alone publish and roll it out.
const publish = roles('superadmin');
const extra = { addition: true, tags: ['fleet'] };
const boxOptions = { ...extra, bodyLimit: FLEET_BODY_LIMIT };

function boxOf(c: Caller) {
  if (c.kind !== 'box') throw httpError(401, 'Unauthorized');
  return c;
}
function enrollingOf(c: Caller) {
  if (c.kind !== 'enrolcode') throw httpError(401, 'Unauthorized');
  return c;
}

export const fleetRoutes: CentralRoute[] = [
  route('POST', '/fleet/boxes', manage, scope.schoolsOfCaller, { body: registerBody },
    ({ db, scope, config, caller, body }) =>
      registerBox(db, scope, body, config.fleet.enrolmentCodeMs, actorOf(caller)),
    { ...extra, status: 201, summary: "register a box for a school; answers its one-time enrolment code, once" }),
  route('GET', '/fleet/boxes', manage, scope.schoolsOfCaller, { query: listQuery },
    ({ db, scope, query }) => listBoxes(db, scope, query), { ...extra, summary: "the boxes of the caller's schools" }),
  route('GET', '/fleet/boxes/:boxid', manage, scope.schoolsOfCaller, { params: boxParams },
    ({ db, scope, params }) => getBox(db, scope, params.boxid), { ...extra, summary: 'one box and its last report' }),
  route('POST', '/fleet/boxes/:boxid/code', manage, scope.schoolsOfCaller, { params: boxParams },
    ({ db, scope, config, params }) => newCode(db, scope, params.boxid, config.fleet.enrolmentCodeMs),
    { ...extra, summary: "a new enrolment code, replacing the box's earlier one" }),
  route('POST', '/fleet/boxes/:boxid/revoke', manage, scope.schoolsOfCaller, { params: boxParams },
    ({ db, scope, params }) => revokeBox(db, scope, params.boxid),
    { ...extra, summary: "revoke a box: its next request is refused" }),
  // Settings a box takes on its next contact (values only: nothing here makes a box run anything).
  // Fleet-wide settings reach every school's boxes: the super admin's alone.
  route('GET', '/fleet/settings', roles('superadmin'), scope.wholeOrganisation, {},
    ({ db }) => fleetSettings(db), { ...extra, summary: 'the settings every box takes unless its school or it sets' }),
  route('PUT', '/fleet/settings', roles('superadmin'), scope.wholeOrganisation, { body: settingsBody },
    ({ db, caller, body }) => putFleetSettings(db, body, actorOf(caller)),
    { ...extra, summary: 'replace the fleet-wide box settings ({} clears them)' }),
  route('GET', '/fleet/schools/:schoolid/settings', manage, scope.schoolsOfCaller, { params: schoolParams },
    ({ db, scope, params }) => schoolSettings(db, scope, params.schoolid),
    { ...extra, summary: "the settings a school's boxes take over the fleet's" }),
  route('PUT', '/fleet/schools/:schoolid/settings', manage, scope.schoolsOfCaller,
    { params: schoolParams, body: settingsBody },
    ({ db, scope, caller, params, body }) => putSchoolSettings(db, scope, params.schoolid, body, actorOf(caller)),
    { ...extra, summary: "replace a school's box settings ({} clears them)" }),
  route('GET', '/fleet/boxes/:boxid/settings', manage, scope.schoolsOfCaller, { params: boxParams },
    async ({ db, scope, params }) => boxSettingsView(db, await getBox(db, scope, params.boxid)),
    { ...extra, summary: "a box's own settings, what it runs with, and the version it applied" }),
  route('PUT', '/fleet/boxes/:boxid/settings', manage, scope.schoolsOfCaller, { params: boxParams, body: settingsBody },
    async ({ db, scope, caller, params, body }) => {
      await getBox(db, scope, params.boxid);
      await putBoxSettings(db, params.boxid, body, actorOf(caller));
      return boxSettingsView(db, await getBox(db, scope, params.boxid));
    }, { ...extra, summary: "replace a box's own settings ({} clears them)" }),
  // Diagnostics: the box sends a fixed report on its next contact; kept FLEET_DIAGNOSTICS_DAYS.
  route('POST', '/fleet/boxes/:boxid/diagnostics', manage, scope.schoolsOfCaller, { params: boxParams },
    async ({ db, scope, caller, params }) => {
      await getBox(db, scope, params.boxid);
      return requestDiagnostics(db, params.boxid, actorOf(caller));
    }, { ...extra, status: 201, summary: 'ask a box for its diagnostics on its next contact' }),
  route('GET', '/fleet/boxes/:boxid/diagnostics', manage, scope.schoolsOfCaller, { params: boxParams },
    async ({ db, scope, params }) => {
      await getBox(db, scope, params.boxid);
      return listDiagnostics(db, params.boxid);
    }, { ...extra, summary: "a box's diagnostics requests, newest first (without their reports)" }),
  route('GET', '/fleet/boxes/:boxid/diagnostics/:diagnosticid', manage, scope.schoolsOfCaller,
    { params: diagnosticParams },
    async ({ db, scope, params }) => {
      await getBox(db, scope, params.boxid);
      return getDiagnostics(db, params.boxid, params.diagnosticid);
    }, { ...extra, summary: 'one diagnostics report a box sent' }),
  route('POST', '/fleet/enrol', enrolmentCode(), scope.ownAccount, { body: enrolBody },
    ({ db, caller, body }) => enrol(db, enrollingOf(caller), body),
    { ...boxOptions, summary: "a box exchanges its code for its own credential (the SHA-256 of its secret)" }),
  route('POST', '/fleet/box/contact', boxCredential(), scope.ownAccount, { body: contactBody },
    ({ db, res, caller, body }) => {
      withoutBrowserHeaders(res);
      return contact(db, boxOf(caller), body);
    },
    { ...boxOptions, summary: "a box reports its version, disk and time; answers central's time" }),
  route('POST', '/fleet/box/log', boxCredential(), scope.ownAccount, {}, receivePiece,
    { ...extra, rawBody: true, summary: "a piece of the box's activity (log ZIP), imported once and acknowledged" }),
  // The down path: the box's own school only, taken from central's record of the box (nothing in the request
  // names a school).
  route('GET', '/fleet/box/state', boxCredential(), scope.ownAccount, { query: downQuery }, downState,
    { ...extra, summary: "the version tags (SHA-256) of the box's school's package and rosters" }),
  route('GET', '/fleet/box/package', boxCredential(), scope.ownAccount, {}, downBody('package'),
    { ...extra, summary: "the curriculum package POST /sync/cloud pushes, for the box's school (ETag, Range)" }),
  route('GET', '/fleet/box/roster/students', boxCredential(), scope.ownAccount, { query: downQuery },
    downBody('students'),
    { ...extra, summary: "the learner roster the students push sends, for the box's school (ETag, Range)" }),
  route('GET', '/fleet/box/roster/teachers', boxCredential(), scope.ownAccount, {}, downBody('teachers'),
    { ...extra, summary: "the teacher roster the students push sends, for the box's school (ETag, Range)" }),
  route('GET', '/fleet/box/media', boxCredential(), scope.ownAccount, {}, downMedia,
    { ...extra, summary: "the media files the box's school's package references, with SHA-256 and size" }),
  route('GET', '/fleet/box/media/file', boxCredential(), scope.ownAccount, { query: mediaFileQuery }, downMediaFile,
    { ...extra, summary: "one media file of the box's school's list (ETag: its SHA-256; Range, If-Range)" }),
  route('POST', '/fleet/box/applied', boxCredential(), scope.ownAccount, { body: appliedBody }, downApplied,
    { ...boxOptions, summary: "a box reports the bodies it applied and the bytes they took: its last down" }),
  route('POST', '/fleet/box/report', boxCredential(), scope.ownAccount, { body: reportBody }, downReport,
    { ...boxOptions, summary: 'a box reports a package or roster it refused; kept as its last error' }),
  // Box releases in stages (docs/operations.md, "Box releases"): fleet-wide, so not narrowed to schools.
  route('POST', '/fleet/releases', publish, scope.global, { body: releaseBody },
    ({ db, caller, body }) => createRelease(db, body, actorOf(caller)),
    { ...extra, status: 201, summary: 'publish a box release (its signed apt repository); offered to no box yet' }),
  route('GET', '/fleet/releases', publish, scope.global, {}, ({ db }) => listReleases(db),
    { ...extra, summary: 'the box releases, newest first' }),
  route('GET', '/fleet/releases/:releaseid', publish, scope.global, { params: releaseParams },
    ({ db, params }) => getRelease(db, params.releaseid),
    { ...extra, summary: 'a release, the boxes in its stage, those running it and their reports' }),
  route('POST', '/fleet/releases/:releaseid/stage', publish, scope.global, { params: releaseParams, body: stageBody },
    ({ db, params, body }) => stageRelease(db, params.releaseid, body),
    { ...extra, summary: 'widen a release to chosen boxes, a percentage of the fleet, or all; it rolls' }),
  route('POST', '/fleet/releases/:releaseid/pause', publish, scope.global, { params: releaseParams },
    ({ db, params }) => setReleaseState(db, params.releaseid, 'paused'),
    { ...extra, summary: 'pause a release: no box is offered it until it resumes' }),
  route('POST', '/fleet/releases/:releaseid/resume', publish, scope.global, { params: releaseParams },
    ({ db, params }) => setReleaseState(db, params.releaseid, 'rolling'),
    { ...extra, summary: 'resume a paused release' }),
  route('POST', '/fleet/releases/:releaseid/withdraw', publish, scope.global, { params: releaseParams },
    ({ db, params }) => setReleaseState(db, params.releaseid, 'withdrawn'),
    { ...extra, summary: 'withdraw a release for good: no box is offered it again' }),
  route('GET', '/fleet/box/release', boxCredential(), scope.ownAccount, {},
    ({ db, caller }) => offeredRelease(db, boxOf(caller).boxid),
    { ...extra, summary: 'the box release offered to this box, or null' }),
  route('POST', '/fleet/box/release/report', boxCredential(), scope.ownAccount, { body: releaseReportBody },
    ({ db, caller, body }) => reportRelease(db, boxOf(caller).boxid, body),
    { ...boxOptions, summary: 'a box reports an offered release installed, failed or rolled back' }),
  route('POST', '/fleet/box/diagnostics/:diagnosticid', boxCredential(), scope.ownAccount,
    { params: boxDiagnosticParams, body: diagnosticsBody }, receiveDiagnostics,
    { ...extra, bodyLimit: DIAGNOSTICS_BODY_LIMIT, summary: 'a box sends the diagnostics central asked it for' }),
];
