import type { Knex } from '@lms/db';

export interface Branding {
  uitheme: 'kids' | 'corporate';
  brandingconfig: Record<string, unknown> | null;
}

/** Always answers: an unknown or unnamed school gets the default theme. */
export async function brandingOf(db: Knex, schoolname: string): Promise<Branding> {
  if (!schoolname) return { uitheme: 'kids', brandingconfig: null };
  const row = await db('schools')
    .select('uitheme', 'brandingconfig')
    .whereRaw('lower(schoolname) = ?', [schoolname.toLowerCase()])
    .andWhere('isdeleted', false)
    .first();
  return {
    uitheme: row?.uitheme === 'corporate' ? 'corporate' : 'kids',
    brandingconfig: row?.brandingconfig && typeof row.brandingconfig === 'object' ? row.brandingconfig : null,
  };
}
