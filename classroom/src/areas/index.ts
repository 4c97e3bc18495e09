import type { ClassroomRoute } from '../http/types';
import { appRoutes } from './app/routes';
import { schoolRoutes } from './school/routes';
import { importRoutes } from './import/routes';

/** Every classroom route, in the order they are matched. */
export const classroomRoutes: ClassroomRoute[] = [...appRoutes, ...schoolRoutes, ...importRoutes];
