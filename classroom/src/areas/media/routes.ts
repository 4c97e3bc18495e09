import fsp from 'node:fs/promises';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { httpError, isMediaPath, mediaContentType, publicGate, sendMedia } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomCtx, ClassroomRoute } from '../../http/types';

const NOT_FOUND = 'File not found';

/**
 * The classroom's copy of the lesson media, for tablets without internet: the learner app pointed at this
 * server (`<classroom>/media/<documentname>`) shows pictures and plays audio and video from the school's
 * own box. Public like the cloud's media. Names may hold folders (`demo/counting-to-ten.mp4`, as the
 * curriculum's documents are named); never a listing, a hidden or partial file, `..`, or anything whose real
 * path (links resolved, in the name's folders too) lies outside MEDIA_DIR.
 */
const mediaParams = z.object({ filename: z.string().max(300) });

async function serveMedia({ config, req, res, params }: ClassroomCtx<{ params: typeof mediaParams }>): Promise<void> {
  const name = params.filename;
  const contentType = mediaContentType(name);
  if (!isMediaPath(name) || !contentType) throw httpError(404, NOT_FOUND);
  const file = await insideMediaDir(config.mediaDir, name);
  const st = file ? await fsp.stat(file).catch(() => undefined) : undefined;
  if (!file || !st?.isFile()) throw httpError(404, NOT_FOUND);
  await sendMedia(req, res, {
    size: st.size,
    // Size and modification time: a file the sync replaces gets a new tag without being read.
    etag: `${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}`,
    lastModified: st.mtime.toISOString(),
    contentType,
    open: async (range) => fs.createReadStream(file, range ? { start: range.start, end: range.end } : {}),
  });
}

const realRoots = new Map<string, string>();

/**
 * The file's real path when it lies inside the media folder's real path, else undefined. A link is
 * followed only as far as it stays in the folder, so a technician may still link within it.
 */
async function insideMediaDir(mediaDir: string, name: string): Promise<string | undefined> {
  let root = realRoots.get(mediaDir);
  if (root === undefined) {
    const real = await fsp.realpath(mediaDir).catch(() => undefined);
    if (real === undefined) return undefined;
    realRoots.set(mediaDir, (root = real));
  }
  const real = await fsp.realpath(path.join(mediaDir, name)).catch(() => undefined);
  if (real === undefined || !real.startsWith(root + path.sep)) return undefined;
  return real;
}

/** Routes beyond the contract's catalogue. */
export const mediaRoutes: ClassroomRoute[] = [
  route('GET', '/media/:filename+', publicGate(), { params: mediaParams },
    serveMedia, { summary: 'a lesson media file (public; Range, ETag)', addition: true }),
];
