import { z } from 'zod';
import { anyUser, httpError } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { isStaffRole, userOf } from '../../auth/guards';
import { instant } from '../common';
import { addUsage, usages } from './store';

const usageBody = z.object({ starttime: instant, endtime: instant });
// One session of app use; a longer span is a clock error on the device, not usage.
const MAX_SESSION_MS = 24 * 3600_000;

export const accessRoutes: ClassroomRoute[] = [
  route('POST', '/access', anyUser(), { body: usageBody }, async ({ db, caller, body }) => {
    const span = body.endtime.getTime() - body.starttime.getTime();
    if (span < 0) throw httpError(400, '"endtime" must not be before "starttime"');
    if (span > MAX_SESSION_MS) throw httpError(400, 'A usage span cannot exceed 24 hours');
    await addUsage(db, userOf(caller).schooluserid, body.starttime, body.endtime);
    return 'Update Access successfully';
  }, { summary: "Adds app-usage time to the caller's day" }),
  route('GET', '/access', anyUser(), {}, ({ db, caller }) => {
    const user = userOf(caller);
    // The original listed every learner's usage to anyone; a learner now sees only their own.
    return usages(db, isStaffRole(user.schooluserrole) ? undefined : user.schooluserid);
  }, { summary: 'App-usage rows (staff: all; learners: their own)' }),
];
