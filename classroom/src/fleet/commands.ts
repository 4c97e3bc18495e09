import fs from 'node:fs';
import { UsageError, type Knex } from '@lms/db';
import { newBoxSecret } from '@lms/shared';
import { VERSION } from '../areas/app/routes';
import { FleetError, centralBase, contact, enrol, isLoopback, type ClientOptions } from './client';
import { readIdentity, recordContact, saveIdentity } from './identity';
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

export async function enrollCommand(args: string[], c: FleetCliContext): Promise<number> {
  const central = option(args, '--central');
  const code = option(args, '--code');
  if (!central || !code) throw new UsageError('usage: enroll --central https://central.example.org --code ABCDE-FGHJK');
  const base = centralBase(central);
  // The credential travels in every request's header: over plain http only to this machine, or when asked.
  if (base.startsWith('http:') && !isLoopback(base) && !args.includes('--allow-http')) {
    throw new UsageError(`${base} is plain http: the box's credential would cross the network readable. ` +
      'Use the https address, or add --allow-http on a network you trust.');
  }
  const secret = newBoxSecret();
  let answer;
  try {
    answer = await enrol(base, code, { secret, version: VERSION }, c.client);
  } catch (err) {
    c.err(`enroll: ${words(err)}`);
    return 1;
  }
  await saveIdentity(c.db, {
    centralurl: base, boxid: answer.boxid, schoolid: answer.schoolid, secret, enrolledat: answer.centraltime,
  });
  c.out(`enrolled at ${base}`);
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
