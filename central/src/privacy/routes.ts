import { httpError, roles } from '@lms/shared';
import { z } from 'zod';
import { route } from '../http/route';
import { scope } from '../http/scope';
import type { CentralCtx, CentralRoute } from '../http/types';
import { sendZip } from '../areas/sync/push';
import { eraseLearner, exportLearner, findLearner, learnerZip } from './learner';

const learnerParams = z.strictObject({ studentid: z.string().trim().min(1).max(36) });

async function learnerOr404(ctx: CentralCtx<{ params: typeof learnerParams }>) {
  const l = await findLearner(ctx.db, ctx.params.studentid);
  if (!l) throw httpError(404, 'Invalid student id');
  return l;
}

async function exportOne(ctx: CentralCtx<{ params: typeof learnerParams }>): Promise<void> {
  const l = await learnerOr404(ctx);
  const e = await exportLearner(ctx.db, ctx.objects, l);
  await sendZip(ctx.res, `learner-${l.studentid.replace(/[^A-Za-z0-9-]/g, '_')}.zip`, learnerZip(e));
}

async function eraseOne(ctx: CentralCtx<{ params: typeof learnerParams }>) {
  const l = await learnerOr404(ctx);
  const by = ctx.caller.kind === 'staff' ? ctx.caller.lmsuserid : null;
  const r = await eraseLearner(ctx.db, ctx.objects, l, { by, reason: 'request' });
  return { studentid: l.studentid, erased: r.erased };
}

// Superadmin only, whole organisation: answering a learner's (or parent's) request is the data-protection
// officer's act, not a school Admin's. Both are in the access record (access/routes-wrap.ts).
export const privacyRoutes: CentralRoute[] = [
  route('GET', '/privacy/learner/:studentid/export', roles('superadmin'), scope.wholeOrganisation,
    { params: learnerParams }, exportOne,
    { addition: true, summary: 'everything central holds about one learner, as a ZIP with a manifest' }),
  route('POST', '/privacy/learner/:studentid/erase', roles('superadmin'), scope.wholeOrganisation,
    { params: learnerParams }, eraseOne,
    { addition: true, summary: 'erases one learner\'s identity at central and, with the next roster, on boxes' }),
];
