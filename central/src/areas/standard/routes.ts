import { noInput, perms, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { depsOf } from '../../http/context';
import { allStandards, allStandardsQuery, copySchoollessStandards, removeUnusedStandards } from './store';

export const standardRoutes: CentralRoute[] = [
  route('GET', '/standard/all', roles('apikey', 'superadmin', 'admin', 'teacher'), { query: allStandardsQuery }, ({ req, query }) => allStandards(depsOf(req).db, query), { summary: 'unpaged class list (report filter feed; query standardname, schoolname)' }),
  route('POST', '/standard/create', perms('create_standard'), noInput, pending, { summary: 'create class (standard)' }),
  route('DELETE', '/standard/:standardid', perms('delete_standard'), noInput, pending, { summary: 'soft-delete class (standard) (isdeleted flag)' }),
  route('GET', '/standard/:standardid', perms('view_standard'), noInput, pending, { summary: 'get one class (standard) by id' }),
  route('PUT', '/standard/:standardid', perms('update_standard'), noInput, pending, { summary: 'update class (standard)' }),
  route('POST', '/standard', perms('view_standard'), noInput, pending, { summary: 'paged list of class (standard) (pageindex/pagesize/filter)' }),
  route('POST', '/standard/migrate-standardid', roles('superadmin'), noInput, ({ req, caller }) => copySchoollessStandards(depsOf(req).db, caller.kind === 'staff' ? caller.lmsuserid : null), { summary: 'data migration: class ids' }),
  route('POST', '/standard/remove-standardid', roles('superadmin'), noInput, ({ req }) => removeUnusedStandards(depsOf(req).db), { summary: 'data migration: remove obsolete class rows' }),
  route('GET', '/standard/school/:schoolid', perms('view_standard'), noInput, pending, { summary: 'classes of a school' }),
];
