import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { DIAGNOSTICS_BODY_BYTES, diagnosticsBody, httpError } from '@lms/shared';
import { z } from 'zod';
import { uuidParam } from '../../auth/validation';
import type { CentralCtx } from '../../http/types';

/**
 * Diagnostics from a box (docs/fleet-protocol.md, "Diagnostics"): a person asks at central; the box sees the
 * request in its next contact's answer and sends what it can tell about itself (version, free disk, database
 * integrity, migrations, row counts, its recent log lines with learners' names removed). Central keeps it
 * FLEET_DIAGNOSTICS_DAYS. A request only ever makes the box send a fixed report: nothing runs on the box.
 */
export const diagnosticParams = z.strictObject({
  boxid: z.string().regex(/^[0-9a-f-]{36}$/i, { error: 'must be a valid GUID' }),
  diagnosticid: z.string().regex(/^[0-9a-f-]{36}$/i, { error: 'must be a valid GUID' }),
});
export const boxDiagnosticParams = uuidParam('diagnosticid', 'must be a valid GUID');
/** What a box sends: a report up to DIAGNOSTICS_BODY_BYTES, as JSON. */
export const DIAGNOSTICS_BODY_LIMIT = `${Math.ceil(DIAGNOSTICS_BODY_BYTES / 1024) + 64}kb`;

const NOT_FOUND = 'Diagnostics not found';

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

function summary(r: Record<string, unknown>) {
  return {
    diagnosticid: r.diagnosticid as string,
    boxid: r.boxid as string,
    state: r.state as string,
    requestedat: iso(r.requestedat),
    receivedat: iso(r.receivedat),
    bytes: r.bytes === null || r.bytes === undefined ? null : Number(r.bytes),
  };
}

const SUMMARY = ['diagnosticid', 'boxid', 'state', 'requestedat', 'receivedat', 'bytes'];

export async function requestDiagnostics(db: Knex, boxid: string, by: string | null) {
  // A request the box has not answered yet is the answer: a person pressing the button twice asks once.
  const waiting = (await db('boxdiagnostics').where({ boxid, state: 'requested' }).orderBy('requestedat')
    .first(SUMMARY)) as Record<string, unknown> | undefined;
  if (waiting) return summary(waiting);
  const diagnosticid = crypto.randomUUID();
  await db('boxdiagnostics').insert({ diagnosticid, boxid, requestedby: by, state: 'requested',
    requestedat: new Date().toISOString() });
  return summary((await db('boxdiagnostics').where({ diagnosticid }).first(SUMMARY)) as Record<string, unknown>);
}

export async function listDiagnostics(db: Knex, boxid: string) {
  const rows = (await db('boxdiagnostics').where({ boxid }).orderBy([{ column: 'requestedat', order: 'desc' },
    { column: 'diagnosticid' }]).limit(100).select(SUMMARY)) as Array<Record<string, unknown>>;
  return { diagnostics: rows.map(summary) };
}

export async function getDiagnostics(db: Knex, boxid: string, diagnosticid: string) {
  const row = (await db('boxdiagnostics').where({ boxid, diagnosticid }).first()) as
    Record<string, unknown> | undefined;
  if (!row) throw httpError(404, NOT_FOUND);
  return { ...summary(row), report: row.body ? (JSON.parse(row.body as string) as unknown) : null };
}

/** The requests waiting for a box, oldest first: the contact's answer names them. */
export async function pendingDiagnostics(db: Knex, boxid: string): Promise<string[]> {
  const rows = (await db('boxdiagnostics').where({ boxid, state: 'requested' }).orderBy('requestedat')
    .limit(5).select('diagnosticid')) as Array<{ diagnosticid: string }>;
  return rows.map((r) => r.diagnosticid);
}

/** A box's report for one of its own requests; sending it again changes nothing. */
export async function receiveDiagnostics(
  ctx: CentralCtx<{ params: typeof boxDiagnosticParams; body: typeof diagnosticsBody }>,
) {
  const { db, caller, params, body } = ctx;
  if (caller.kind !== 'box') throw httpError(401, 'Unauthorized');
  // Another box's request is answered as one that does not exist.
  const row = (await db('boxdiagnostics').where({ diagnosticid: params.diagnosticid, boxid: caller.boxid })
    .first('state')) as { state: string } | undefined;
  if (!row) throw httpError(404, NOT_FOUND);
  if (row.state !== 'requested') return { recorded: false, already: true };
  const text = JSON.stringify(body);
  if (Buffer.byteLength(text) > DIAGNOSTICS_BODY_BYTES)
    throw httpError(413, `A diagnostics report holds at most ${DIAGNOSTICS_BODY_BYTES} bytes`);
  await db('boxdiagnostics').where({ diagnosticid: params.diagnosticid, boxid: caller.boxid, state: 'requested' })
    .update({ state: 'received', receivedat: new Date().toISOString(), body: text, bytes: Buffer.byteLength(text) });
  return { recorded: true, already: false };
}

/** Deletes diagnostics requested more than `days` ago (the retention sweep's part); returns how many. */
export async function sweepDiagnostics(db: Knex, days: number): Promise<number> {
  const cutoff = new Date(Date.now() - days * 86_400_000).toISOString();
  return db('boxdiagnostics').where('requestedat', '<', cutoff).delete();
}
