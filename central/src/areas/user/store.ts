import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { ROLE_IDS, httpError } from '@lms/shared';
import { z } from 'zod';
import { hashPassword } from '../../auth/passwords';
import { revokeAll } from '../../auth/tokens';
import { checkEmail, checkPassword, requiredString, strictBody } from '../../auth/validation';

/** The account the migrations seed; it can be neither deleted nor lose its last way in. */
export const SEEDED_SUPERADMIN = 'superadmin@superadmin.com';

const idList = z.array(z.string());

export const createUserBody = strictBody({
  lmsusername: requiredString,
  lmsuserpasswordhash: requiredString,
  lmsuserroles: z.array(z.string(), { error: 'is required' }),
  countryids: idList.optional(),
  schoolids: idList.optional(),
}).superRefine((b, ctx) => {
  checkEmail(b.lmsusername, ctx);
  checkPassword(b.lmsuserpasswordhash, ctx);
  if (b.lmsuserroles.length < 1) ctx.addIssue({ code: 'custom', message: 'The user must have at least 1 role', path: [] });
});

// The admin UI sends the create form again on edit; an empty password means "keep the current one".
export const updateUserBody = z.looseObject({
  lmsusername: z.string().optional(),
  lmsuserpasswordhash: z.union([z.string(), z.null()]).optional(),
  lmsuserroles: idList.optional(),
  countryids: z.union([idList, z.null()]).optional(),
  schoolids: z.union([idList, z.null()]).optional(),
}).superRefine((b, ctx) => {
  if (b.lmsusername !== undefined) checkEmail(b.lmsusername, ctx);
  if (b.lmsuserpasswordhash) checkPassword(b.lmsuserpasswordhash, ctx);
  if (b.lmsuserroles && b.lmsuserroles.length < 1) ctx.addIssue({ code: 'custom', message: 'The user must have at least 1 role', path: [] });
});

export const userParams = z.object({ lmsuserid: z.string().uuid({ error: 'must be a valid GUID' }) });

const PUBLIC_COLUMNS = [
  'lmsuserid', 'lmsusername', 'firstname', 'lastname', 'lmsuserrole', 'isverified', 'isdisabled', 'countries', 'schools',
  'created_at', 'created_by', 'updated_at', 'updated_by', 'type',
] as const;

/** Never a password hash (nor the old verify/reset keys) in an answer. */
export async function userRow(db: Knex, lmsuserid: string) {
  return db('lmsusers').where({ lmsuserid }).first(...PUBLIC_COLUMNS);
}

async function checkRoles(db: Knex, roleids: string[]): Promise<string[]> {
  const unique = [...new Set(roleids)];
  const found = await db('roles').whereIn('roleid', unique).select('roleid');
  if (found.length !== unique.length) throw httpError(400, 'Invalid role id');
  return unique;
}

async function usernameTaken(db: Knex, lmsusername: string, except?: string): Promise<boolean> {
  const q = db('lmsusers').whereRaw('lower(lmsusername) = ?', [lmsusername.toLowerCase()]);
  if (except) q.whereNot('lmsuserid', except);
  return !!(await q.first('lmsuserid'));
}

/** Replaces the role set of an account, and signs it out everywhere: its tokens carry the old permissions. */
export async function replaceRoles(trx: Knex, lmsuserid: string, roleids: string[]): Promise<void> {
  await trx('lmsusers_roles').where({ lmsuserid }).del();
  if (roleids.length) await trx('lmsusers_roles').insert(roleids.map((roleid) => ({ lmsuserid, roleid })));
  await revokeAll(trx, lmsuserid);
}

