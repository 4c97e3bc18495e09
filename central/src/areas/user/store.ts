import crypto from 'node:crypto';
import { takeover, type Knex } from '@lms/db';
import { ROLE_IDS, httpError } from '@lms/shared';
import { z } from 'zod';
import { hashPassword } from '../../auth/passwords';
import { revokeAll } from '../../auth/tokens';
import { checkEmail, checkPassword, requiredString, strictBody } from '../../auth/validation';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';

/** The account the migrations seed; it can be neither deleted nor lose its last way in. */
export const SEEDED_SUPERADMIN = 'superadmin@superadmin.com';

const idList = z.array(z.string());
// Every token of the account carries its schools and countries: a longer list makes it too large for a request header.
const narrowingList = idList.max(takeover.MAX_NARROWING_IDS, {
  error: `at most ${takeover.MAX_NARROWING_IDS} ids; narrow by country instead`,
});

export const createUserBody = strictBody({
  lmsusername: requiredString,
  lmsuserpasswordhash: requiredString,
  lmsuserroles: z.array(z.string(), { error: 'is required' }),
  countryids: narrowingList.optional(),
  schoolids: narrowingList.optional(),
}).superRefine((b, ctx) => {
  checkEmail(b.lmsusername, ctx);
  checkPassword(b.lmsuserpasswordhash, ctx);
  if (b.lmsuserroles.length < 1)
    ctx.addIssue({ code: 'custom', message: 'The user must have at least 1 role', path: [] });
});

// The admin UI sends the create form again on edit; an empty password means "keep the current one".
export const updateUserBody = z
  .looseObject({
    lmsusername: z.string().optional(),
    lmsuserpasswordhash: z.union([z.string(), z.null()]).optional(),
    lmsuserroles: idList.optional(),
    countryids: z.union([narrowingList, z.null()]).optional(),
    schoolids: z.union([narrowingList, z.null()]).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.lmsusername !== undefined) checkEmail(b.lmsusername, ctx);
    if (b.lmsuserpasswordhash) checkPassword(b.lmsuserpasswordhash, ctx);
    if (b.lmsuserroles && b.lmsuserroles.length < 1)
      ctx.addIssue({ code: 'custom', message: 'The user must have at least 1 role', path: [] });
  });

export const userParams = z.object({ lmsuserid: z.string().uuid({ error: 'must be a valid GUID' }) });

