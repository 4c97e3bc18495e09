import fs from 'node:fs';
import { UsageError, type Knex } from '@lms/db';
import { createLogger, newBoxSecret, type EnrolAnswer } from '@lms/shared';
import { VERSION } from '../areas/app/routes';
import { FleetError, centralBase, contact, enrol, isLoopback, type ClientOptions } from './client';
import { readIdentity, recordContact, saveIdentity } from './identity';
import { startSyncAgent } from './agent';
import { readApplied } from './settings';

/**
 * The box's fleet commands (`lms-classroom enroll`, `lms-classroom fleet-status`). What they print is for
 * the person at the box; the secret is never printed.
 */
export interface FleetCliContext {
  db: Knex;
  dataDir: string;
  client: ClientOptions;
  out: (line: string) => void;
  err: (line: string) => void;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  if (!v || v.startsWith('--')) throw new UsageError(`${name} needs a value`);
  return v;
}

/** Free bytes on the box's data disk, or undefined where the platform cannot tell. */
export function freeDisk(dir: string): number | undefined {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

const words = (err: unknown) => (err instanceof FleetError ? err.message : String((err as Error)?.message ?? err));

/** Refusals of what a person typed, before central is asked (the CLI's usage errors, the page's 400). */
export class EnrolInputError extends Error {}

/**
 * The enrolment both the command and the teacher's page make: a fresh secret generated here, exchanged for
 * the box's credential with the code, and the identity stored. Central's refusal is a FleetError in its words.
 */
export async function enrolBox(
  db: Knex, o: { central: string; code: string; allowHttp: boolean }, client: ClientOptions,
): Promise<EnrolAnswer> {
  let base: string;
  try {
    base = centralBase(o.central);
  } catch (err) {
    throw new EnrolInputError((err as Error).message);
  }
  // The credential travels in every request's header: over plain http only to this machine, or when asked.
  if (base.startsWith('http:') && !isLoopback(base) && !o.allowHttp) {
    throw new EnrolInputError(`${base} is plain http: the box's credential would cross the network readable. ` +
      'Use the https address, or add --allow-http on a network you trust.');
  }
  const secret = newBoxSecret();
  const answer = await enrol(base, o.code, { secret, version: VERSION }, client);
  await saveIdentity(db, {
    centralurl: base, boxid: answer.boxid, schoolid: answer.schoolid, schoolname: answer.schoolname, secret,
    enrolledat: answer.centraltime,
  });
  return answer;
}

export async function enrollCommand(args: string[], c: FleetCliContext): Promise<number> {
  const central = option(args, '--central');
  const code = option(args, '--code');
  if (!central || !code) throw new UsageError('usage: enroll --central https://central.example.org --code ABCDE-FGHJK');
  let answer;
  try {
    answer = await enrolBox(c.db, { central, code, allowHttp: args.includes('--allow-http') }, c.client);
  } catch (err) {
    if (err instanceof EnrolInputError) throw new UsageError(err.message);
    c.err(`enroll: ${words(err)}`);
    return 1;
  }
  c.out(`enrolled at ${centralBase(central)}`);
  c.out(`box     ${answer.boxid}`);
  c.out(`school  ${answer.schoolname ?? '(unnamed)'} (${answer.schoolid})`);
  return 0;
}

export async function fleetStatusCommand(args: string[], c: FleetCliContext): Promise<number> {
  const identity = await readIdentity(c.db);
  if (!identity) {
    c.out('not enrolled: run `lms-classroom enroll --central URL --code CODE` with a code from the fleet page');
    return 1;
  }
  c.out(`central       ${identity.centralurl}`);
  c.out(`box           ${identity.boxid}`);
  c.out(`school        ${identity.schoolid}`);
  c.out(`enrolled at   ${identity.enrolledat}`);
  if (!args.includes('--contact')) {
    c.out(`last contact  ${identity.lastcontactat ?? 'never'}`);
    if (identity.clockskewms !== null) c.out(`clock skew    ${identity.clockskewms} ms (central minus this box)`);
    if (identity.lasterror) c.out(`last error    ${identity.lasterror}`);
    const applied = await readApplied(c.db);
    if (applied.version) {
      const values = Object.entries(applied.values).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v)
        : String(v)}`);
      c.out(`settings      version ${applied.version} from central${values.length ? `: ${values.join(' ')}` : ''}`);
    }
    return 0;
  }
  try {
    const a = await contact(identity.centralurl, identity, {
      version: VERSION, boxtime: new Date().toISOString(), freediskbytes: freeDisk(c.dataDir),
      lasterror: identity.lasterror,
    }, c.client);
    await recordContact(c.db, { lastcontactat: a.centraltime, clockskewms: a.clockskewms, lasterror: null });
    c.out(`last contact  ${a.centraltime} (now)`);
    c.out(`clock skew    ${a.clockskewms} ms (central minus this box)`);
    return 0;
  } catch (err) {
    await recordContact(c.db, { lasterror: words(err) });
    c.err(`contact: ${words(err)}`);
    return 1;
  }
}

/**
 * `fleet-sync`: one sync run now, from this process (up, down and the release offer), printing what it did.
 * The server's own agent may run at the same moment: each step is safe to repeat (a piece central holds is
 * answered `already`; a body is applied in one transaction), so two runs cost bytes, never rows.
 */
export async function fleetSyncCommand(_args: string[], c: FleetCliContext): Promise<number> {
  if (!(await readIdentity(c.db))) {
    c.out('not enrolled: run `lms-classroom enroll --central URL --code CODE` with a code from the fleet page');
    return 1;
  }
  const agent = startSyncAgent(c.db, { intervalMs: 3_600_000, pieceRows: 500, requestTimeoutMs: c.client.timeoutMs,
    minBackoffMs: 30_000, maxBackoffMs: 3_600_000, dataDir: c.dataDir, fetch: c.client.fetch },
  createLogger({ name: 'fleet-sync', level: 'silent' }), { start: false });
  try {
    const r = await agent.syncNow();
    c.out(`up      ${r?.pieces ?? 0} piece(s), ${r?.entries ?? 0} change(s); central holds up to ${r?.ackedseq ?? 0}`);
    const list = (xs: string[] | undefined) => (xs?.length ? xs.join(', ') : 'nothing');
    c.out(`down    applied: ${list(r?.down?.applied)}; refused: ${list(r?.down?.refused)}`);
    return 0;
  } catch (err) {
    c.err(`fleet-sync: ${words(err)}`);
    return 1;
  } finally {
    agent.stop();
  }
}
