import type { ClassroomRoute } from '../http/types';
import { accessRoutes } from './access/routes';
import { appRoutes } from './app/routes';
import { authRoutes } from './auth/routes';
import { curriculumRoutes } from './curriculum/routes';
import { gradeRoutes } from './grade/routes';
import { lessonRoutes } from './lesson/routes';
import { levelRoutes } from './level/routes';
import { questionRoutes } from './question/routes';
import { reportRoutes } from './report/routes';
import { resultRoutes } from './result/routes';
import { schoolRoutes } from './school/routes';
import { importRoutes } from './import/routes';
import { exportRoutes } from './export/routes';
import { studentRoutes } from './student/routes';
import { teacherRoutes } from './teacher/routes';
import { mediaRoutes } from './media/routes';
import { fleetRoutes } from './fleet/routes';

/** Every classroom route, in the order they are matched. */
export const classroomRoutes: ClassroomRoute[] = [
  ...appRoutes,
  ...authRoutes,
  ...accessRoutes,
  ...curriculumRoutes,
  ...exportRoutes,
  ...gradeRoutes,
  ...importRoutes,
  ...lessonRoutes,
  ...levelRoutes,
  ...questionRoutes,
  ...reportRoutes,
  ...resultRoutes,
  ...schoolRoutes,
  ...studentRoutes,
  ...teacherRoutes,
];

/** What the service mounts: the catalogue, then the routes beyond it (the lesson media files, the box's sync). */
export const serviceRoutes: ClassroomRoute[] = [...classroomRoutes, ...mediaRoutes, ...fleetRoutes];
