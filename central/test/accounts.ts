import crypto from 'node:crypto';
import request from 'supertest';
import type { Knex } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { hashPassword } from '../src/auth/passwords';
import type { Mail, Mailer } from '../src/auth/mail';

export const PASSWORD = 'Secret123';

export async function createStaff(
  db: Knex,
  o: {
    lmsusername: string;
    roleids?: string[];
    password?: string;
    isverified?: boolean;
    isdisabled?: boolean;
    countries?: string[];
    schools?: string[];
  },
): Promise<string> {
  const lmsuserid = crypto.randomUUID();
  await db('lmsusers').insert({
    lmsuserid,
    lmsusername: o.lmsusername,
    lmsuserpasswordhash: await hashPassword(o.password ?? PASSWORD),
    firstname: 'First',
    lastname: 'Last',
    lmsuserrole: ROLE_IDS.superadmin,
    isverified: o.isverified ?? true,
    isdisabled: o.isdisabled ?? false,
    countries: o.countries ? JSON.stringify(o.countries) : null,
    schools: o.schools ? JSON.stringify(o.schools) : null,
  });
  for (const roleid of o.roleids ?? []) await db('lmsusers_roles').insert({ lmsuserid, roleid });
  return lmsuserid;
}

export async function createSchoolUser(
  db: Knex,
  o: { schoolusername: string; role: number; password?: string; schoolname?: string },
): Promise<string> {
  const schooluserid = crypto.randomUUID();
  await db('schoolusers').insert({
    schooluserid,
    schoolusername: o.schoolusername,
    schooluserpasswordhash: await hashPassword(o.password ?? 'demo'),
    schooluserrole: o.role,
    schoolname: o.schoolname ?? null,
  });
  return schooluserid;
}

/** A role holding exactly the named permissions. */
export async function createRole(db: Knex, rolename: string, names: string[]): Promise<string> {
  const roleid = crypto.randomUUID();
  await db('roles').insert({ roleid, rolename });
  const ids = await db('permissions').whereIn('permissionname', names).select('permissionid');
  for (const { permissionid } of ids) await db('roles_permissions').insert({ roleid, permissionid });
  return roleid;
}

export async function staffLogin(app: Parameters<typeof request>[0], lmsusername: string, password = PASSWORD) {
  const res = await request(app).post('/auth/login').send({ lmsusername, lmsuserpassword: password });
  if (res.status !== 200) throw new Error(`login ${lmsusername}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { accessToken: string; refreshToken: string };
}

export async function schoolLogin(app: Parameters<typeof request>[0], schoolusername: string, password = 'demo') {
  const res = await request(app)
    .post('/auth/school/login')
    .send({ lmsusername: schoolusername, lmsuserpassword: password });
  if (res.status !== 200) throw new Error(`school login ${schoolusername}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { accessToken: string; refreshToken: string };
}

export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

export function captureMailer(): Mailer & { sent: Mail[] } {
  const sent: Mail[] = [];
  return { sent, async send(m) { sent.push(m); } };
}
