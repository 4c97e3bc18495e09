import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import { z } from 'zod';

export const allStandardsQuery = z.looseObject({ standardname: z.string().optional(), schoolname: z.string().optional() });

/** Class list for the filter dropdowns (deleted classes included, as the original does). */
export async function allStandards(db: Knex, q: z.infer<typeof allStandardsQuery>) {
  const query = db('standards as s').leftJoin('schools as sc', 'sc.schoolid', 's.schoolid').orderBy('s.standardname');
  if (q.standardname) query.where('s.standardname', 'like', `%${q.standardname}%`);
  if (q.schoolname) query.where((w) => w.where('sc.schoolname', q.schoolname).orWhere('s.schoolname', q.schoolname));
  const rows = await readRows<{ standardid: string; standardname: string; joinedschool: string | null; ownschool: string | null }>(
    query.select('s.standardid', 's.standardname', 'sc.schoolname as joinedschool', 's.schoolname as ownschool'),
  );
  return rows.map((r) => ({
    standardid: r.standardid,
    standardname: r.standardname,
    school: { schoolname: r.joinedschool ?? r.ownschool },
  }));
}

/** Data migration: every class that belongs to no school is copied into every school that lacks a class of that name. */
export async function copySchoollessStandards(db: Knex, by: string | null): Promise<string> {
  await db.transaction(async (trx) => {
    const orphans = await trx('standards').whereNull('schoolid').where({ isdeleted: false }).select('standardname');
    const names = [...new Set(orphans.map((o: { standardname: string }) => o.standardname))];
    const schools = await trx('schools').where({ isdeleted: false }).select('schoolid', 'schoolname');
    const existing = await trx('standards').whereNotNull('schoolid').select('schoolid', 'standardname');
    const have = new Set(existing.map((e: { schoolid: string; standardname: string }) => `${e.schoolid}\u0000${e.standardname}`));
    const rows = [];
    for (const s of schools) {
      for (const standardname of names) {
        if (have.has(`${s.schoolid}\u0000${standardname}`)) continue;
        rows.push({ standardid: crypto.randomUUID(), standardname, schoolid: s.schoolid, schoolname: s.schoolname, created_by: by });
      }
    }
    if (rows.length) await trx.batchInsert('standards', rows, 200);
  });
  return 'Migrated successfully!';
}

/** Data migration: classes no learner belongs to are removed for good. */
export async function removeUnusedStandards(db: Knex): Promise<string> {
  await db('standards')
    .whereNotIn('standardid', db('students').whereNotNull('standard').select('standard'))
    .del();
  return 'Removed class successfully!';
}
