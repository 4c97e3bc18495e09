import type { Readable } from 'node:stream';
import type { Knex } from '@lms/db';
import {
  FLEET_PROTOCOL,
  LOG_PRIMARY_KEYS,
  PROGRESS_COLLECTIONS,
  PROGRESS_KEYS,
  boxAuthorization,
  writeLogZipFromDocument,
  type LogDocument,
  type LogTable,
  type PieceAnswer,
} from '@lms/shared';
import { FleetError, type ClientOptions } from './client';
import type { FleetIdentity } from './identity';

/**
 * The up path (docs/fleet-protocol.md, "Up"): what the box journaled after central's last acknowledgement,
 * sent in pieces of at most `pieceRows` journal entries, each the spec's log ZIP of those rows as they are
 * now. A piece is named by the first and last journal numbers it covers; central acknowledges the last.
 * A cut link costs at most the piece in flight: the next sync starts after the last acknowledged number.
 */
type Row = Record<string, unknown>;

export interface Piece {
  first: number;
  last: number;
  /** Journal entries covered (a row changed twice in a piece travels once). */
  entries: number;
  doc: LogDocument;
}

const chunks = <T>(list: T[], n = 500): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += n) out.push(list.slice(i, i + n));
  return out;
};

async function rowsOf(db: Knex, table: LogTable, keys: string[]): Promise<Row[]> {
  const out: Row[] = [];
  for (const part of chunks(keys)) out.push(...((await db(table).whereIn(LOG_PRIMARY_KEYS[table], part)) as Row[]));
  return out;
}

/** The next piece after `after`, or undefined when nothing waits. */
export async function nextPiece(db: Knex, after: number, pieceRows: number): Promise<Piece | undefined> {
  const entries = (await db('fleetchanges').where('seq', '>', after).orderBy('seq').limit(pieceRows)
    .select('seq', 'tablename', 'rowkey')) as Array<{ seq: number | string; tablename: string; rowkey: string }>;
  if (!entries.length) return undefined;
  const keys = new Map<string, Set<string>>();
  for (const e of entries) {
    if (!keys.has(e.tablename)) keys.set(e.tablename, new Set());
    keys.get(e.tablename)!.add(e.rowkey);
  }
  const keysOf = (t: string) => [...(keys.get(t) ?? [])];
  // A question travels inside its result (the log's layout): a changed question sends its result whole.
  const questionRows = await rowsOf(db, 'studentprogressquestions', keysOf('studentprogressquestions'));
  const resultKeys = new Set([...keysOf('studentprogress'), ...questionRows.map((q) => String(q.studentprogressid))]);
  const results = await rowsOf(db, 'studentprogress', [...resultKeys]);
  const questions: Row[] = [];
  for (const part of chunks(results.map((r) => String(r.studentprogressid)))) {
    questions.push(...((await db('studentprogressquestions').whereIn('studentprogressid', part)
      .orderBy('studentprogressquestionid')) as Row[]));
  }
  const byResult = new Map<string, Row[]>();
  for (const q of questions) {
    const id = String(q.studentprogressid);
    byResult.set(id, [...(byResult.get(id) ?? []), q]);
  }
  const progress = Object.fromEntries(await Promise.all(PROGRESS_KEYS.map(async (k) =>
    [k, await rowsOf(db, PROGRESS_COLLECTIONS[k], keysOf(PROGRESS_COLLECTIONS[k]))]))) as Record<string, Row[]>;
  const doc = {
    log: {
      result: results.map((r) => ({ ...r, studentprogressquestions: byResult.get(String(r.studentprogressid)) ?? [] })),
      progress,
      access: await rowsOf(db, 'rpiuseraccess', keysOf('rpiuseraccess')),
    },
  } as unknown as LogDocument;
  return { first: Number(entries[0].seq), last: Number(entries[entries.length - 1].seq), entries: entries.length, doc };
}

async function bufferOf(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** Sends one piece; central's answer names what it now holds. */
export async function sendPiece(identity: FleetIdentity, piece: Piece, o: ClientOptions): Promise<PieceAnswer> {
  const zip = await bufferOf(writeLogZipFromDocument(piece.doc));
  const form = new FormData();
  form.append('importfile', new Blob([zip], { type: 'application/zip' }), `fleet-${piece.first}-${piece.last}.zip`);
  const f = o.fetch ?? fetch;
  let res: Response;
  try {
    res = await f(`${identity.centralurl}/fleet/box/log`, {
      method: 'POST',
      headers: {
        Authorization: boxAuthorization(identity.boxid, identity.secret),
        'X-Fleet-First': String(piece.first),
        'X-Fleet-Last': String(piece.last),
        'X-Fleet-Protocol': String(FLEET_PROTOCOL),
      },
      body: form,
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    throw new FleetError(0, `Central at ${identity.centralurl} could not be reached (${
      (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message})`);
  }
  let body: { error?: boolean; errormessage?: string; data?: PieceAnswer } | undefined;
  try {
    body = (await res.json()) as typeof body;
  } catch {
    body = undefined;
  }
  if (!res.ok || !body || body.error || !body.data) {
    const retry = Number(res.headers.get('retry-after'));
    throw new FleetError(res.status, body?.errormessage ?? `central answered ${res.status}`,
      Number.isFinite(retry) && retry > 0 ? retry : undefined);
  }
  return body.data;
}

export interface UpResult {
  pieces: number;
  entries: number;
  ackedseq: number;
}

/**
 * Sends every waiting piece, one after the other, starting after what central says it holds (`acked`, from
 * the contact). Each acknowledgement is recorded, and the journal entries it covers deleted, before the
 * next piece is built; a failure stops the run with what was acknowledged kept.
 */
export async function syncUp(
  db: Knex, identity: FleetIdentity, acked: number, o: ClientOptions & { pieceRows: number },
): Promise<UpResult> {
  let after = Math.max(acked, identity.ackedseq);
  await acknowledge(db, after);
  const done: UpResult = { pieces: 0, entries: 0, ackedseq: after };
  for (;;) {
    const piece = await nextPiece(db, after, o.pieceRows);
    if (!piece) return done;
    const answer = await sendPiece(identity, piece, o);
    after = Math.max(after, answer.ackedseq);
    if (after < piece.last) throw new FleetError(0, `central acknowledged ${answer.ackedseq}, not ${piece.last}`);
    await acknowledge(db, after);
    done.pieces += 1;
    done.entries += piece.entries;
    done.ackedseq = after;
  }
}

async function acknowledge(db: Knex, seq: number): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('fleetidentity').where({ id: 1 }).where('ackedseq', '<', seq)
      .update({ ackedseq: seq, lastupat: new Date().toISOString() });
    await trx('fleetchanges').where('seq', '<=', seq).delete();
  });
}
