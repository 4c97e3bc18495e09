import { roles } from '@lms/shared';

/** Every student route first requires one of these roles; the route's own gate comes on top. */
export const studentClassGuard = roles('apikey', 'superadmin', 'admin');
