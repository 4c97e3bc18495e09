import type { Knex } from '@lms/db';
import { findStaffByName } from './identity';
import { PASSWORD_POLICY_MESSAGE, hashPassword, passwordMeetsPolicy } from './passwords';
import { revokeAll } from './tokens';

/** Operator command: set a staff account's password (the only way to make the seeded superadmin usable). */
export async function setStaffPassword(db: Knex, lmsusername: string, password: string): Promise<string> {
  if (!passwordMeetsPolicy(password)) throw new Error(PASSWORD_POLICY_MESSAGE);
  const account = await findStaffByName(db, lmsusername);
  if (!account) throw new Error(`No staff account "${lmsusername}"`);
  await db('lmsusers')
    .where({ lmsuserid: account.lmsuserid })
    .update({ lmsuserpasswordhash: await hashPassword(password), updated_at: new Date().toISOString() });
  // Anyone signed in with the old password is signed out.
  await revokeAll(db, account.lmsuserid);
  return `Password set for ${account.lmsusername}${account.isdisabled ? ' (the account is disabled)' : ''}`;
}
