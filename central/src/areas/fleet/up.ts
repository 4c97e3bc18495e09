import { httpError, isZipError, startLogReader } from '@lms/shared';
import { z } from 'zod';
import type { CentralCtx } from '../../http/types';
import { importLogZip } from '../log/import';
import { importSlotsOf } from '../log/slots';
import { spoolUpload } from '../log/upload';

/**
 * A piece of a box's activity (docs/fleet-protocol.md, "Up"): the spec's log ZIP (log.ini with log.result,
 * log.progress, log.access) holding the rows the box journaled from `X-Fleet-First` to `X-Fleet-Last`, two
 * numbers of the box's own counter. Central imports it through the path `PUT /log/import` uses (the same
 * merge by key, progress tables, pending rows, sync row and archive), for the box's school, and records
 * `X-Fleet-Last` as acknowledged in the same transaction. A piece whose last number is acknowledged already
 * is answered "already have it" without being read.
 */
const seqHeader = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** Raised inside the import's transaction when another request acknowledged the piece first: rolls it back. */
class AlreadyAcknowledged extends Error {}

export async function receivePiece(ctx: CentralCtx): Promise<unknown> {
  const { req, caller, db, objects, logger, config } = ctx;
  if (caller.kind !== 'box') throw httpError(401, 'Unauthorized');
  const first = seqHeader.safeParse(req.headers['x-fleet-first']);
  const last = seqHeader.safeParse(req.headers['x-fleet-last']);
  if (!first.success || !last.success || first.data > last.data)
    throw httpError(400, 'X-Fleet-First and X-Fleet-Last must be whole numbers from 1, first at most last');
  const box = (await db('boxes as b').leftJoin('schools as s', 's.schoolid', 'b.schoolid')
    .where('b.boxid', caller.boxid).first('b.ackedseq', 's.schoolname')) as
    { ackedseq: number | string; schoolname: string | null } | undefined;
  const acked = Number(box?.ackedseq ?? 0);
  const already = () => {
    // The body is not needed: read and dropped, so that the box sees the answer, not a reset.
    req.resume();
    return { ackedseq: acked, already: true };
  };
  if (last.data <= acked) return already();
  const upload = await spoolUpload(req, 'importfile', config.maxUploadBytes, config.uploadIdleMs);
  let release: (() => void) | undefined;
  let reader: ReturnType<typeof startLogReader> | undefined;
  try {
    // Waits its turn among the instance's log imports (429 with Retry-After when every slot stays busy); the
    // reader's thread starts only with the slot, so pieces waiting their turn hold no thread and no memory.
    release = await importSlotsOf(config).slot();
    reader = startLogReader();
    const summary = await importLogZip({ db, objects, logger }, {
      filePath: upload.path, schooluserid: caller.boxid, offline: false, reader,
      box: {
        schoolname: box?.schoolname ?? null,
        within: async (trx) => {
          const n = await trx('boxes').where({ boxid: caller.boxid }).where('ackedseq', '<', last.data).update({
            ackedseq: last.data, lastupat: new Date().toISOString(), lastupbytes: upload.size,
            lastgoodat: new Date().toISOString(),
          });
          if (!n) throw new AlreadyAcknowledged();
        },
      },
    });
    const rows = Object.values(summary.imported).reduce((n, k) => n + (k ?? 0), 0);
    await db('boxes').where({ boxid: caller.boxid }).update({ lastuprows: rows });
    logger.info({ boxid: caller.boxid, first: first.data, last: last.data, rows, bytes: upload.size },
      'fleet piece imported');
    return { ackedseq: last.data, already: false, imported: summary.imported, pending: summary.pending,
      refused: summary.refused };
  } catch (err) {
    if (err instanceof AlreadyAcknowledged) return { ackedseq: last.data, already: true };
    // A piece the box cannot have meant: it is told what is wrong, and nothing of it was kept.
    if (isZipError(err)) throw httpError(400, `The piece is not a log ZIP central can read (${err.message})`);
    throw err;
  } finally {
    reader?.dispose();
    release?.();
    await upload.dispose();
  }
}
