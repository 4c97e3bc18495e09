import crypto from 'node:crypto';
import { isUniqueViolation, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../auth/validation';
import { applyFilters, pageRows, pagingBody, type Paging } from '../http/paging';

/**
 * The two tag vocabularies of the content library, `documenttags` and `questiontags`: the same shapes,
 * rules and messages (contract §8), one implementation. Names are unique, ignoring case, among live tags.
 */
export type TagKind = 'document' | 'question';

export function tagStore(kind: TagKind) {
  const table = `${kind}tags`;
  const idCol = `${kind}tagid`;
  const nameCol = `${kind}tagname`;
  const label = kind === 'document' ? 'Document' : 'Question';
  const messages = { exists: `${label} tag already exists`, invalid: `Invalid ${kind} tag id` };

  const name = z
    .string({ error: 'is required' })
    .trim()
    .min(1, { error: 'is not allowed to be empty' })
    .min(3, { error: 'length must be at least 3 characters long' })
    .max(8, { error: 'length must be less than or equal to 8 characters long' })
    .regex(/^[A-Za-z0-9]+$/, { error: 'must only contain alpha-numeric characters' });
  const body = strictBody({ [nameCol]: name }) as z.ZodType<Record<string, string>>;
  const params = z.object({ [idCol]: z.string().uuid({ error: 'must be a valid GUID' }) }) as z.ZodType<
    Record<string, string>
  >;
  const listBody = pagingBody([nameCol]);

  async function live(db: Knex, id: string) {
    return db(table).where({ [idCol]: id, isdeleted: false }).first();
  }
  async function requireLive(db: Knex, id: string) {
    const row = await live(db, id);
    if (!row) throw httpError(400, messages.invalid);
    return row;
  }
  async function nameTaken(db: Knex, value: string, except?: string): Promise<boolean> {
    const q = db(table).where({ isdeleted: false }).whereRaw('lower(??) = ?', [nameCol, value.toLowerCase()]);
    if (except) q.whereNot({ [idCol]: except });
    return !!(await q.first(idCol));
  }
  /**
   * Runs a write whose name rule is checked inside its transaction; a race the database decides answers the same 400.
   */
  async function writing<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work);
    } catch (err) {
      if (isUniqueViolation(err)) throw httpError(400, messages.exists);
      throw err;
    }
  }

  return {
    messages,
    body,
    params,
    listBody,

    /** Stored trimmed and lower-cased, as the original did. */
    async create(db: Knex, input: Record<string, string>, by: string | null) {
      const value = input[nameCol].toLowerCase();
      const id = crypto.randomUUID();
      await writing(db, async (trx) => {
        if (await nameTaken(trx, value)) throw httpError(400, messages.exists);
        const now = new Date().toISOString();
        await trx(table).insert({
          [idCol]: id,
          [nameCol]: value,
          isdeleted: false,
          created_at: now,
          created_by: by,
          updated_at: now,
          updated_by: by,
        });
      });
      return live(db, id);
    },

    get: (db: Knex, id: string) => requireLive(db, id),

    /** A rename keeps the case it is given (the original lower-cased only on create). */
    async update(db: Knex, id: string, input: Record<string, string>, by: string | null) {
      await writing(db, async (trx) => {
        await requireLive(trx, id);
        if (await nameTaken(trx, input[nameCol], id)) throw httpError(400, messages.exists);
        await trx(table)
          .where({ [idCol]: id })
          .update({ [nameCol]: input[nameCol], updated_at: new Date().toISOString(), updated_by: by });
      });
      return live(db, id);
    },

    async remove(db: Knex, id: string, by: string | null): Promise<true> {
      await requireLive(db, id);
      await db(table)
        .where({ [idCol]: id })
        .update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
      return true;
    },

    async list(db: Knex, paging: Paging) {
      const base = db(table).where({ isdeleted: false });
      applyFilters(base, paging, (k) => k);
      return pageRows(base, paging, [{ column: nameCol }, { column: idCol }]);
    },
  };
}
