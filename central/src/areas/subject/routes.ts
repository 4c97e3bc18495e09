import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  createSubject,
  deleteSubject,
  getSubject,
  listSubjects,
  subjectBody,
  subjectListBody,
  subjectParams,
  updateSubject,
} from './store';

export const subjectRoutes: CentralRoute[] = [
  route('POST', '/subject/create', perms('create_subject'), scope.global, { body: subjectBody },
    ({ db, body, caller }) => createSubject(db, body, actorOf(caller)), { summary: 'create subject' }),
  route('POST', '/subject', perms('view_subject'), scope.global, { body: subjectListBody },
    ({ db, body }) => listSubjects(db, body), { summary: 'paged list of subject (pageindex/pagesize/filter)' }),
  route('DELETE', '/subject/:subjectid', perms('delete_subject'), scope.global, { params: subjectParams },
    ({ db, params, caller }) => deleteSubject(db, params.subjectid, actorOf(caller)),
    { summary: 'soft-delete subject (isdeleted flag)' }),
  route('GET', '/subject/:subjectid', perms('view_subject'), scope.global, { params: subjectParams },
    ({ db, params }) => getSubject(db, params.subjectid), { summary: 'get one subject by id' }),
  route('PUT', '/subject/:subjectid', perms('update_subject'), scope.global,
    { params: subjectParams, body: subjectBody },
    ({ db, params, body, caller }) => updateSubject(db, params.subjectid, body, actorOf(caller)),
    { summary: 'update subject' }),
];
