import { z } from 'zod';
import { anyUser } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { idParams, learnerOf, queryText } from '../common';
import { levelsOfGrade, levelsProgress, library, searchLevels } from './store';

const gradeParams = idParams('gradeid', 'Invalid grade id');

export const levelRoutes: ClassroomRoute[] = [
  route('GET', '/level/all', anyUser(), { query: z.object({ gradeid: queryText, level: queryText }) },
    ({ db, query }) => searchLevels(db, query), { summary: 'Levels by grade and name' }),
  route('GET', '/level/library', anyUser(), {}, async ({ db, caller }) => library(db, await learnerOf(db, caller)),
    { summary: "Every curriculum, grade and level open to the caller, with progress (learner app's library)" }),
  route('GET', '/level/grade/:gradeid', anyUser(), { params: gradeParams }, async ({ db, caller, params }) => {
    return levelsOfGrade(db, params.gradeid, (await learnerOf(db, caller))?.studentid);
  }, { summary: "A grade's levels with the caller's progress" }),
  route('GET', '/level/progress/grade/:gradeid', anyUser(), { params: gradeParams }, async ({ db, caller, params }) => {
    return levelsProgress(db, params.gradeid, (await learnerOf(db, caller))?.studentid);
  }, { summary: "The caller's progress per level of a grade" }),
];
