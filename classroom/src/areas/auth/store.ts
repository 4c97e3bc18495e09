import crypto from 'node:crypto';
import { groupCommit, inFlight, type Knex } from '@lms/db';

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

/**
 * Opens an access row for a sign-in, inside the caller's transaction (the sign-in's group commit); rows the
 * user left open are closed first, as superseded.
 */
export async function openAccess(
  trx: Knex.Transaction,
  userid: string,
  logintime: Date,
  ipaddress: string,
): Promise<string> {
  const id = crypto.randomUUID();
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
  return id;
}

export async function closeAccess(db: Knex, userid: string, logouttime: Date, timespent: number): Promise<void> {
  await db('rpiuseraccess')
    .where({ userid, status: ACCESS_OPEN })
    .update({ logouttime: logouttime.toISOString(), status: ACCESS_LOGGED_OUT, timespent });
}

/**
 * The writes of sign-ins (access row, token row) go through one group commit per database: the sign-ins of a
 * class arriving together are committed a few at a time, each still answered only after its own commit. While
 * other sign-ins are still checking their passwords, a batch waits for them up to `SIGN_IN_BATCH_WAIT_MS`.
 */
const SIGN_IN_BATCH_WAIT_MS = 40;

interface SignInLane {
  checking: ReturnType<typeof inFlight>;
  commit: ReturnType<typeof groupCommit>;
}

const lanes = new WeakMap<Knex, SignInLane>();

export function signInLane(db: Knex): SignInLane {
  let lane = lanes.get(db);
  if (!lane) {
    const checking = inFlight();
    lane = {
      checking,
      commit: groupCommit(db, { maxWaitMs: SIGN_IN_BATCH_WAIT_MS, expectMore: () => checking.count() > 0 }),
    };
    lanes.set(db, lane);
  }
  return lane;
}
