import { unscopedRoutes } from '@lms/shared';
import type { Caller, ClassroomTools } from './types';

/**
 * A classroom route: method, path, gate, input schemas, handler, options. The handler's context is typed
 * by the schemas and carries the tools (`db`, `config`, `logger`), the caller and the request's `log`.
 */
export const route = unscopedRoutes<Caller, ClassroomTools>();