export async function createUser(db: Knex, body: z.infer<typeof createUserBody>, by: string | null) {
  if (await usernameTaken(db, body.lmsusername)) throw httpError(400, 'user email already exists');
  const roleids = await checkRoles(db, body.lmsuserroles);
  const lmsuserid = crypto.randomUUID();
  const hash = await hashPassword(body.lmsuserpasswordhash);
  await db.transaction(async (trx) => {
    await trx('lmsusers').insert({
      lmsuserid,
      lmsusername: body.lmsusername,
      lmsuserpasswordhash: hash,
      firstname: '',
      // Legacy column: always the superadmin roleid; it authorizes nothing (roles come from lmsusers_roles).
      lmsuserrole: ROLE_IDS.superadmin,
      isverified: true,
      isdisabled: false,
      countries: JSON.stringify(body.countryids ?? []),
      schools: JSON.stringify(body.schoolids ?? []),
      created_by: by,
    });
    await trx('lmsusers_roles').insert(roleids.map((roleid) => ({ lmsuserid, roleid })));
  });
  return userRow(db, lmsuserid);
}

export async function updateUser(db: Knex, lmsuserid: string, body: z.infer<typeof updateUserBody>, by: string | null) {
  if (!(await userRow(db, lmsuserid))) throw httpError(400, 'Invalid user id');
  if (body.lmsusername && (await usernameTaken(db, body.lmsusername, lmsuserid))) throw httpError(400, 'user email already exists');
  const roleids = body.lmsuserroles ? await checkRoles(db, body.lmsuserroles) : undefined;
  const hash = body.lmsuserpasswordhash ? await hashPassword(body.lmsuserpasswordhash) : undefined;
  await db.transaction(async (trx) => {
    const patch: Record<string, unknown> = { updated_at: new Date().toISOString(), updated_by: by };
    if (body.lmsusername) patch.lmsusername = body.lmsusername;
    if (hash) patch.lmsuserpasswordhash = hash;
    if (body.countryids !== undefined) patch.countries = JSON.stringify(body.countryids ?? []);
    if (body.schoolids !== undefined) patch.schools = JSON.stringify(body.schoolids ?? []);
    await trx('lmsusers').where({ lmsuserid }).update(patch);
    if (roleids) await replaceRoles(trx, lmsuserid, roleids);
    else if (hash) await revokeAll(trx, lmsuserid);
  });
  return userRow(db, lmsuserid);
}

/** Disables the account, removes its roles and ends its sessions; the row stays for the audit columns. */
export async function disableUser(db: Knex, lmsuserid: string, by: string): Promise<string> {
  const user = await userRow(db, lmsuserid);
  if (!user) throw httpError(400, 'Invalid user id');
  if (user.lmsusername === SEEDED_SUPERADMIN) throw httpError(400, 'Could not delete superadmin');
  await db.transaction(async (trx) => {
    await trx('lmsusers').where({ lmsuserid }).update({ isdisabled: true, deleted_at: new Date().toISOString(), deleted_by: by });
    await replaceRoles(trx, lmsuserid, []);
  });
  return 'User is deleted successfully!';
}

// ---- Paged list (IPaging) --------------------------------------------------------------------------

export function pagingBody(keys: readonly [string, ...string[]]) {
  return z
    .strictObject(
      {
        pageindex: z.number({ error: 'must be a number' }).optional(),
        pagesize: z.number({ error: 'must be a number' }).int().min(0).max(200, { error: 'must be less than or equal to 200' }).optional(),
        filter: z
          .array(z.object({ key: z.enum(keys, { error: `must be one of [${keys.join(', ')}]` }), value: z.union([z.string(), z.array(z.string()), z.null()]).optional() }))
          .optional(),
      },
      { error: (iss) => (iss.code === 'unrecognized_keys' ? `"${iss.keys[0]}" is not allowed` : undefined) },
    )
    .superRefine((b, ctx) => {
      if (b.pageindex !== undefined && (!Number.isInteger(b.pageindex) || b.pageindex < 0)) ctx.addIssue({ code: 'custom', message: 'Invalid page index', path: [] });
      if ((b.filter?.length ?? 0) > 5) ctx.addIssue({ code: 'custom', message: 'Invalid filter', path: [] });
    });
}
export type Paging = { pageindex?: number; pagesize?: number; filter?: Array<{ key: string; value?: string | string[] | null }> };

