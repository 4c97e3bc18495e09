import crypto from 'node:crypto';
import type { RequestHandler } from 'express';
import { httpError, parseBoxAuthorization, parseEnrolAuthorization, sha256Hex } from '@lms/shared';
import { appDeps } from '../http/context';
import type { Caller } from '../http/types';

/**
 * The fleet's two credentials, read only by the gates of the fleet's box routes (as the token gates read
 * their query tokens): everywhere else a `Box` or `Enrol` header is no caller at all, so a box's
 * credential opens no staff route, and a staff token is no box. A refusal is a 401 whose message tells
 * the person at the box what to do.
 */
export const BOX_UNKNOWN = "This box's credential is not known at central: enrol the box again with a new code";
export const BOX_REVOKED = 'This box was revoked at central; enrol it again with a new code from the fleet page';
export const CODE_REFUSED = 'The enrolment code is wrong, expired or already used: ask central for a new code';

interface BoxRow {
  boxid: string;
  schoolid: string;
  state: string;
  secrethash: string | null;
  enrolcodehash: string | null;
  enrolcodeexpiresat: string | Date | null;
}

/** Equal SHA-256 hex digests, compared in constant time. */
function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && crypto.timingSafeEqual(x, y);
}

/** `Authorization: Box <boxid>.<secret>`: the box whose stored SHA-256 the secret matches, unless revoked. */
export const boxGate: RequestHandler = (req, res, next) => {
  const given = parseBoxAuthorization(req.headers.authorization);
  if (!given) {
    next(httpError(401, 'Unauthorized'));
    return;
  }
  appDeps(req).db('boxes').where({ boxid: given.boxid }).first('boxid', 'schoolid', 'state', 'secrethash')
    .then((row: BoxRow | undefined) => {
      // The digest is compared even for an unknown box, so that the answer's time tells nothing.
      const ok = sameDigest(sha256Hex(given.secret), row?.secrethash ?? '0'.repeat(64));
      if (!row || !row.secrethash || !ok) throw httpError(401, BOX_UNKNOWN);
      if (row.state === 'revoked') throw httpError(401, BOX_REVOKED);
      res.locals.caller = { kind: 'box', boxid: row.boxid, schoolid: row.schoolid } satisfies Caller;
      next();
    })
    .catch(next);
};

/**
 * `Authorization: Enrol <code>`: the box whose live code this is. Codes are looked up by their SHA-256
 * (kept unique); a wrong one answers 401, which the sign-in limiter counts (LOGIN_RATE_LIMIT_MAX).
 */
export const enrolCodeGate: RequestHandler = (req, res, next) => {
  const code = parseEnrolAuthorization(req.headers.authorization);
  if (!code) {
    next(httpError(401, CODE_REFUSED));
    return;
  }
  appDeps(req).db('boxes').where({ enrolcodehash: sha256Hex(code) })
    .first('boxid', 'schoolid', 'state', 'enrolcodehash', 'enrolcodeexpiresat')
    .then((row: BoxRow | undefined) => {
      const expires = row?.enrolcodeexpiresat ? new Date(row.enrolcodeexpiresat).getTime() : 0;
      if (!row || !(expires > Date.now())) throw httpError(401, CODE_REFUSED);
      res.locals.caller = {
        kind: 'enrolcode', boxid: row.boxid, schoolid: row.schoolid, codehash: row.enrolcodehash ?? '',
      } satisfies Caller;
      next();
    })
    .catch(next);
};
