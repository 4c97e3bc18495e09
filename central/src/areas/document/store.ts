import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import {
  UPLOAD_CLAIM_MS,
  UPLOAD_MESSAGES,
  putChecked,
  releaseClaim,
  takeClaim,
  type CheckedName,
  type MediaTarget,
} from '../../http/uploads';
import type { StoredObject } from '../../objects';
import { requireUsedWithin } from '../../http/scope';
import type { Caller } from '../../http/types';

export const documentListBody = pagingBody(['documentname', 'documenttypeid', 'documenttags']);
// The original validates neither; bounded so that a path cannot be used to send a large value.
export const documentIdParams = z.object({ documentid: z.string().max(100) });
export const documentTagParams = z.object({
  documentid: z.string().uuid({ error: 'must be a valid GUID' }),
  tag: z
    .string()
    .trim()
    .min(1, { error: 'is not allowed to be empty' })
    .max(45, { error: 'length must be less than or equal to 45 characters long' }),
});
export const presignParams = z.object({ filename: z.string().max(300) });

const LIST_COLUMNS = ['documentid', 'documentname', 'documenttypeid', 'isdeleted', 'documenttags'];

/**
 * The media library page: live documents, most recently changed first. `documentname` and
 * `documenttags` match by substring (IPaging semantics); `documenttypeid` by value, as the question
 * editor's file picker sends it (`"1"` for audio).
 */
export async function listDocuments(db: Knex, body: Paging) {
  const base = db('documents').where({ isdeleted: false });
  applyFilters(base, { filter: (body.filter ?? []).filter((f) => f.key === 'documentname') }, (k) => k);
  for (const f of body.filter ?? []) {
    const values = (Array.isArray(f.value) ? f.value : (f.value ?? '').split(',')).map((v) => v.trim()).filter(Boolean);
    if (f.key === 'documenttypeid') {
      for (const v of values) {
        if (/^\d{1,9}$/.test(v)) base.where('documenttypeid', Number(v));
        else base.whereRaw('1 = 0');
      }
    } else if (f.key === 'documenttags') {
      // The tags are a JSON list: matched in its text, which is the same on both databases.
      for (const v of values)
        base.whereRaw("lower(cast(documenttags as text)) like ? escape '\\'", [
          `%${JSON.stringify(v.toLowerCase())
            .slice(1, -1)
            .replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
        ]);
    }
  }
  return pageRows(base, body, [{ column: 'lastupdated', order: 'desc' }, { column: 'documentid' }], LIST_COLUMNS);
}

async function liveDocument(db: Knex, documentid: string) {
  return db('documents').where({ documentid, isdeleted: false }).first('documentid', 'documenttags');
}

/** Soft delete; the file stays, for lessons that still show it. An unknown id is a no-op, as in the original. */
export async function deleteDocument(db: Knex, documentid: string, by: string | null, caller?: Caller): Promise<true> {
  if (caller) await requireUsedWithin(db, caller, { documentid });
  const now = new Date().toISOString();
  await db('documents')
    .where({ documentid, isdeleted: false })
    .update({ isdeleted: true, deleted_at: now, deleted_by: by });
  return true;
}

/** Adds (`add`) or removes a tag; the list stays free of duplicates and `lastupdated` moves. */
export async function changeDocumentTag(
  db: Knex,
  documentid: string,
  tag: string,
  add: boolean,
  by: string | null,
): Promise<true> {
  await db.transaction(async (trx) => {
    const doc = await liveDocument(trx, documentid);
    if (!doc) return;
    const tags = Array.isArray(doc.documenttags)
      ? (doc.documenttags as unknown[]).filter((t): t is string => typeof t === 'string')
      : [];
    const next = add ? [...new Set([...tags, tag])] : tags.filter((t) => t !== tag);
    const now = new Date().toISOString();
    await trx('documents')
      .where({ documentid })
      .update({ documenttags: JSON.stringify(next), lastupdated: now, updated_at: now, updated_by: by });
  });
  return true;
}

/** Whether a live document holds this name: its file is then never written over. */
export async function nameHeld(db: Knex, documentname: string): Promise<boolean> {
  return !!(await db('documents').where({ documentname, isdeleted: false }).first('documentid'));
}

export interface WrittenDocument {
  name: CheckedName;
  stored: StoredObject;
  /** The claim on the name, held until the row is written or the object removed. */
  claim: string;
}

/**
 * Writes a document's file into the object store under its name, through the upload checks. A name a
 * live document holds, or that another upload is writing at this moment, is refused before a byte is
 * stored. On failure nothing is stored and the name is free again.
 */
export async function writeDocumentFile(t: MediaTarget, name: CheckedName, source: Readable): Promise<WrittenDocument> {
  if (await nameHeld(t.db, name.key)) throw httpError(400, UPLOAD_MESSAGES.exists);
  const claim = `name:${name.key}`;
  if (!(await takeClaim(t.db, claim, UPLOAD_CLAIM_MS))) throw httpError(400, UPLOAD_MESSAGES.exists);
  try {
    // Another upload of the name may have recorded its row and given the claim back since the check
    // above: writing now would overwrite its object, and the refusal that follows would delete it.
    if (await nameHeld(t.db, name.key)) throw httpError(400, UPLOAD_MESSAGES.exists);
    const stored = await putChecked(t.store, name.key, source, {
      ext: name.ext,
      contentType: name.contentType,
      maxBytes: t.maxBytes,
      idleMs: t.idleMs,
    });
    return { name, stored, claim };
  } catch (err) {
    await releaseClaim(t.db, claim);
    throw err;
  }
}

/** The document row of a written file; the name is checked again inside the transaction. */
export async function recordDocument(db: Knex, written: WrittenDocument, by: string | null): Promise<string> {
  const documentid = crypto.randomUUID();
  await db.transaction(async (trx) => {
    if (await nameHeld(trx, written.name.key)) throw httpError(400, UPLOAD_MESSAGES.exists);
    const now = new Date().toISOString();
    await trx('documents').insert({
      documentid,
      documenttypeid: written.name.filetype,
      documentname: written.name.key,
      documents3meta: JSON.stringify(written.stored),
      isdeleted: false,
      documenttags: JSON.stringify([]),
      lastupdated: now,
      created_at: now,
      created_by: by,
      updated_at: now,
      updated_by: by,
    });
  });
  return documentid;
}

/**
 * Undoes a written file whose document row could not be written (or whose request failed after the
 * file was stored): the object goes, then the claim. Failures are logged by the caller's error path;
 * a leftover object under a name no live document holds is overwritten by the next upload of it.
 */
export async function discardDocumentFile(t: MediaTarget, written: WrittenDocument): Promise<void> {
  try {
    await t.store.delete(written.name.key);
  } finally {
    await releaseClaim(t.db, written.claim);
  }
}

/** After a write: the claim goes once the row is in; otherwise the object goes with it. */
export async function settleWritten(
  t: MediaTarget,
  written: WrittenDocument,
  recorded: boolean,
  onError: (err: unknown) => void,
): Promise<void> {
  if (recorded) await releaseClaim(t.db, written.claim);
  else await discardDocumentFile(t, written).catch(onError);
}
