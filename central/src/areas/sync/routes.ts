import { z } from 'zod';
import {
  anyUser, httpError, minimisedForBox, noInput, roles, writeStudentsZip, writeTeachersZip,
} from '@lms/shared';
import { route } from '../../http/route';
import { schoolInScope, scope } from '../../http/scope';
import type { CentralCtx, Caller, CentralRoute } from '../../http/types';
import { erasuresCarried } from '../../privacy/learner';
import { pushFile, pushPackage, sendZip } from './push';
import {
  contentPackage,
  legacyContentPackage,
  onSnapshot,
  packageToTempFile,
  recordContentPush,
  reportDataPackage,
  schoolOfSchoolUser,
  schoolRoster,
  schoolTeachers,
} from './store';

type Ctx = CentralCtx;

/** Where every curriculum download is saved by the apps (the name is part of the contract). */
const SYNC_ZIP = 'sync-data.zip';

async function reportData({ db, res }: Ctx): Promise<void> {
  await sendZip(res, SYNC_ZIP, reportDataPackage(db));
}

async function legacySync({ db, res, scope }: Ctx): Promise<void> {
  await sendZip(res, SYNC_ZIP, legacyContentPackage(db, scope));
}

/** Who sent content, as the sync-status report names them. */
function sender(caller: Caller): { id: string | null; name: string | null } {
  if (caller.kind === 'staff') return { id: caller.lmsuserid, name: caller.lmsusername };
  if (caller.kind === 'school') return { id: caller.schooluserid, name: caller.schoolusername };
  return { id: null, name: caller.kind === 'apikey' ? 'API KEY' : null };
}

/**
 * Records what was sent; the content reached the classroom (or
 * the teacher) already, so a failure is logged, not answered.
 */
async function recorded(logger: Ctx['logger'], write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    logger.warn({ err }, 'content push not recorded');
  }
}

async function contentDownload({ db, res, caller, scope, logger }: Ctx): Promise<void> {
  const counter = { rows: 0 };
  // A teacher fetching the package takes it to their classroom's server: that school's last content.
  const record =
    caller.kind !== 'school'
      ? undefined
      : () =>
          recorded(logger, async () => {
            const school = await schoolOfSchoolUser(db, caller.schooluserid);
            if (school)
              await recordContentPush(db, {
                kind: 'download',
                schoolid: school,
                rowcount: counter.rows,
                by: sender(caller),
              });
          });
  await sendZip(res, SYNC_ZIP, contentPackage(db, scope, counter), record);
}

async function pushContent(ctx: Ctx): Promise<unknown> {
  const { db, caller, scope, logger } = ctx;
  const counter = { rows: 0 };
  const file = await onSnapshot(db, (q) => packageToTempFile(contentPackage(q, scope, counter)));
  const answer = await pushFile(ctx, 'master', file);
  await recorded(logger, () =>
    recordContentPush(db, { kind: 'content', schoolid: null, rowcount: counter.rows, by: sender(caller) }),
  );
  return answer;
}

const schoolParams = { params: z.object({ schoolname: z.string().trim().min(1, 'School name is required').max(250) }) };

async function pushStudents(ctx: CentralCtx<typeof schoolParams>): Promise<unknown> {
  const { db, params, caller, scope, logger } = ctx;
  // Another school's name is answered as an unknown school: its roster (hashes included) is not the caller's to push.
  if (!schoolInScope(scope, { schoolname: params.schoolname })) throw httpError(400, 'Invalid School Name');
  const rosterAt = new Date().toISOString();
  // Hashes travel here, and only here: the classroom must verify the learners' own passwords offline.
  // Parents' names, birth date, contact and the disability answers stay on central: a box never uses them.
  const studentusers = (await schoolRoster(db, params.schoolname, { teacherAccounts: true, hash: true }))
    .map((u) => ({ ...u, student: minimisedForBox(u.student) }));
  if (studentusers.length === 0) throw httpError(400, 'No student available');
  const answer = await pushPackage(ctx, 'students', writeStudentsZip({ studentusers }));
  // The roster carried the school's erased learners anonymised: their erasure reached this box.
  await erasuresCarried(db, params.schoolname, rosterAt);
  // The school's teachers go with it (deactivated and deleted ones too, so that the box refuses them): a new
  // box has no other way to learn its teachers, who sign in there to export the learners' log.
  const teachers = await schoolTeachers(db, params.schoolname, { hash: true });
  if (teachers.length) await pushPackage(ctx, 'teachers', writeTeachersZip(teachers));
  await recorded(logger, async () => {
    const school = await db('schools').where({ schoolname: params.schoolname }).first('schoolid');
    if (school)
      await recordContentPush(db, {
        kind: 'students',
        schoolid: school.schoolid as string,
        rowcount: studentusers.length,
        by: sender(caller),
      });
  });
  return answer;
}

export const syncRoutes: CentralRoute[] = [
  route('GET', '/sync/report-data', roles('apikey'), scope.global, noInput,
    reportData, { summary: 'ZIP of report data for server-to-server pull (API key only)' }),
  route('GET', '/sync', anyUser(), scope.schoolsOfCaller, noInput,
    legacySync, { summary: 'curriculum sync ZIP (syncfile.ini)' }),
  route('GET', '/sync/content', anyUser(), scope.schoolsOfCaller, noInput,
    contentDownload, { summary: 'download curriculum content ZIP (syncfile.ini, content v2)' }),
  // Global by decision: the package goes server to server to the configured classroom server, which serves
  // every school on it and replaces its schools with the package's; the caller reads nothing of it.
  route('POST', '/sync/cloud', roles('admin', 'superadmin'), scope.global, noInput,
    pushContent, { summary: 'build curriculum ZIP and PUT it to classroom /import/master' }),
  route('POST', '/sync/cloud/:schoolname/students', roles('admin', 'superadmin'), scope.schoolsOfCaller, schoolParams,
    pushStudents, { summary: 'push school roster ZIP to classroom /import/students' }),
];
