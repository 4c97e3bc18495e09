import crypto from 'node:crypto';
import type { Knex } from '@lms/db';

/** Adds app-usage seconds to the user's row of that day (one row per user and UTC day). */
export async function addUsage(db: Knex, schooluserid: string, start: Date, end: Date): Promise<void> {
  const seconds = Math.max(0, (end.getTime() - start.getTime()) / 1000);
  const dayStart = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()));
  const from = dayStart.toISOString();
  const to = new Date(dayStart.getTime() + 86_400_000).toISOString();
  await db.transaction(async (trx) => {
    const row = await trx('studentappusages')
      .where({ schooluserid })
      .andWhere('created_at', '>=', from)
      .andWhere('created_at', '<', to)
      .first();
    const now = new Date().toISOString();
    if (row)
      await trx('studentappusages')
        .where('studentappusageid', row.studentappusageid)
        .update({ time_spent: Number(row.time_spent ?? 0) + seconds, last_updated: now });
    else
      await trx('studentappusages').insert({
        studentappusageid: crypto.randomUUID(),
        schooluserid,
        time_spent: seconds,
        created_at: start.toISOString(),
        last_updated: now,
      });
  });
}

export function usages(db: Knex, schooluserid?: string) {
  const q = db('studentappusages').orderBy('created_at', 'desc');
  if (schooluserid) q.where({ schooluserid });
  return q;
}
