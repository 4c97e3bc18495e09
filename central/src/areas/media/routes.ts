import { z } from 'zod';
import { FEEDBACK_PREFIX, httpError, isMediaKey, mediaContentType, publicGate, sendMedia } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralCtx, CentralRoute } from '../../http/types';
import { PRESIGN_MESSAGES, PRESIGN_SECONDS, verifyPresigned } from '../../http/presign';
import {
  checkDocumentName,
  mediaTargetOf,
  releaseClaim,
  takeClaim,
  takeUploadTurn,
  tooLarge,
} from '../../http/uploads';
import { isObjectNotFound } from '../../objects';
import { recordDocument, settleWritten, writeDocumentFile, type WrittenDocument } from '../document/store';

type Ctx = CentralCtx;

const NOT_FOUND = 'File not found';
const fileParams = z.object({ filename: z.string().max(300) });
const presignedQuery = z.looseObject({
  expires: z.string().optional(),
  signature: z.string().optional(),
  by: z.string().max(100).optional(),
});

/**
 * Public media of the object store, for the admin UI and the learner app (`<media base>/<documentname>`,
 * `<media base>/feedback/<image>`): documents at the root and feedback pictures, nothing else — a key
 * that is not a media file name (a log archive, a path, a hidden file) is not found, whether or not an
 * object holds it. There is no listing.
 */
async function serveKey(ctx: Ctx, key: string): Promise<void> {
  const contentType = mediaContentType(key);
  if (!isMediaKey(key) || !contentType) throw httpError(404, NOT_FOUND);
  const store = ctx.objects;
  let info;
  try {
    info = await store.stat(key);
  } catch (err) {
    if (isObjectNotFound(err)) throw httpError(404, NOT_FOUND);
    throw err;
  }
  await sendMedia(ctx.req, ctx.res, {
    size: info.size,
    etag: info.etag,
    lastModified: info.lastModified,
    contentType,
    open: (range) => store.get(key, range),
  });
}

/**
 * The upload a presigned URL of the folder store admits (decision 26): one PUT of that key before the URL
 * expires, the body being the file itself, under the checks and with the outcome of `POST
 * /document/upload` (an object and its document row, or neither). A refused or broken attempt may be
 * retried with the same URL while it lives; a URL that has uploaded a file is spent.
 */
async function presignedUpload(
  ctx: CentralCtx<{ params: typeof fileParams; query: typeof presignedQuery }>,
): Promise<true> {
  const { req, params, query } = ctx;
  const signature = verifyPresigned(ctx.config, params.filename, query);
  const name = checkDocumentName(params.filename);
  const target = mediaTargetOf(ctx);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > target.maxBytes) throw tooLarge(target.maxBytes);
  const urlClaim = `url:${signature}`;
  // The URL's uploads count for the account that asked for it (signed into it), as its direct uploads do.
  const by = typeof query.by === 'string' && query.by ? query.by : null;
  const endTurn = await takeUploadTurn(req, by ? `account:${by}` : `url:${signature}`);
  // Held a minute past the URL's life, so that it cannot be taken again while the URL verifies.
  const claimed = await takeClaim(target.db, urlClaim, (PRESIGN_SECONDS + 60) * 1000).catch((err: unknown) => {
    endTurn();
    throw err;
  });
  if (!claimed) {
    endTurn();
    throw httpError(403, PRESIGN_MESSAGES.used);
  }
  let written: WrittenDocument | undefined;
  let recorded = false;
  try {
    written = await writeDocumentFile(target, name, req);
    await recordDocument(target.db, written, by);
    recorded = true;
    return true;
  } catch (err) {
    await releaseClaim(target.db, urlClaim);
    // What the client still sends is read and dropped, so that it sees the answer.
    req.resume();
    throw err;
  } finally {
    endTurn();
    if (written)
      await settleWritten(target, written, recorded, (err) =>
        req.log.error({ err }, 'could not remove the file of a refused upload'),
      );
  }
}

/**
 * Routes beyond the contract's catalogue: media serving and the folder store's presigned uploads. They
 * are mounted beside the catalogue's tables, not in them: the persona matrix tests gates, and these
 * answer by the URL (a signature, a file name), not by who calls.
 */
export const mediaRoutes: CentralRoute[] = [
  route('GET', '/media/feedback/:filename', publicGate(), scope.global, { params: fileParams },
    (ctx) => serveKey(ctx, `${FEEDBACK_PREFIX}${ctx.params.filename}`),
    { summary: 'a feedback picture (public; Range, ETag)', addition: true }),
  route('GET', '/media/:filename', publicGate(), scope.global, { params: fileParams },
    (ctx) => serveKey(ctx, ctx.params.filename), { summary: 'a document file (public; Range, ETag)', addition: true }),
  route('PUT', '/media/:filename', publicGate(), scope.global, { params: fileParams, query: presignedQuery },
    presignedUpload,
    {
      rawBody: true,
      addition: true,
      summary: 'upload through a presigned URL of the folder store (one PUT before it expires)',
    }),
];
