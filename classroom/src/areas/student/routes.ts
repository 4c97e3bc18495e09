import { z } from 'zod';
import { anyOrSyncKey, anyUser, staff } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { learnerOf, queryText, requireLearner, schoolScopeOf } from '../common';
import { curriculumProgress } from '../curriculum/store';
import { lastLogins, progressSummary, searchStudents, setProfileImage } from './store';

// Anything but an array of ids means "no ids": the central API sends a bare JSON array.
const idList = z
  .unknown()
  .transform((v) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length <= 45).slice(0, 5000) : [],
  );

export const studentRoutes: ClassroomRoute[] = [
  // Full learner rows (parents, contact, disability answers): staff only (decision 30); the learner app never calls it.
  route('GET', '/student/all', staff(), { query: z.object({ userid: queryText, schoolname: queryText }) },
    async ({ db, caller, query }) => searchStudents(db, query, await schoolScopeOf(db, caller)),
    { summary: 'Up to 20 learners by handle and school (staff)' }),
  route('POST', '/student/profile', anyUser(), { body: z.object({ filename: z.string().min(1).max(250) }) },
    async ({ db, caller, body }) => {
    const learner = await requireLearner(db, caller);
    await setProfileImage(db, learner.studentid, body.filename);
    return body.filename;
  },
    { summary: "Sets the caller's profile image name" }),
  route('GET', '/student/progress', anyUser(), {}, async ({ db, caller }) => {
    const learner = await learnerOf(db, caller);
    return learner ? curriculumProgress(db, learner.studentid, learner.curriculumid) : 0;
  }, { summary: "The caller's progress in their curriculum" }),
  route('GET', '/student/progress/summary', anyUser(), {},
    async ({ db, caller }) => progressSummary(db, await learnerOf(db, caller)),
    { summary: "The caller's lessons and levels completed per curriculum, and where to go on (learner app)" }),
  route('POST', '/student/logintime', anyOrSyncKey(), { body: idList },
    async ({ db, caller, body }) => lastLogins(db, body, await schoolScopeOf(db, caller)),
    { summary: 'Latest sign-in of each listed user (the central API calls it with the sync key)' }),
];
