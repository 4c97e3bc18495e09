import { z } from 'zod';
import { anyUser, httpError, noInput, roles, route, writeStudentsZip, type HandlerContext } from '@lms/shared';
import { depsOf } from '../../http/context';
import type { Caller, CentralRoute } from '../../http/types';
import { pushFile, pushPackage, sendZip } from './push';
import { contentPackage, legacyContentPackage, onSnapshot, packageToTempFile, reportDataPackage, schoolRoster } from './store';

type Ctx = HandlerContext<Caller>;

/** Where every curriculum download is saved by the apps (the name is part of the contract). */
const SYNC_ZIP = 'sync-data.zip';

async function reportData({ req, res }: Ctx): Promise<void> {
  await sendZip(res, SYNC_ZIP, reportDataPackage(depsOf(req).db));
}

async function legacySync({ req, res }: Ctx): Promise<void> {
  await sendZip(res, SYNC_ZIP, legacyContentPackage(depsOf(req).db));
}

async function contentDownload({ req, res }: Ctx): Promise<void> {
  await sendZip(res, SYNC_ZIP, contentPackage(depsOf(req).db));
}

async function pushContent({ req }: Ctx): Promise<unknown> {
  const file = await onSnapshot(depsOf(req).db, (q) => packageToTempFile(contentPackage(q)));
  return pushFile(req, 'master', file);
}

const schoolParams = { params: z.object({ schoolname: z.string().trim().min(1, 'School name is required').max(250) }) };

async function pushStudents({ req, params }: Ctx): Promise<unknown> {
  // Hashes travel here, and only here: the classroom must verify the learners' own passwords offline.
  const studentusers = await schoolRoster(depsOf(req).db, params.schoolname, { teacherAccounts: true, hash: true });
  if (studentusers.length === 0) throw httpError(400, 'No student available');
  return pushPackage(req, 'students', writeStudentsZip({ studentusers }));
}

export const syncRoutes: CentralRoute[] = [
  route('GET', '/sync/report-data', roles('apikey'), noInput, reportData, { summary: 'ZIP of report data for server-to-server pull (API key only)' }),
  route('GET', '/sync', anyUser(), noInput, legacySync, { summary: 'curriculum sync ZIP (syncfile.ini)' }),
  route('GET', '/sync/content', anyUser(), noInput, contentDownload, { summary: 'download curriculum content ZIP (syncfile.ini, content v2)' }),
  route('POST', '/sync/cloud', roles('admin', 'superadmin'), noInput, pushContent, { summary: 'build curriculum ZIP and PUT it to classroom /import/master' }),
  route('POST', '/sync/cloud/:schoolname/students', roles('admin', 'superadmin'), schoolParams, pushStudents, { summary: 'push school roster ZIP to classroom /import/students' }),
];
