import crypto from 'node:crypto';
import type { Request } from 'express';
import { httpError } from '@lms/shared';
import type { Config } from '../config';

/**
 * Presigned uploads of the folder store (decision 26): `PUT /media/<key>?expires=<epoch s>&signature=<hex>`
 * on central, signed with an HMAC of the key and the expiry. S3-compatible stores sign their own.
 */

/** How long a presigned upload URL is valid (the original's 5 minutes). */
export const PRESIGN_SECONDS = 5 * 60;

export const PRESIGN_MESSAGES = {
  invalid: 'Invalid upload URL',
  expired: 'The upload URL has expired',
  used: 'The upload URL has been used',
} as const;

// A key of its own, derived from JWT_SECRET: no new secret to manage, and a token signature can never
// pass for an upload signature or the other way round.
function signingKey(config: Config): Buffer {
  return crypto.createHmac('sha256', config.jwtSecret).update('lms media upload url v1').digest();
}

function signature(config: Config, key: string, expires: number, by: string): string {
  return crypto.createHmac('sha256', signingKey(config)).update(`PUT\n${key}\n${expires}\n${by}`).digest('hex');
}

/** The address clients reach this API at: PUBLIC_URL, else the one this request came to. */
export function publicBase(req: Request, config: Config): string {
  return config.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/** `by`: the account that asked for the URL, signed into it and recorded as the document's creator. */
export function presignedMediaUrl(
  req: Request,
  config: Config,
  key: string,
  by: string | null,
  now = Date.now(),
): string {
  const expires = Math.floor(now / 1000) + PRESIGN_SECONDS;
  const who = by ? `&by=${encodeURIComponent(by)}` : '';
  const query = `expires=${expires}${who}&signature=${signature(config, key, expires, by ?? '')}`;
  return `${publicBase(req, config)}/media/${encodeURIComponent(key)}?${query}`;
}

/**
 * Checks a presigned upload's signature and expiry (403 otherwise); answers the signature, which
 * names the URL when it is marked used.
 */
export function verifyPresigned(
  config: Config,
  key: string,
  q: { expires?: unknown; signature?: unknown; by?: unknown },
  now = Date.now(),
): string {
  const { expires, signature: given } = q;
  const by = q.by === undefined ? '' : q.by;
  if (
    typeof expires !== 'string' ||
    !/^\d{1,12}$/.test(expires) ||
    typeof given !== 'string' ||
    !/^[0-9a-f]{64}$/.test(given) ||
    typeof by !== 'string'
  ) {
    throw httpError(403, PRESIGN_MESSAGES.invalid);
  }
  const want = Buffer.from(signature(config, key, Number(expires), by), 'hex');
  if (!crypto.timingSafeEqual(want, Buffer.from(given, 'hex'))) throw httpError(403, PRESIGN_MESSAGES.invalid);
  if (Number(expires) * 1000 < now) throw httpError(403, PRESIGN_MESSAGES.expired);
  return given;
}
