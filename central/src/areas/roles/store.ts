import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { replaceRoles } from '../user/store';
import { revokeAll } from '../../auth/tokens';

const nonblank = z
  .string({ error: 'is required' })
  .min(1, { error: 'is not allowed to be empty' })
  .max(300, { error: 'length must be less than or equal to 300 characters long' })
  .refine((v) => v.trim().length > 0, { error: 'not allowed' });

export const roleBody = strictBody({
  rolename: nonblank,
  permissionsid: z.array(z.string(), { error: 'is required' }),
});
export const bindBody = strictBody({ lmsuserid: nonblank, rolesid: z.array(z.string(), { error: 'is required' }) });
export const roleParams = z.object({ roleid: z.string().min(1).max(36) });
export const roleListBody = pagingBody(['rolename']);

interface TitleRow {
  permissiontitleid: string;
  permissiontitle: string;
  permissiondesc: string;
  permissiontitleorder: number;
  type: number;
  parentid: string | null;
}
interface PermRow {
  permissionid: string;
  permissionname: string;
  permissiondesc: string | null;
  permissiontitleid: string | null;
  type: number;
}

async function titlesAndPermissions(db: Knex): Promise<{ titles: TitleRow[]; perms: PermRow[] }> {
  const titles = await db('permissionstitle')
    .orderBy('permissiontitleorder')
    .select('permissiontitleid', 'permissiontitle', 'permissiondesc', 'permissiontitleorder', 'type', 'parentid');
  const perms = await db('permissions')
    .orderBy('permissionname')
    .select('permissionid', 'permissionname', 'permissiondesc', 'permissiontitleid', 'type');
  return { titles, perms };
}

/** Every permission of a title and of its descendant titles (types 2 and 4 are parents in the original's tree). */
function underTitle(titleid: string, titles: TitleRow[], perms: PermRow[]): string[] {
  const ids = new Set([titleid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of titles)
      if (t.parentid && ids.has(t.parentid) && !ids.has(t.permissiontitleid)) {
        ids.add(t.permissiontitleid);
        grew = true;
      }
  }
  return perms.filter((p) => p.permissiontitleid && ids.has(p.permissiontitleid)).map((p) => p.permissionid);
}

interface Node { title: string; key: string; expanded?: boolean; children?: Node[]; isLeaf?: boolean }

/** The admin UI's permission tree: one node per top-level title, leaves are permissions, child titles nest. */
export async function permissionTree(db: Knex): Promise<Node[]> {
  const { titles, perms } = await titlesAndPermissions(db);
  const node = (t: TitleRow): Node => ({
    title: t.permissiondesc,
    key: `all_${t.permissiontitleid}`,
    expanded: false,
    children: [
      ...perms
        .filter((p) => p.permissiontitleid === t.permissiontitleid)
        .map((p) => ({ title: p.permissiondesc ?? p.permissionname, key: p.permissionid, isLeaf: true })),
      ...titles.filter((c) => c.parentid === t.permissiontitleid).map(node),
    ],
  });
  return titles.filter((t) => !t.parentid).map(node);
}

export async function permissionsByTitle(db: Knex) {
  const { titles, perms } = await titlesAndPermissions(db);
  return titles.map((t) => ({
    permissiontitleid: t.permissiontitleid,
    permissiontitle: t.permissiontitle,
    permissiondesc: t.permissiondesc,
    permissions: perms.filter((p) => p.permissiontitleid === t.permissiontitleid),
  }));
}

export async function getRole(db: Knex, roleid: string) {
  const role = await db('roles').where({ roleid }).first('roleid', 'rolename');
  const permissions = role
    ? await db('roles_permissions as rp')
        .join('permissions as p', 'p.permissionid', 'rp.permissionid')
        .leftJoin('permissionstitle as t', 't.permissiontitleid', 'p.permissiontitleid')
        .where('rp.roleid', roleid)
        .orderBy('p.permissionname')
        .select('p.permissionid', 'p.permissionname', 't.permissiontitleid', 't.permissiontitle')
    : [];
  return {
    role: role
      ? {
          ...role,
          permissions: permissions.map(
            (p: {
              permissionid: string;
              permissionname: string;
              permissiontitleid: string;
              permissiontitle: string;
            }) => ({
              permissionid: p.permissionid,
              permissionname: p.permissionname,
              permissionstitle: { permissiontitleid: p.permissiontitleid, permissiontitle: p.permissiontitle },
            }),
          ),
        }
      : null,
    selectedPerms: permissions.map((p: { permissionid: string }) => p.permissionid),
    permsNodes: await permissionTree(db),
  };
}

