import { scopedRoutes } from '@lms/shared';
import type { Caller, CentralTools, Scope } from './types';

/**
 * A central route: method, path, gate, scope rule, input schemas, handler, options. The handler's
 * context is typed by the schemas and carries the tools (`db`, `config`, `objects`, `logger`), the caller,
 * the resolved scope and the request's `log`:
 *
 *   route('GET', '/grade/:gradeid', perms('view_grade'), scope.curriculaOfCaller, { params: gradeParams },
 *     ({ db, scope, params }) => getGrade(db, params.gradeid, scopedCurricula(scope))),
 */
export const route = scopedRoutes<Caller, Scope, CentralTools>();
