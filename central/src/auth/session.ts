import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import type { Config } from '../config';
import { loadGrants, schoolClaims, staffClaims, type SchoolAccount, type StaffAccount } from './identity';
import { issueToken, pruneExpired } from './tokens';

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
}

/**
 * A new sign-in (or a refresh of one): roles and permissions read fresh, an ACCESS and a REFRESH
 * token sharing one session id. Earlier sessions of the person stay valid (several devices).
 */
export async function issueStaffPair(
  db: Knex,
  config: Config,
  account: StaffAccount,
  sessionid?: string,
): Promise<TokenPair> {
  const grants = await loadGrants(db, config, account);
  const sid = sessionid ?? crypto.randomUUID();
  await pruneExpired(db);
  const access = await issueToken(db, config, 'ACCESS', account.lmsuserid, staffClaims(account, grants), sid);
  const refresh = await issueToken(db, config, 'REFRESH', account.lmsuserid, {}, sid);
  return { accessToken: access.token, refreshToken: refresh.token };
}

/** School users get an access token only; the contract's `refreshToken` is the empty string. */
export async function issueSchoolToken(db: Knex, config: Config, user: SchoolAccount): Promise<TokenPair> {
  await pruneExpired(db);
  const access = await issueToken(
    db,
    config,
    'ACCESS',
    user.schooluserid,
    await schoolClaims(db, user),
    crypto.randomUUID(),
  );
  return { accessToken: access.token, refreshToken: '' };
}
