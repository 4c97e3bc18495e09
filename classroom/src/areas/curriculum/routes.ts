import { z } from 'zod';
import { anyUser, httpError, syncKeyOrStaff } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { idParams, instant, learnerOf, queryText, schoolScopeOf } from '../common';
import {
  allCurriculums, baselineFor, baselineResults, curriculumById, curriculumMap, schoolAndLearner, searchCurriculums,
  subjectsOf,
} from './store';

const allQuery = z.object({ cur: queryText, studentid: queryText, standardid: queryText, schoolname: queryText });
const curriculumParams = idParams('curriculumid', 'Invalid Curriculum id');
const baselineParams = z.object({
  curriculumid: z.string().uuid({ message: 'Invalid Curriculum id' }),
  schoolname: z.string().min(1).max(300),
  studentid: z.string().uuid({ message: 'Invalid student id' }),
});
// The app sends {baselineDateTime}; only `date` is read, other keys are ignored as in the original.
const baselineBody = z.object({ date: instant.optional() }).passthrough();

export const curriculumRoutes: ClassroomRoute[] = [
  route('GET', '/curriculum', anyUser(), {}, ({ db }) => allCurriculums(db), { summary: 'All curriculums' }),
  route('GET', '/curriculum/all', anyUser(), { query: allQuery }, ({ db, query }) => searchCurriculums(db, query),
    { summary: 'Active curriculums by name, optionally those of one learner or class' }),
  route('GET', '/curriculum/subjects', anyUser(), {}, async ({ db, caller }) => {
    const learner = await learnerOf(db, caller);
    return subjectsOf(db, learner?.studentid, learner?.curriculumids ?? []);
  }, { summary: "The caller's curriculums with their progress" }),
  route('GET', '/curriculum/:curriculumid', anyUser(), { params: curriculumParams }, async ({ db, params }) => {
    const row = await curriculumById(db, params.curriculumid);
    if (!row) throw httpError(400, 'Invalid Curriculum id');
    return row;
  }, { summary: 'One curriculum' }),
  route('GET', '/curriculum/:curriculumid/map', anyUser(), { params: curriculumParams },
    async ({ db, caller, params }) => {
    const row = await curriculumById(db, params.curriculumid);
    if (!row) throw httpError(400, 'Invalid Curriculum id');
    return curriculumMap(db, row, (await learnerOf(db, caller))?.studentid);
  },
    { summary: "Curriculum tree with the caller's points" }),
  route('POST', '/curriculum/baseline/:curriculumid/:schoolname/:studentid', anyUser(),
    { params: baselineParams, body: baselineBody },
    async ({ db, caller, params, body }) => {
    const scope = await schoolScopeOf(db, caller);
    const { school, student } = await schoolAndLearner(db, scope, params.schoolname, params.studentid);
    if (!school || !(await curriculumById(db, params.curriculumid))) throw httpError(400, 'Invalid Curriculum id');
    return baselineFor(db, params.curriculumid, school.schoolid, student?.studentid, body.date ?? new Date());
  },
    { summary: 'The baseline/endline in force and whether the learner took it' }),
  route('GET', '/curriculum/:curriculumbaselineid/getstudentresult', syncKeyOrStaff(),
    { params: idParams('curriculumbaselineid', 'Invalid curriculum baseline id') },
    async ({ db, res, caller, params }) => {
      // A bare array without the envelope: the central baseline download reads it as such.
      res.json(await baselineResults(db, params.curriculumbaselineid, await schoolScopeOf(db, caller)));
    },
    { summary: 'Baseline results of every learner (bare array; staff or the sync key)' }),
];
