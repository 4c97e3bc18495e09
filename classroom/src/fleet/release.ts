import type { Knex } from '@lms/db';
import { UsageError } from '@lms/db';
import { boxAuthorization, type ReleaseOffer, type ReleaseReportBody } from '@lms/shared';
import { FleetError, request, type ClientOptions } from './client';
import type { FleetCliContext } from './commands';
import { readIdentity, type FleetIdentity } from './identity';

/**
 * The box's side of staged releases (docs/fleet-protocol.md, "Releases"). Each sync stores the release central
 * offers this box, for the updater (`lms-classroom-update`, run by its own timer as root) to read with
 * `lms-classroom release-offer`; the updater records what became of it with `lms-classroom release-report`,
 * and the next sync delivers that to central. The server itself never installs anything.
 */

export async function readOffer(db: Knex): Promise<ReleaseOffer | undefined> {
  const r = (await db('fleetrelease').where({ id: 1 }).first()) as Record<string, unknown> | undefined;
  return r ? { releaseid: String(r.releaseid), version: String(r.version), repourl: String(r.repourl),
    keyfingerprint: String(r.keyfingerprint) } : undefined;
}

async function storeOffer(db: Knex, offer: ReleaseOffer | null): Promise<void> {
  await db.transaction(async (trx) => {
    const now = await trx('fleetrelease').where({ id: 1 }).first('releaseid');
    if (offer && now?.releaseid === offer.releaseid) return;
    await trx('fleetrelease').where({ id: 1 }).delete();
    if (offer) await trx('fleetrelease').insert({ id: 1, ...offer, offeredat: new Date().toISOString() });
  });
}

/** Kept until delivered: a report written while the link is down reaches central with a later sync. */
export async function recordOutcome(db: Knex, r: ReleaseReportBody): Promise<void> {
  const row = { outcome: r.outcome, fromversion: r.fromversion ?? null, message: r.message ?? null,
    at: new Date().toISOString(), sentat: null };
  await db('fleetreleasereports').insert({ releaseid: r.releaseid, ...row }).onConflict('releaseid').merge(row);
}

/** Delivers the reports not yet sent, then stores central's offer. Returns the offer (null: none). */
export async function syncRelease(db: Knex, identity: FleetIdentity, o: ClientOptions): Promise<ReleaseOffer | null> {
  const auth = boxAuthorization(identity.boxid, identity.secret);
  const unsent = (await db('fleetreleasereports').whereNull('sentat').orderBy('at')) as Array<Record<string, unknown>>;
  for (const r of unsent) {
    try {
      await request(identity.centralurl, 'POST', '/fleet/box/release/report', auth, {
        releaseid: r.releaseid, outcome: r.outcome, fromversion: r.fromversion ?? null, message: r.message ?? null,
      }, o);
    } catch (err) {
      // A release central no longer knows cannot take its report: drop it rather than resend it for ever.
      if (!(err instanceof FleetError && err.status === 404)) throw err;
    }
    await db('fleetreleasereports').where({ releaseid: r.releaseid }).update({ sentat: new Date().toISOString() });
  }
  let answer: { release: ReleaseOffer | null };
  try {
    answer = await request(identity.centralurl, 'GET', '/fleet/box/release', auth, undefined, o);
  } catch (err) {
    // A central without releases (an older one) offers none.
    if (err instanceof FleetError && err.status === 404) answer = { release: null };
    else throw err;
  }
  const offer = answer?.release ?? null;
  await storeOffer(db, offer);
  return offer;
}

/** `release-offer`: the offered release as one JSON line (`{}` when none), for the updater. */
export async function releaseOfferCommand(_args: string[], c: FleetCliContext): Promise<number> {
  if (!(await readIdentity(c.db))) {
    c.out('{}');
    return 0;
  }
  c.out(JSON.stringify((await readOffer(c.db)) ?? {}));
  return 0;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

const OUTCOMES = ['installed', 'failed', 'rolledback'] as const;

/** `release-report --release ID --outcome installed|failed|rolledback [--from VERSION] [--message WORDS]`. */
export async function releaseReportCommand(args: string[], c: FleetCliContext): Promise<number> {
  const releaseid = option(args, '--release');
  const outcome = option(args, '--outcome') as (typeof OUTCOMES)[number] | undefined;
  if (!releaseid || !/^[0-9a-f-]{36}$/i.test(releaseid) || !outcome || !OUTCOMES.includes(outcome)) {
    throw new UsageError('usage: release-report --release ID --outcome installed|failed|rolledback ' +
      '[--from VERSION] [--message WORDS]');
  }
  const message = option(args, '--message')?.slice(0, 2000) ?? null;
  await recordOutcome(c.db, { releaseid, outcome, fromversion: option(args, '--from') ?? null, message });
  c.out(`recorded: release ${releaseid} ${outcome}; the next sync tells central`);
  return 0;
}
