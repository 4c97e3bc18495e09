import { httpError, perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralCtx, CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { PRESIGN_SECONDS, presignedMediaUrl } from '../../http/presign';
import { UPLOAD_MESSAGES, checkDocumentName, mediaTargetOf, receiveOneFile, takeUploadTurn } from '../../http/uploads';
import {
  changeDocumentTag,
  deleteDocument,
  documentIdParams,
  documentListBody,
  documentTagParams,
  listDocuments,
  nameHeld,
  presignParams,
  recordDocument,
  settleWritten,
  writeDocumentFile,
  type WrittenDocument,
} from './store';

type Ctx = CentralCtx;

/**
 * The media library's upload: the one file part is streamed through the upload checks into the object
 * store under its own name, then the document row is written. Any failure on the way (a refused name
 * or type, a second file part, an oversize file, a dropped connection, a database error) leaves
 * neither the object nor the row.
 */
async function uploadDocument(ctx: Ctx): Promise<true> {
  const target = mediaTargetOf(ctx);
  const endTurn = await takeUploadTurn(ctx.req, `account:${actorOf(ctx.caller) ?? ctx.caller.kind}`);
  let written: WrittenDocument | undefined;
  let recorded = false;
  try {
    await receiveOneFile(ctx.req, async (filename, stream) => {
      written = await writeDocumentFile(target, checkDocumentName(filename), stream);
    }, target.idleMs);
    await recordDocument(target.db, written!, actorOf(ctx.caller));
    recorded = true;
    return true;
  } finally {
    endTurn();
    if (written)
      await settleWritten(target, written, recorded, (err) =>
        ctx.req.log.error({ err }, 'could not remove the file of a refused upload'),
      );
  }
}

/**
 * A 5-minute upload URL for one file name (decision 26). The name passes the upload's name rules now,
 * and a name a live document holds is refused: a URL never lets a file be written over.
 */
async function presign(ctx: CentralCtx<{ params: typeof presignParams }>): Promise<string> {
  const name = checkDocumentName(ctx.params.filename);
  const { db, store } = mediaTargetOf(ctx);
  if (await nameHeld(db, name.key)) throw httpError(400, UPLOAD_MESSAGES.exists);
  if (store.presignPut) return store.presignPut(name.key, PRESIGN_SECONDS);
  return presignedMediaUrl(ctx.req, ctx.config, name.key, actorOf(ctx.caller));
}

export const documentRoutes: CentralRoute[] = [
  route('POST', '/document/upload', perms('create_document'), scope.global, {},
    uploadDocument, { rawBody: true, summary: 'multipart upload of media document(s) to object store' }),
  route('DELETE', '/document/:documentid', perms('delete_document'), scope.global, { params: documentIdParams },
    ({ db, params, caller }) => deleteDocument(db, params.documentid, actorOf(caller), caller),
    { summary: 'soft-delete document (isdeleted flag)' }),
  route('POST', '/document', perms('view_document'), scope.global, { body: documentListBody },
    ({ db, body }) => listDocuments(db, body), { summary: 'paged list of document (pageindex/pagesize/filter)' }),
  route('DELETE', '/document/tag/:documentid/:tag', perms('edit_document_tag'), scope.global,
    { params: documentTagParams },
    ({ db, params, caller }) => changeDocumentTag(db, params.documentid, params.tag, false, actorOf(caller)),
    { summary: 'remove a tag from a document' }),
  route('GET', '/document/tag/:documentid/:tag', perms('view_document'), scope.global, { params: documentTagParams },
    ({ db, params, caller }) => changeDocumentTag(db, params.documentid, params.tag, true, actorOf(caller)),
    { summary: 'add a tag to a document (GET with side effect)' }),
  route('GET', '/document/presign/:filename', perms('view_document'), scope.global, { params: presignParams },
    presign, { summary: 'presigned object-store upload URL for a file name' }),
];
