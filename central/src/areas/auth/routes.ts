import { clientKey, httpError, metricsOf, publicGate, tokenOf } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import { mailCountersOf } from '../../auth/mail-limits';
import { z } from 'zod';
import type { CentralCtx, CentralRoute } from '../../http/types';
import { findSchoolUser, findStaffById, findStaffByName, type StaffAccount } from '../../auth/identity';
import {
  hashPassword,
  hashSchoolUserPassword,
  needsRehash,
  schoolUserNeedsRehash,
  verifyPassword,
} from '../../auth/passwords';
import { issueSchoolToken, issueStaffPair } from '../../auth/session';
import { issueToken, revokeAll, revokeSession, verifyStored } from '../../auth/tokens';
import { checkEmail, checkPassword, requiredString, strictBody } from '../../auth/validation';
import { markVerified, recordStaffAccess, setPasswordHash, setSchoolPasswordHash } from './store';

type Ctx = CentralCtx;

const NOT_MATCHING = 'User/Password not matching';
const NOT_VERIFIED = 'User not verified, Please verify with the link sent to your email';
const PLEASE_AUTHENTICATE = 'Please authenticate';

const loginBody = strictBody({ lmsusername: requiredString, lmsuserpassword: requiredString }).superRefine((b, ctx) => {
  checkEmail(b.lmsusername, ctx);
  checkPassword(b.lmsuserpassword, ctx);
});
const schoolLoginBody = strictBody({ lmsusername: requiredString, lmsuserpassword: requiredString });
const emailBody = strictBody({ lmsusername: requiredString }).superRefine((b, ctx) => checkEmail(b.lmsusername, ctx));
const passwordBody = strictBody({ lmsuserpassword: requiredString }).superRefine((b, ctx) =>
  checkPassword(b.lmsuserpassword, ctx),
);

async function sendLink(ctx: Ctx, account: StaffAccount, type: 'CHANGEPASSWORD' | 'VERIFYEMAIL'): Promise<void> {
  const { config, db, mailer } = ctx;
  const { token } = await db.transaction(async (trx) => {
    // One live reset link per account: a new one ends the previous, so a link left in an old mail (or in a
    // mailbox someone else reads) opens nothing once the owner asked again.
    if (type === 'CHANGEPASSWORD') await revokeAll(trx, account.lmsuserid, ['CHANGEPASSWORD']);
    return issueToken(trx, config, type, account.lmsuserid, {});
  });
  const [subject, path] =
    type === 'CHANGEPASSWORD' ? ['Reset your password', 'changepassword'] : ['Verify your email address', 'verify'];
  await mailer.send({ to: account.lmsusername, subject, text: `${config.uiUrl}/auth/${path}/${token}` });
}

async function login(ctx: CentralCtx<{ body: typeof loginBody }>) {
  const { db } = ctx;
  const account = await findStaffByName(db, ctx.body.lmsusername);
  // One argon2 verification whether or not the account exists: same answer, same time.
  const ok = await verifyPassword(account?.lmsuserpasswordhash, ctx.body.lmsuserpassword);
  if (!account || !ok || account.isdisabled) throw httpError(400, NOT_MATCHING);
  // Decision 17: a hash carried over from the original system is replaced by argon2id at its first sign-in.
  if (needsRehash(account.lmsuserpasswordhash))
    await setPasswordHash(db, account.lmsuserid, await hashPassword(ctx.body.lmsuserpassword));
  if (!account.isverified) {
    await sendLink(ctx, account, 'VERIFYEMAIL');
    throw httpError(400, NOT_VERIFIED);
  }
  const pair = await issueStaffPair(db, ctx.config, account);
  await recordStaffAccess(db, account.lmsuserid, ctx.req.ip ?? '');
  return pair;
}

