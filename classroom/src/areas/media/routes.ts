import fsp from 'node:fs/promises';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { httpError, isMediaFileName, mediaContentType, publicGate, route, sendMedia, type HandlerContext } from '@lms/shared';
import type { Caller, ClassroomRoute } from '../../http/types';
import { configOf } from '../../http/context';

const NOT_FOUND = 'File not found';

/**
 * The classroom's copy of the lesson media, for tablets without internet: the learner app pointed at this
 * server (`<classroom>/media/<documentname>`) shows pictures and plays audio and video from the school's
 * own box. Public like the cloud's media; flat file names only (no listing, no paths, no hidden or partial
 * files, no links out of the folder).
 */
async function serveMedia({ req, res, params }: HandlerContext<Caller>): Promise<void> {
  const name = params.filename as string;
  const contentType = mediaContentType(name);
  if (!isMediaFileName(name) || !contentType) throw httpError(404, NOT_FOUND);
  const file = path.join(configOf(req).mediaDir, name);
  const st = await fsp.lstat(file).catch(() => undefined);
  if (!st?.isFile()) throw httpError(404, NOT_FOUND);
  await sendMedia(req, res, {
    size: st.size,
    // Size and modification time: a file the sync replaces gets a new tag without being read.
    etag: `${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}`,
    lastModified: st.mtime.toISOString(),
    contentType,
    open: async (range) => fs.createReadStream(file, range ? { start: range.start, end: range.end } : {}),
  });
}

/** Routes beyond the contract's catalogue. */
export const mediaRoutes: ClassroomRoute[] = [
  route('GET', '/media/:filename', publicGate(), { params: z.object({ filename: z.string().max(300) }) }, serveMedia, { summary: 'a lesson media file (public; Range, ETag)', addition: true }),
];
