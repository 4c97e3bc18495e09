import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Knex } from '@lms/db';
import { UsageError } from '@lms/db';
import { boxAuthorization, inWindow, type ReleaseOffer, type ReleaseReportBody } from '@lms/shared';
import { FleetError, request, type ClientOptions } from './client';
import type { FleetCliContext } from './commands';
import { readIdentity, type FleetIdentity } from './identity';
import { maintenanceWindow, readApplied } from './settings';

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

/**
 * Delivers the updater's reports not yet sent, then stores the offer the contact carried (a central without
 * releases carries none: nothing is offered).
 */
export async function syncRelease(db: Knex, identity: FleetIdentity, offer: ReleaseOffer | null | undefined,
  o: ClientOptions): Promise<void> {
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
  // A report just delivered may have withdrawn the offer (central pauses a release a box rolled back): the next
  // contact says so; until then the updater does not retry a release it failed (it keeps its own mark).
  await storeOffer(db, offer ?? null);
}

/**
 * `release-offer`: the offered release as one JSON line (`{}` when none), for the updater, with the box's
 * maintenance window (central's setting, else outside school hours) and whether this box's local time is in it.
 */
export async function releaseOfferCommand(_args: string[], c: FleetCliContext, now = new Date()): Promise<number> {
  const offer = (await readIdentity(c.db)) ? await readOffer(c.db) : undefined;
  if (!offer) {
    c.out('{}');
    return 0;
  }
  const window = maintenanceWindow((await readApplied(c.db)).values);
  c.out(JSON.stringify({ ...offer, window, inwindow: inWindow(window, now.getHours() * 60 + now.getMinutes()) }));
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

/** The OpenPGP keys of a key file (binary, or ASCII-armoured), as packets' bodies of their public keys. */
function publicKeyPackets(file: Buffer): Buffer[] {
  const bin = binaryKey(file);
  const keys: Buffer[] = [];
  let i = 0;
  while (i < bin.length) {
    const head = bin[i];
    if (!(head & 0x80)) throw new Error('not an OpenPGP key file');
    let tag: number;
    let len: number;
    let at: number;
    if (head & 0x40) { // new format
      tag = head & 0x3f;
      const o = bin[i + 1];
      if (o < 192) { len = o; at = i + 2; } else if (o < 224) { len = ((o - 192) << 8) + bin[i + 2] + 192; at = i + 3; }
      else if (o === 255) { len = bin.readUInt32BE(i + 2); at = i + 6; } else throw new Error('partial packet');
    } else { // old format
      tag = (head >> 2) & 0x0f;
      const lt = head & 3;
      if (lt === 0) { len = bin[i + 1]; at = i + 2; } else if (lt === 1) { len = bin.readUInt16BE(i + 1); at = i + 3; }
      else if (lt === 2) { len = bin.readUInt32BE(i + 1); at = i + 5; } else throw new Error('indeterminate packet');
    }
    if (tag === 6) keys.push(bin.subarray(at, at + len));
    i = at + len;
  }
  return keys;
}

/** A primary key's fingerprint (RFC 4880 v4: SHA-1 of 0x99, the length, the packet), upper-case hex. */
export function keyFingerprints(file: Buffer): string[] {
  return publicKeyPackets(file).map((body) => {
    if (body[0] !== 4) throw new Error(`OpenPGP key version ${body[0]} is not supported`);
    const len = Buffer.alloc(3);
    len[0] = 0x99;
    len.writeUInt16BE(body.length, 1);
    return crypto.createHash('sha1').update(len).update(body).digest('hex').toUpperCase();
  });
}

/**
 * `release-key --out FILE|-`: fetches the offered release's signing key from its repository (`key.gpg`) and
 * writes it to FILE for apt's `signed-by` only when its fingerprint is the one central named; exit 1
 * otherwise. Central's word travels over the box's own credential; the repository's over anything.
 */
export async function releaseKeyCommand(args: string[], c: FleetCliContext): Promise<number> {
  const out = option(args, '--out');
  if (!out) throw new UsageError('usage: release-key --out FILE');
  const offer = await readOffer(c.db);
  if (!offer) {
    c.err('release-key: central offers this box no release');
    return 1;
  }
  const url = `${offer.repourl.replace(/\/+$/, '')}/key.gpg`;
  let key: Buffer;
  try {
    const res = await (c.client.fetch ?? fetch)(url, { signal: AbortSignal.timeout(c.client.timeoutMs) });
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    key = Buffer.from(await res.arrayBuffer());
    if (key.length > 1_000_000) throw new Error('the key file is over 1 MB');
  } catch (err) {
    c.err(`release-key: ${url} could not be read (${(err as Error).message})`);
    return 1;
  }
  let found: string[];
  try {
    found = keyFingerprints(key);
  } catch (err) {
    c.err(`release-key: ${url} is not an OpenPGP key (${(err as Error).message})`);
    return 1;
  }
  if (found.length !== 1 || found[0] !== offer.keyfingerprint) {
    c.err(`release-key: the repository's key ${found.join(', ') || '(none)'} is not the key central named ` +
      `(${offer.keyfingerprint}): nothing installed`);
    return 1;
  }
  if (out === '-') {
    process.stdout.write(binaryKey(key));
    c.err(`key ${found[0]} is the one central named`);
  } else {
    fs.writeFileSync(out, binaryKey(key), { mode: 0o644 });
    c.out(`key ${found[0]} written to ${out}`);
  }
  return 0;
}

/** The key file as apt's `signed-by` reads it: binary packets (an ASCII-armoured file is decoded). */
function binaryKey(file: Buffer): Buffer {
  const text = file.toString('latin1');
  if (!text.includes('-----BEGIN PGP PUBLIC KEY BLOCK-----')) return file;
  const body = text.split(/\r?\n\r?\n/).slice(1).join('\n').split('-----END')[0];
  // The armour's last line before the end is its checksum (=XXXX): not part of the packets.
  return Buffer.from(body.split(/\r?\n/).filter((l) => !l.startsWith('=')).join(''), 'base64');
}