export async function allRoles(db: Knex) {
  const rows = await db('roles').orderBy('rolename').select('roleid', 'rolename');
  return rows.map((r: { roleid: string; rolename: string }) => ({ id: r.roleid, text: r.rolename, checked: false }));
}

export async function listRoles(db: Knex, body: Paging) {
  const base = db('roles');
  applyFilters(base, body, (k) => k, true);
  return pageRows(base, body, 'rolename');
}

/** Permission ids from the form: a permission id, or `all_<titleid>` for every permission under that title. */
async function resolvePermissionIds(db: Knex, entries: string[]): Promise<string[]> {
  const { titles, perms } = await titlesAndPermissions(db);
  const known = new Set(perms.map((p) => p.permissionid));
  const out = new Set<string>();
  for (const e of entries) {
    if (e.startsWith('all_')) {
      const titleid = e.slice(4);
      if (!titles.some((t) => t.permissiontitleid === titleid)) throw httpError(400, 'Invalid permission id');
      for (const id of underTitle(titleid, titles, perms)) out.add(id);
    } else if (known.has(e)) out.add(e);
    else throw httpError(400, 'Invalid permission id');
  }
  return [...out];
}

async function bindPermissions(trx: Knex, roleid: string, ids: string[]): Promise<void> {
  await trx('roles_permissions').where({ roleid }).del();
  if (ids.length)
    await trx.batchInsert(
      'roles_permissions',
      ids.map((permissionid) => ({ roleid, permissionid })),
      200,
    );
}

export async function createRole(db: Knex, body: z.infer<typeof roleBody>, by: string | null) {
  const ids = await resolvePermissionIds(db, body.permissionsid);
  const roleid = crypto.randomUUID();
  await db.transaction(async (trx) => {
    await trx('roles').insert({ roleid, rolename: body.rolename, created_by: by });
    await bindPermissions(trx, roleid, ids);
  });
  return db('roles').where({ roleid }).first();
}

export async function updateRole(db: Knex, roleid: string, body: z.infer<typeof roleBody>, by: string | null) {
  if (!(await db('roles').where({ roleid }).first('roleid'))) throw httpError(400, 'Role Not Found');
  if (await db('roles').where({ rolename: body.rolename }).whereNot({ roleid }).first('roleid'))
    throw httpError(400, 'Role name already exists');
  const ids = await resolvePermissionIds(db, body.permissionsid);
  await db.transaction(async (trx) => {
    const before = new Set((await trx('roles_permissions').where({ roleid }).pluck('permissionid')) as string[]);
    await trx('roles')
      .where({ roleid })
      .update({ rolename: body.rolename, updated_at: new Date().toISOString(), updated_by: by });
    await bindPermissions(trx, roleid, ids);
    const after = new Set((await trx('roles_permissions').where({ roleid }).pluck('permissionid')) as string[]);
    // Tokens carry their permissions: when a role's set changes, everyone holding it signs in again
    // (a renamed role changes nothing a token says).
    if (before.size !== after.size || [...before].some((p) => !after.has(p))) {
      const holders = (await trx('lmsusers_roles').where({ roleid }).pluck('lmsuserid')) as string[];
      for (const lmsuserid of holders) await revokeAll(trx, lmsuserid);
    }
  });
  return db('roles').where({ roleid }).first();
}

export async function deleteRole(db: Knex, roleid: string): Promise<true> {
  if (!(await db('roles').where({ roleid }).first('roleid'))) throw httpError(400, 'Invalid role id');
  if (await db('lmsusers_roles').where({ roleid }).first('roleid'))
    throw httpError(400, 'Role is binded, role cannot be deleted');
  await db.transaction(async (trx) => {
    await trx('roles_permissions').where({ roleid }).del();
    await trx('roles').where({ roleid }).del();
  });
  return true;
}

/** Replaces a staff account's role set; unknown accounts and unknown roles are refused with nothing written. */
export async function bindRoles(db: Knex, body: z.infer<typeof bindBody>): Promise<true> {
  if (!(await db('lmsusers').where({ lmsuserid: body.lmsuserid }).first('lmsuserid')))
    throw httpError(400, 'Invalid user id');
  const unique = [...new Set(body.rolesid)];
  const found = await db('roles').whereIn('roleid', unique).select('roleid');
  if (found.length !== unique.length) throw httpError(400, 'Invalid role id');
  await db.transaction((trx) => replaceRoles(trx, body.lmsuserid, unique));
  return true;
}
