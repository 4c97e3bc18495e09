import crypto from 'node:crypto';
import type { Knex } from '@lms/db';

export const ACCESS_OPEN = 1;
export const ACCESS_LOGGED_OUT = 2;
export const ACCESS_SUPERSEDED = 3;

/** Usernames are matched case-insensitively on both dialects, as the original's MySQL collation did. */
export function findSchoolUser(db: Knex, username: string) {
  return db('schoolusers').whereRaw('lower(schoolusername) = ?', [username.toLowerCase()]).first();
}

export async function replaceHash(db: Knex, schooluserid: string, hash: string): Promise<void> {
  await db('schoolusers').where({ schooluserid }).update({ schooluserpasswordhash: hash });
}

/** Opens an access row for a sign-in; rows the user left open are closed first, as superseded. */
export async function openAccess(db: Knex, userid: string, logintime: Date, ipaddress: string): Promise<string> {
  const id = crypto.randomUUID();
  await db.transaction(async (trx) => {
    await trx('rpiuseraccess')
      .where({ userid, status: ACCESS_OPEN })
      .update({ logouttime: new Date().toISOString(), status: ACCESS_SUPERSEDED, timespent: 0 });
    await trx('rpiuseraccess').insert({
      rpiuseraccessid: id,
      userid,
      logintime: logintime.toISOString(),
      ipaddress: ipaddress.slice(0, 45),
      status: ACCESS_OPEN,
      timespent: 0,
    });
  });
  return id;
}

export async function closeAccess(db: Knex, userid: string, logouttime: Date, timespent: number): Promise<void> {
  await db('rpiuseraccess')
    .where({ userid, status: ACCESS_OPEN })
    .update({ logouttime: logouttime.toISOString(), status: ACCESS_LOGGED_OUT, timespent });
}
