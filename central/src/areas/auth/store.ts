import crypto from 'node:crypto';
import type { Knex } from '@lms/db';

export async function recordStaffAccess(db: Knex, lmsuserid: string, ipaddress: string): Promise<void> {
  await db('lmsuseraccess').insert({
    useraccessid: crypto.randomUUID(),
    userid: lmsuserid,
    ipaddress: ipaddress.slice(0, 45),
  });
}

export async function setPasswordHash(db: Knex, lmsuserid: string, hash: string): Promise<number> {
  return db('lmsusers')
    .where({ lmsuserid })
    .update({ lmsuserpasswordhash: hash, updated_at: new Date().toISOString() });
}

export async function markVerified(db: Knex, lmsuserid: string): Promise<number> {
  return db('lmsusers').where({ lmsuserid }).update({ isverified: true, updated_at: new Date().toISOString() });
}

export async function setSchoolPasswordHash(db: Knex, schooluserid: string, hash: string): Promise<number> {
  return db('schoolusers')
    .where({ schooluserid })
    .update({ schooluserpasswordhash: hash, updated_at: new Date().toISOString() });
}
