import type { Knex } from '@lms/db';

/** The longest last error a contact may carry (the contact body's limit). */
export const LAST_ERROR_MAX = 500;

/** The box's identity at central, as the box keeps it (one row, id 1; see migration 0004_fleet_identity). */
export interface FleetIdentity {
  centralurl: string;
  boxid: string;
  schoolid: string;
  /** The school's name as central gave it at enrolment (null before migration 0007 or when central had none). */
  schoolname: string | null;
  secret: string;
  enrolledat: string;
  lastcontactat: string | null;
  clockskewms: number | null;
  lasterror: string | null;
  /** The last journal number central acknowledged. */
  ackedseq: number;
  lastupat: string | null;
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

export async function readIdentity(db: Knex): Promise<FleetIdentity | undefined> {
  const row = (await db('fleetidentity').where({ id: 1 }).first()) as Record<string, unknown> | undefined;
  if (!row) return undefined;
  return {
    centralurl: row.centralurl as string,
    boxid: row.boxid as string,
    schoolid: row.schoolid as string,
    schoolname: (row.schoolname as string | null | undefined) ?? null,
    secret: row.secret as string,
    enrolledat: iso(row.enrolledat) ?? '',
    lastcontactat: iso(row.lastcontactat),
    clockskewms: row.clockskewms === null || row.clockskewms === undefined ? null : Number(row.clockskewms),
    lasterror: (row.lasterror as string | null) ?? null,
    ackedseq: Number(row.ackedseq ?? 0),
    lastupat: iso(row.lastupat),
  };
}

/** Enrolling again replaces the identity whole: the old secret is of no use once central replaced it. */
export async function saveIdentity(
  db: Knex, i: Pick<FleetIdentity, 'centralurl' | 'boxid' | 'schoolid' | 'secret' | 'enrolledat'> &
    { schoolname?: string | null },
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('fleetidentity').where({ id: 1 }).delete();
    await trx('fleetidentity').insert({ id: 1, ...i, schoolname: i.schoolname ?? null, lastcontactat: null,
      clockskewms: null, lasterror: null, ackedseq: 0 });
  });
}

/** What the last exchange with central found: a contact's time and skew, or the error in words. */
export async function recordContact(
  db: Knex, o: { lastcontactat?: string; clockskewms?: number; lasterror: string | null },
): Promise<void> {
  // Each contact carries the last error, and central takes at most LAST_ERROR_MAX characters of it.
  const words = o.lasterror && o.lasterror.length > LAST_ERROR_MAX
    ? `${o.lasterror.slice(0, LAST_ERROR_MAX - 1)}…` : o.lasterror;
  await db('fleetidentity').where({ id: 1 }).update({ ...o, lasterror: words });
}
