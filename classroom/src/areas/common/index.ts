import { z } from 'zod';
import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import type { Caller } from '../../http/types';
import { userOf } from '../../auth/guards';

export const uuid = z.string().uuid();
export const idParams = <K extends string>(key: K, message = `Invalid ${key}`) =>
  z.object({ [key]: z.string().uuid({ message }) } as Record<K, z.ZodString>);

/** Optional query strings: an array or object given by a client counts as absent. */
export const queryText = z.preprocess((v) => (typeof v === 'string' ? v : undefined), z.string().max(300).optional());

/** A point in time sent as epoch milliseconds (number or digits) or an ISO string. */
export const instant = z.union([z.number(), z.string().max(40)]).transform((v, ctx) => {
  const d = typeof v === 'number' || /^\d+$/.test(v) ? new Date(Number(v)) : new Date(v);
  if (Number.isNaN(d.getTime())) {
    ctx.addIssue({ code: 'custom', message: 'is not a valid date' });
    return z.NEVER;
  }
  return d;
});

export const round2 = (n: number): number => Math.round(n * 100) / 100;

export interface Learner {
  studentid: string;
  schooluserid: string;
  curriculumid: string;
  curriculumids: string[];
  schoolname: string | null;
  standard: string | null;
}

/**
 * The caller's students row (learners, and teacher accounts that have one), looked up fresh rather than trusted from
 * claims.
 */
export async function learnerOf(db: Knex, caller: Caller): Promise<Learner | undefined> {
  const user = userOf(caller);
  const row = await db('students').where('schooluserid', user.schooluserid).first();
  if (!row) return undefined;
  return {
    studentid: row.studentid,
    schooluserid: row.schooluserid,
    curriculumid: row.curriculumid,
    curriculumids: Array.isArray(row.curriculumids) ? row.curriculumids : row.curriculumid ? [row.curriculumid] : [],
    schoolname: row.schoolname,
    standard: row.standard,
  };
}

export async function requireLearner(db: Knex, caller: Caller): Promise<Learner> {
  const l = await learnerOf(db, caller);
  if (!l) throw httpError(400, 'Invalid student id');
  return l;
}

/** The school the caller belongs to: the students row's school first, then the account's. */
export async function schoolnameOf(db: Knex, caller: Caller): Promise<string> {
  const user = userOf(caller);
  const l = await learnerOf(db, caller);
  if (l?.schoolname) return l.schoolname;
  const u = await db('schoolusers').where('schooluserid', user.schooluserid).first('schoolname');
  return (u?.schoolname as string | null) ?? '';
}

/**
 * Which school's people and activity a caller may read. One server may hold many schools (a cloud classroom
 * server that central pushes every school to), so every school user, whatever the role, is held to their
 * own school; only the central API's sync key reads across schools. `undefined` means every school.
 */
export async function schoolScopeOf(db: Knex, caller: Caller): Promise<string | undefined> {
  return caller.kind === 'user' ? schoolnameOf(db, caller) : undefined;
}

/** Learners of the school (every learner when the scope is every school), as a subquery of student ids. */
export function studentsInScope(db: Knex, school: string | undefined): Knex.QueryBuilder {
  const q = db('students').select('studentid');
  return school === undefined ? q : q.whereRaw('lower(schoolname) = ?', [school.toLowerCase()]);
}

/** School users of the school, as a subquery of their ids. */
export function usersInScope(db: Knex, school: string | undefined): Knex.QueryBuilder {
  const q = db('schoolusers').select('schooluserid');
  return school === undefined ? q : q.whereRaw('lower(schoolname) = ?', [school.toLowerCase()]);
}

/**
 * Whether the server's own log files may go to a caller of this scope: they record every school's
 * sign-ins and exports, so only when the server holds no other school's people.
 */
export async function serverLogsInScope(db: Knex, school: string | undefined): Promise<boolean> {
  if (school === undefined) return true;
  const other = await db('schoolusers')
    .whereRaw('lower(coalesce(schoolname, ?)) <> ?', ['', school.toLowerCase()]).first('schooluserid');
  return !other;
}

export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/**
 * What the learner app shows as a lesson's heading: the first run of digits in its name ("Lesson 3: Adding" gives
 * "3"), else the whole name. A string either way, as the existing server derives it for every lesson row it sends.
 */
export const lessonHeading = (lessonname: unknown): string => {
  const name = typeof lessonname === 'string' ? lessonname : String(lessonname ?? '');
  return /[0-9]+/.exec(name)?.[0] ?? name;
};

/** A lesson row as the app receives it: with its heading. */
export const withLessonHeading = <T extends { lessonname?: unknown }>(lesson: T): T & { lessonheading: string } =>
  ({ ...lesson, lessonheading: lessonHeading(lesson.lessonname) });

/** File facts the app resolves media by (the bytes come from a CDN or a device folder, never from this API). */
export function fileObject(documentname: string | null | undefined) {
  const filename = documentname ?? '';
  const fileext = filename.includes('.') ? filename.slice(filename.lastIndexOf('.') + 1).toLowerCase() : '';
  const filetype =
    fileext === 'mp3' ? 1 : fileext === 'mp4' ? 2 : ['jpg', 'jpeg', 'png', 'gif'].includes(fileext) ? 6 : 0;
  return { filename, filetype, fileext };
}