async function schoolLogin(ctx: CentralCtx<{ body: typeof schoolLoginBody }>) {
  const { db } = ctx;
  const user = await findSchoolUser(db, ctx.body.lmsusername);
  const ok = await verifyPassword(user?.schooluserpasswordhash, ctx.body.lmsuserpassword);
  // Learners (role 4) sign in on the classroom server only; they are refused here like a wrong password.
  if (
    !user ||
    !ok ||
    user.isdisabled ||
    user.isdeleted ||
    !user.schooluserstatus ||
    ![1, 2, 3].includes(user.schooluserrole)
  ) {
    throw httpError(400, NOT_MATCHING);
  }
  const format = ctx.config.schoolUserPasswordFormat;
  if (schoolUserNeedsRehash(user.schooluserpasswordhash, format)) {
    await setSchoolPasswordHash(db, user.schooluserid, await hashSchoolUserPassword(ctx.body.lmsuserpassword, format));
  }
  return issueSchoolToken(db, ctx.config, user);
}

/** Public and always 200: a missing or invalid token answers `{error:true, data:false}` (contract §c). */
async function logout(ctx: Ctx) {
  const { db } = ctx;
  const c = ctx.caller;
  if (typeof ctx.req.headers.authorization === 'string' && (c.kind === 'staff' || c.kind === 'school')) {
    await revokeSession(db, c.kind === 'staff' ? c.lmsuserid : c.schooluserid, c.sessionid, c.jti);
    return true;
  }
  // A learner's token is not an access caller, but signing it out must still work.
  const header = ctx.req.headers.authorization ?? '';
  const token = header.replace(/^bearer\s+/i, '').trim();
  const stored = token ? await verifyStored(db, ctx.config, token, 'ACCESS') : undefined;
  if (stored) {
    await revokeSession(db, stored.payload.sub, stored.sessionid, stored.payload.jti);
    return true;
  }
  // The refresh token, where POST /auth/refreshtoken takes it (query or body `refreshtoken`): signing out
  // with it ends its session, so a client holding only the refresh token can still revoke it (decision #7).
  const refreshToken = refreshTokenOf(ctx.req);
  const refreshStored = refreshToken ? await verifyStored(db, ctx.config, refreshToken, 'REFRESH') : undefined;
  if (refreshStored) {
    await revokeSession(db, refreshStored.payload.sub, refreshStored.sessionid, refreshStored.payload.jti);
    return true;
  }
  ctx.res.status(200).json({ error: true, data: false });
  return undefined;
}

function refreshTokenOf(req: Ctx['req']): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  const v = req.query.refreshtoken ?? body?.refreshtoken ?? body?.refreshToken;
  return typeof v === 'string' && v.length > 0 && v.length <= 4096 ? v : undefined;
}

async function refresh(ctx: Ctx) {
  const { db } = ctx;
  const c = ctx.caller;
  if (c.kind !== 'token') throw httpError(401, PLEASE_AUTHENTICATE);
  const account = await findStaffById(db, c.sub);
  if (!account || account.isdisabled || !account.isverified) throw httpError(401, PLEASE_AUTHENTICATE);
  // The refreshed pair replaces this session's tokens; other sessions of the person are untouched.
  await revokeSession(db, c.sub, c.sessionid, c.jti);
  try {
    return await issueStaffPair(db, ctx.config, account, c.sessionid ?? undefined);
  } catch {
    throw httpError(401, PLEASE_AUTHENTICATE);
  }
}

/**
 * Reset and verification links. The answer is the same whether an account has the address or not, and
 * comes before any mail is sent, so that neither its text nor its timing tells which addresses have
 * accounts. Every request counts, per client address and per e-mail address, so that nobody can flood
 * a mailbox.
 */
