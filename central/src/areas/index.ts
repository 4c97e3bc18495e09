import { schoolcontributeRoutes } from './schoolcontribute/routes';
import { authRoutes } from './auth/routes';
import { subjectRoutes } from './subject/routes';
import { curriculumRoutes } from './curriculum/routes';
import { documenttagRoutes } from './documenttag/routes';
import { questiontagRoutes } from './questiontag/routes';
import { documentRoutes } from './document/routes';
import { baselinequestionRoutes } from './baselinequestion/routes';
import { questionRoutes } from './question/routes';
import { gradeRoutes } from './grade/routes';
import { levelquizquestionRoutes } from './levelquizquestion/routes';
import { levelRoutes } from './level/routes';
import { lessonRoutes } from './lesson/routes';
import { lessonlearningRoutes } from './lessonlearning/routes';
import { lessonpracticequestionRoutes } from './lessonpracticequestion/routes';
import { lessonpracticeRoutes } from './lessonpractice/routes';
import { lessonquizquestionRoutes } from './lessonquizquestion/routes';
import { lessonquizRoutes } from './lessonquiz/routes';
import { lessonplanRoutes } from './lessonplan/routes';
import { logRoutes } from './log/routes';
import { schoolRoutes } from './school/routes';
import { syncRoutes } from './sync/routes';
import { exportRoutes } from './export/routes';
import { importRoutes } from './import/routes';
import { studentRoutes } from './student/routes';
import { standardRoutes } from './standard/routes';
import { teacherRoutes } from './teacher/routes';
import { curriculumbaselineRoutes } from './curriculumbaseline/routes';
import { rolesRoutes } from './roles/routes';
import { countryRoutes } from './country/routes';
import { userRoutes } from './user/routes';
import { feedbackRoutes } from './feedback/routes';
import { reportRoutes } from './report/routes';
import { appRoutes } from './app/routes';
import { mediaRoutes } from './media/routes';
import { fleetRoutes } from './fleet/routes';
import type { CentralRoute } from '../http/types';

/** Every central route, in the order they are matched. */
export const centralRoutes: CentralRoute[] = [
  ...appRoutes,
  ...schoolcontributeRoutes,
  ...authRoutes,
  ...subjectRoutes,
  ...curriculumRoutes,
  ...documenttagRoutes,
  ...questiontagRoutes,
  ...documentRoutes,
  ...baselinequestionRoutes,
  ...questionRoutes,
  ...gradeRoutes,
  ...levelquizquestionRoutes,
  ...levelRoutes,
  ...lessonRoutes,
  ...lessonlearningRoutes,
  ...lessonpracticequestionRoutes,
  ...lessonpracticeRoutes,
  ...lessonquizquestionRoutes,
  ...lessonquizRoutes,
  ...lessonplanRoutes,
  ...logRoutes,
  ...schoolRoutes,
  ...syncRoutes,
  ...exportRoutes,
  ...importRoutes,
  ...studentRoutes,
  ...standardRoutes,
  ...teacherRoutes,
  ...curriculumbaselineRoutes,
  ...rolesRoutes,
  ...countryRoutes,
  ...userRoutes,
  ...feedbackRoutes,
  ...reportRoutes,
];

/**
 * What the service mounts: the catalogue, then the routes beyond it (the public media files and the
 * folder store's presigned uploads; the fleet's boxes), which the catalogue's counts leave out.
 */
export const serviceRoutes: CentralRoute[] = [...centralRoutes, ...mediaRoutes, ...fleetRoutes];
