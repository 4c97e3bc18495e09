import { z } from 'zod';
import { publicGate } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { brandingOf } from './store';

const brandingQuery = z.object({ schoolname: z.string().max(300).optional().default('') });

export const schoolRoutes: ClassroomRoute[] = [
  route('GET', '/school/branding', publicGate(), { query: brandingQuery }, ({ db, query }) =>
    brandingOf(db, query.schoolname), { summary: "A school's UI theme and branding (defaults when unknown)" }),
];