async function emailLink(
  ctx: CentralCtx<{ body: typeof emailBody }>,
  type: 'CHANGEPASSWORD' | 'VERIFYEMAIL',
  sent: string,
) {
  const { req, config } = ctx;
  const counters = mailCountersOf(req);
  const address = clientKey(config.trustProxy ? req.ip : req.socket.remoteAddress);
  const byAccount = String(ctx.body.lmsusername).toLowerCase();
  for (const [counter, key, limiter] of [
    [counters.perClient, address, 'central-mail-client'],
    [counters.perAccount, byAccount, 'central-mail-account'],
  ] as const) {
    const r = await counter.hit(key);
    if (!r.allowed) {
      metricsOf(req)?.rateLimitRefusals.inc({ limiter });
      throw httpError(429, 'Too many requests, please try again later.', {
        'Retry-After': String(r.retryAfterSeconds),
      });
    }
  }
  const account = await findStaffByName(ctx.db, ctx.body.lmsusername);
  if (account && !account.isdisabled) {
    sendLink(ctx, account, type).catch((err: unknown) =>
      ctx.logger.error({ err, reqId: req.id }, 'mail link could not be sent'),
    );
  }
  return sent;
}

async function validateChangePassword(ctx: Ctx) {
  const t = ctx.req.query.changepasswordtoken;
  if (typeof t !== 'string' || !t) return false;
  return !!(await verifyStored(ctx.db, ctx.config, t, 'CHANGEPASSWORD'));
}

async function changePassword(ctx: CentralCtx<{ body: typeof passwordBody }>) {
  const { db } = ctx;
  const c = ctx.caller;
  if (c.kind !== 'token') throw httpError(401, 'Unauthorized');
  const account = await findStaffById(db, c.sub);
  if (!account) throw httpError(400, PLEASE_AUTHENTICATE);
  await setPasswordHash(db, account.lmsuserid, await hashPassword(ctx.body.lmsuserpassword));
  // A new password ends every session and every outstanding link of the account.
  await revokeAll(db, account.lmsuserid);
  return true;
}

async function verify(ctx: Ctx) {
  const { db } = ctx;
  const c = ctx.caller;
  if (c.kind !== 'token') throw httpError(401, 'Unauthorized');
  await markVerified(db, c.sub);
  await revokeAll(db, c.sub, ['VERIFYEMAIL']);
  return true;
}

// Refresh, logout, verify and validate take no body schema: the admin UI posts its request options as the body.
const ignoredBody = { body: z.unknown() };

export const authRoutes: CentralRoute[] = [
  route('POST', '/auth/login', publicGate(), scope.ownAccount, { body: loginBody },
    login, { summary: 'staff login (email + password) -> access/refresh tokens' }),
  route('POST', '/auth/school/login', publicGate(), scope.ownAccount, { body: schoolLoginBody },
    schoolLogin, { summary: 'school-user login (teacher and above) -> access token' }),
  route('POST', '/auth/logout', publicGate(), scope.ownAccount, ignoredBody,
    logout, { summary: 'revoke bearer\'s stored access/refresh tokens; always 200' }),
  route('POST', '/auth/verify', tokenOf('verifyemail'), scope.ownAccount, ignoredBody,
    verify, { status: 202, summary: 'confirm staff email with verify-email token (query verifyemailtoken); 202' }),
  route('POST', '/auth/refreshtoken', tokenOf('refresh'), scope.ownAccount, ignoredBody,
    refresh, { summary: 'exchange refresh token (query refreshtoken) for new token pair' }),
  route('PUT', '/auth/sendverificationemail', publicGate(), scope.ownAccount, { body: emailBody },
    (ctx) => emailLink(ctx, 'VERIFYEMAIL', 'Verification mail sent.'),
    { summary: 'e-mail a verification link to a staff account' }),
  route('POST', '/auth/forgotpassword', publicGate(), scope.ownAccount, { body: emailBody },
    (ctx) => emailLink(ctx, 'CHANGEPASSWORD', 'Password reset mail sent.'),
    { summary: 'e-mail a password-reset link to a staff account' }),
  route('PUT', '/auth/changepassword', tokenOf('changepassword'), scope.ownAccount, { body: passwordBody },
    changePassword, { summary: 'set new password using change-password token (query changepasswordtoken)' }),
  route('POST', '/auth/token/validate/changepassword', publicGate(), scope.ownAccount, ignoredBody,
    validateChangePassword, { summary: 'report whether a change-password token is still valid' }),
];
