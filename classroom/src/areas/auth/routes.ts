import { z } from 'zod';
import { httpError, publicGate } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { bearerOf } from '../../auth/guards';
import { profileClaims } from '../../auth/claims';
import { hashPassword, verifyPassword } from '../../auth/passwords';
import { issueAccessToken, revokeToken, verifyAccessToken } from '../../auth/tokens';
import { clientTime, storedTime } from './client-time';
import { closeAccess, findSchoolUser, openAccess, replaceHash, signInLane } from './store';

const loginBody = z.object({
  studentusername: z.string().trim().min(1).max(45),
  studentpassword: z.string().min(1).max(200),
  logintime: clientTime.optional(),
}).strict();

const logoutBody = z.object({
  logouttime: clientTime.optional(),
  timespent: z.coerce.number().finite().nonnegative().optional(),
}).passthrough();

const NOT_MATCHING = 'User/Password not matching';

export const authRoutes: ClassroomRoute[] = [
  route('POST', '/auth/login', publicGate(), { body: loginBody },
    async ({ logger, config, db, req, body }) => {
    const user = await findSchoolUser(db, body.studentusername);
    const lane = signInLane(db);
    lane.checking.enter();
    let check: Awaited<ReturnType<typeof verifyPassword>>;
    try {
      check = await verifyPassword(user?.schooluserpasswordhash, body.studentpassword);
    } finally {
      lane.checking.leave();
    }
    if (!user || !check.ok || user.isdisabled || user.isdeleted || user.schooluserstatus === false)
      throw httpError(400, NOT_MATCHING);
    const student = (await db('students').where('schooluserid', user.schooluserid).first()) ?? null;
    if (student && student.isactive === false) throw httpError(400, 'Student is removed!');
    if (check.legacy) await replaceHash(db, user.schooluserid, await hashPassword(body.studentpassword));
    const claims = await profileClaims(db, user, student);
    // The access row and the token row in one transaction, shared with the sign-ins arriving with this one:
    // one sync to the card per batch instead of one per sign-in.
    const { token } = await lane.commit(async (trx) => {
      await openAccess(trx, user.schooluserid, storedTime(body.logintime), req.ip ?? '');
      return issueAccessToken(
        trx,
        { secret: config.jwtSecret, minutes: config.accessTokenMinutes },
        user.schooluserid,
        claims,
      );
    });
    logger.info({ schooluserid: user.schooluserid, logaccesstype: 1 }, 'classroom sign-in');
    return { accessToken: token };
  },
    { summary: 'Sign-in for every school user; answers {accessToken}' }),

  route('POST', '/auth/logout', publicGate(), { body: logoutBody },
    async ({ config, db, req, res, body }) => {
    const raw = bearerOf(req);
    const verified = raw ? verifyAccessToken(raw, config.jwtSecret) : undefined;
    // Revokes only this session's token: a learner signed in on two tablets stays signed in on the other.
    const revoked = verified ? await revokeToken(db, verified.jti) : 0;
    if (!verified || revoked === 0) {
      res.status(200).json({ error: true, errormessage: 'Unauthorized', data: false });
      return;
    }
    await closeAccess(db, verified.schooluserid, storedTime(body.logouttime), body.timespent ?? 0);
    return true;
  },
    { summary: 'Ends the session of the bearer token (no guard; answers data:false when the token is not live)' }),
];
