import type { Knex } from '@lms/db';
import { WILDCARD_PERMISSION } from '@lms/shared';
import type { Config } from '../config';

export interface StaffAccount {
  lmsuserid: string;
  lmsusername: string;
  lmsuserpasswordhash: string;
  firstname: string;
  lastname: string | null;
  lmsuserrole: string;
  isverified: boolean;
  isdisabled: boolean;
  countries: string[] | null;
  schools: string[] | null;
}

export async function findStaffByName(db: Knex, lmsusername: string): Promise<StaffAccount | undefined> {
  // Emails are compared case-insensitively: people type their address in any case.
  return db('lmsusers').whereRaw('lower(lmsusername) = ?', [lmsusername.toLowerCase()]).first();
}

export async function findStaffById(db: Knex, lmsuserid: string): Promise<StaffAccount | undefined> {
  return db('lmsusers').where({ lmsuserid }).first();
}

export interface StaffGrants {
  roleids: string[];
  permissions: string[];
}

/**
 * Roles and distinct permission names of a staff account, read fresh. The superadmin wildcard is
 * earned by count: the distinct names held (deduplicated across roles) equal the rows of the
 * permissions table. The dev-only username shortcut grants every name and the wildcard.
 */
export async function loadGrants(
  db: Knex,
  config: Config,
  account: Pick<StaffAccount, 'lmsuserid' | 'lmsusername'>,
): Promise<StaffGrants> {
  const roleRows = await db('lmsusers_roles as ur')
    .join('roles as r', 'r.roleid', 'ur.roleid')
    .where('ur.lmsuserid', account.lmsuserid)
    .select('r.roleid');
  const roleids = roleRows.map((r: { roleid: string }) => r.roleid);
  const total = Number((await db('permissions').count({ n: '*' }).first())?.n ?? 0);
  if (config.superadminUsername && account.lmsusername === config.superadminUsername) {
    const all = await db('permissions').distinct('permissionname').orderBy('permissionname');
    return {
      roleids,
      permissions: [...all.map((p: { permissionname: string }) => p.permissionname), WILDCARD_PERMISSION],
    };
  }
  const held = roleids.length
    ? await db('roles_permissions as rp')
        .join('permissions as p', 'p.permissionid', 'rp.permissionid')
        .whereIn('rp.roleid', roleids)
        .distinct('p.permissionname')
        .orderBy('p.permissionname')
    : [];
  const permissions = held.map((p: { permissionname: string }) => p.permissionname);
  if (total > 0 && permissions.length === total) permissions.push(WILDCARD_PERMISSION);
  return { roleids, permissions };
}

/** The staff access token's claims, exactly those the contract lists (the admin UI reads them). */
export function staffClaims(a: StaffAccount, g: StaffGrants): Record<string, unknown> {
  return {
    lmsusername: a.lmsusername,
    lmsuserid: a.lmsuserid,
    // Legacy: authorizes nothing, but the admin UI's route guard requires it to be non-empty.
    lmsuserrole: a.lmsuserrole,
    lmsuserroles: g.roleids,
    firstname: a.firstname,
    lastname: a.lastname,
    permissions: g.permissions,
    countries: a.countries ?? null,
    schools: a.schools ?? null,
  };
}

export interface SchoolAccount {
  schooluserid: string;
  schoolusername: string;
  schooluserpasswordhash: string;
  schooluserrole: number;
  schooluserstatus: boolean;
  schoolname: string | null;
  isdisabled: boolean;
  isdeleted: boolean;
}

export async function findSchoolUser(db: Knex, schoolusername: string): Promise<SchoolAccount | undefined> {
  return db('schoolusers').whereRaw('lower(schoolusername) = ?', [schoolusername.toLowerCase()]).first();
}

const LEARNER_CLAIMS = [
  'studentid',
  'studentfirstname',
  'studentlastname',
  'city',
  'contact',
  'country',
  'dateofbirth',
  'curriculumid',
  'dateofjoin',
  'fathername',
  'mothername',
  'genderid',
  'schooltype',
  'standard',
  'state',
  'startinglevelid',
  'studentcurrentlessonid',
  'studentcurrentlevelid',
] as const;

/** The school-user access token's claims (contract §c), with the linked learner row's fields when there is one. */
export async function schoolClaims(db: Knex, u: SchoolAccount): Promise<Record<string, unknown>> {
  const claims: Record<string, unknown> = {
    schooluserid: u.schooluserid,
    schoolusername: u.schoolusername,
    schooluserrole: u.schooluserrole,
    schoolname: u.schoolname,
  };
  const learner = await db('students')
    .where({ schooluserid: u.schooluserid, isdeleted: false })
    .first(...LEARNER_CLAIMS);
  if (learner) for (const k of LEARNER_CLAIMS) claims[k] = learner[k] ?? null;
  const school = u.schoolname
    ? await db('schools').where({ schoolname: u.schoolname }).first('schoolid', 'uitheme')
    : undefined;
  claims.uitheme = school?.uitheme ?? 'kids';
  claims.schoolid = school?.schoolid ?? null;
  return claims;
}
