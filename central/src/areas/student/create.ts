import type { HandlerContext } from '@lms/shared';
import { writeStudentsZip, streamToBuffer } from '@lms/shared';
import type { Caller } from '../../http/types';
import { configOf, depsOf } from '../../http/context';
import { createStudents, pushRoster, type CreatedLearner } from './store';

/** POST /student/create: learners and their school users in one transaction; `?cloud=true` also pushes them to the classroom server. */
export async function createStudentsHandler({ req, caller, body, query }: HandlerContext<Caller>) {
  const config = configOf(req);
  const push = query.cloud === 'true'
    ? async (created: CreatedLearner[]) => {
        const studentusers = created.map((c) => ({ ...c.schooluser, student: { ...c.student, curriculumids: JSON.parse(String(c.student.curriculumids)) } }));
        await pushRoster(config, '/import/students', await streamToBuffer(writeStudentsZip({ studentusers })));
      }
    : undefined;
  return createStudents(depsOf(req).db, body, query.online !== 'false', caller.kind === 'staff' ? caller.lmsuserid : null, push);
}