const PUBLIC_COLUMNS = [
  'lmsuserid',
  'lmsusername',
  'firstname',
  'lastname',
  'lmsuserrole',
  'isverified',
  'isdisabled',
  'countries',
  'schools',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
  'deleted_at',
  'deleted_by',
  'type',
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

/** Whether an edit gives an account other schools or countries than it has (order and repeats aside). */
function narrowingChanged(
  stored: { schools: unknown; countries: unknown },
  body: { schoolids?: unknown; countryids?: unknown },
): boolean {
  const list = (v: unknown): string => {
    let x = v;
    if (typeof v === 'string') {
      try { x = JSON.parse(v); } catch { x = []; }
    }
    return JSON.stringify([...new Set(Array.isArray(x) ? x.map(String) : [])].sort());
  };
  return (body.schoolids !== undefined && list(body.schoolids) !== list(stored.schools))
    || (body.countryids !== undefined && list(body.countryids) !== list(stored.countries));
}

export async function updateUser(db: Knex, lmsuserid: string, body: z.infer<typeof updateUserBody>, by: string | null) {
  const stored = (await db('lmsusers').where({ lmsuserid }).first('schools', 'countries')) as
    { schools: unknown; countries: unknown } | undefined;
  if (!stored || !(await userRow(db, lmsuserid))) throw httpError(400, 'Invalid user id');
  if (body.lmsusername && (await usernameTaken(db, body.lmsusername, lmsuserid)))
    throw httpError(400, 'user email already exists');
  const roleids = body.lmsuserroles ? await checkRoles(db, body.lmsuserroles) : undefined;
  const hash = body.lmsuserpasswordhash ? await hashPassword(body.lmsuserpasswordhash) : undefined;
  await db.transaction(async (trx) => {
    const patch: Record<string, unknown> = { updated_at: new Date().toISOString(), updated_by: by };
    if (body.lmsusername) patch.lmsusername = body.lmsusername;
    if (hash) patch.lmsuserpasswordhash = hash;
    if (body.countryids !== undefined) patch.countries = JSON.stringify(body.countryids ?? []);
    if (body.schoolids !== undefined) patch.schools = JSON.stringify(body.schoolids ?? []);
    await trx('lmsusers').where({ lmsuserid }).update(patch);
    // A token carries the schools and countries it was signed with: a changed narrowing ends every session,
    // as a role or password change does, on every instance (revokeAll's rows and announcement).
    if (roleids) await replaceRoles(trx, lmsuserid, roleids);
    else if (hash || narrowingChanged(stored, body)) await revokeAll(trx, lmsuserid);
  });
  return userRow(db, lmsuserid);
}

/** Disables the account, removes its roles and ends its sessions; the row stays for the audit columns. */
export async function disableUser(db: Knex, lmsuserid: string, by: string): Promise<string> {
  const user = await userRow(db, lmsuserid);
  if (!user) throw httpError(400, 'Invalid user id');
  if (user.lmsusername === SEEDED_SUPERADMIN) throw httpError(400, 'Could not delete superadmin');
  await db.transaction(async (trx) => {
    await trx('lmsusers')
      .where({ lmsuserid })
      .update({ isdisabled: true, deleted_at: new Date().toISOString(), deleted_by: by });
    await replaceRoles(trx, lmsuserid, []);
  });
  return 'User is deleted successfully!';
}

export const userListBody = pagingBody(['lmsusername']);

/** The staff accounts page; `accounts` narrows it to those ids (a narrowed caller's, see scope.staffOfCaller). */
export async function listUsers(db: Knex, body: Paging, accounts?: readonly string[]) {
  const base = db('lmsusers').where({ isdisabled: false });
  if (accounts) base.whereIn('lmsuserid', [...accounts]);
  applyFilters(base, body, (k) => k);
  const page = await pageRows(base, body, 'lmsusername', PUBLIC_COLUMNS);
  const users = page.data as Array<{ lmsuserid: string }>;
  const links = users.length
    ? await db('lmsusers_roles as ur')
        .join('roles as r', 'r.roleid', 'ur.roleid')
        .whereIn(
          'ur.lmsuserid',
          users.map((u: { lmsuserid: string }) => u.lmsuserid),
        )
        .orderBy('r.rolename')
        .select('ur.lmsuserid', 'r.rolename')
    : [];
  const data = users.map((u: { lmsuserid: string }) => {
    const roles = links
      .filter((l: { lmsuserid: string }) => l.lmsuserid === u.lmsuserid)
      .map((l: { rolename: string }) => ({ rolename: l.rolename }));
    return { ...u, roles, formattedroles: roles.map((r: { rolename: string }) => r.rolename).join(', ') };
  });
  return { ...page, data };
}

/** The edit form: the account with its roles and their permissions, and every role with `checked` when held. */
export async function getUser(db: Knex, lmsuserid: string) {
  const user = await userRow(db, lmsuserid);
  if (!user) return null;
  const held = await db('lmsusers_roles as ur')
    .join('roles as r', 'r.roleid', 'ur.roleid')
    .where('ur.lmsuserid', lmsuserid)
    .select('r.roleid', 'r.rolename');
  const perms = held.length
    ? await db('roles_permissions as rp')
        .join('permissions as p', 'p.permissionid', 'rp.permissionid')
        .whereIn(
          'rp.roleid',
          held.map((h: { roleid: string }) => h.roleid),
        )
        .select('rp.roleid', 'p.permissionid', 'p.permissionname')
    : [];
  const all = await db('roles').orderBy('rolename').select('roleid', 'rolename');
  const heldIds = new Set(held.map((h: { roleid: string }) => h.roleid));
  return {
    user: {
      ...user,
      roles: held.map((h: { roleid: string; rolename: string }) => ({
        roleid: h.roleid,
        rolename: h.rolename,
        permissions: perms
          .filter((p: { roleid: string }) => p.roleid === h.roleid)
          .map((p: { permissionid: string; permissionname: string }) => ({
            permissionid: p.permissionid,
            permissionname: p.permissionname,
          })),
      })),
    },
    roles: all.map((r: { roleid: string; rolename: string }) => ({
      id: r.roleid,
      text: r.rolename,
      checked: heldIds.has(r.roleid),
    })),
  };
}