/** IPaging filters: every comma part must match (AND); `"true"`/`"false"` match a boolean; arrays are ANY when `any`. */
export function applyFilters(q: Knex.QueryBuilder, body: Paging, column: (key: string) => string, any = false): void {
  for (const f of body.filter ?? []) {
    const col = column(f.key);
    if (Array.isArray(f.value)) {
      const values = f.value.filter(Boolean);
      if (values.length) q.where((w) => { for (const v of values) (any ? w.orWhere(col, 'like', `%${v}%`) : w.where(col, 'like', `%${v}%`)); });
      continue;
    }
    const value = f.value ?? '';
    if (value === '') continue;
    if (value === 'true' || value === 'false') q.where(col, value === 'true');
    else for (const part of value.split(',')) q.where(col, 'like', `%${part.trim()}%`);
  }
}

export function pageOf(body: Paging): { limit: number; offset: number } {
  const size = body.pagesize || 20;
  const index = body.pageindex ?? 0;
  return { limit: size, offset: index > 1 ? size * (index - 1) : 0 };
}

/** One page of `base` (its filters applied) in `order`, as the paged-list envelope: rows, total, the page asked for. */
export async function pageRows(base: Knex.QueryBuilder, body: Paging, order: string, columns: readonly string[] = []) {
  const total = Number((await base.clone().count({ n: '*' }).first())?.n ?? 0);
  const { limit, offset } = pageOf(body);
  const data = (await base.clone().orderBy(order).limit(limit).offset(offset).select(...columns)) as Array<Record<string, unknown>>;
  return { data, total, pageindex: body.pageindex ?? 0, pagesize: body.pagesize ?? 0 };
}

export const userListBody = pagingBody(['lmsusername']);

export async function listUsers(db: Knex, body: Paging) {
  const base = db('lmsusers').where({ isdisabled: false });
  applyFilters(base, body, (k) => k);
  const page = await pageRows(base, body, 'lmsusername', PUBLIC_COLUMNS);
  const users = page.data as Array<{ lmsuserid: string }>;
  const links = users.length
    ? await db('lmsusers_roles as ur').join('roles as r', 'r.roleid', 'ur.roleid').whereIn('ur.lmsuserid', users.map((u: { lmsuserid: string }) => u.lmsuserid)).orderBy('r.rolename').select('ur.lmsuserid', 'r.rolename')
    : [];
  const data = users.map((u: { lmsuserid: string }) => {
    const roles = links.filter((l: { lmsuserid: string }) => l.lmsuserid === u.lmsuserid).map((l: { rolename: string }) => ({ rolename: l.rolename }));
    return { ...u, roles, formattedroles: roles.map((r: { rolename: string }) => r.rolename).join(', ') };
  });
  return { ...page, data };
}

/** The edit form: the account with its roles and their permissions, and every role with `checked` when held. */
export async function getUser(db: Knex, lmsuserid: string) {
  const user = await userRow(db, lmsuserid);
  if (!user) return null;
  const held = await db('lmsusers_roles as ur').join('roles as r', 'r.roleid', 'ur.roleid').where('ur.lmsuserid', lmsuserid).select('r.roleid', 'r.rolename');
  const perms = held.length
    ? await db('roles_permissions as rp').join('permissions as p', 'p.permissionid', 'rp.permissionid').whereIn('rp.roleid', held.map((h: { roleid: string }) => h.roleid)).select('rp.roleid', 'p.permissionid', 'p.permissionname')
    : [];
  const all = await db('roles').orderBy('rolename').select('roleid', 'rolename');
  const heldIds = new Set(held.map((h: { roleid: string }) => h.roleid));
  return {
    user: {
      ...user,
      roles: held.map((h: { roleid: string; rolename: string }) => ({
        roleid: h.roleid,
        rolename: h.rolename,
        permissions: perms.filter((p: { roleid: string }) => p.roleid === h.roleid).map((p: { permissionid: string; permissionname: string }) => ({ permissionid: p.permissionid, permissionname: p.permissionname })),
      })),
    },
    roles: all.map((r: { roleid: string; rolename: string }) => ({ id: r.roleid, text: r.rolename, checked: heldIds.has(r.roleid) })),
  };
}
