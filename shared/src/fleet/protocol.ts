import crypto from 'node:crypto';
import { z } from 'zod';

/**
 * The fleet protocol between a classroom box and central (docs/fleet-protocol.md): the bodies both sides
 * send and answer, in one place. Both sides send `protocol`; central answers with its own, and refuses a
 * box whose protocol it does not speak (400), so that an old box is told, not misread.
 */
export const FLEET_PROTOCOL = 1;

/** The Authorization schemes of the box's two exchanges. */
export const ENROL_SCHEME = 'Enrol';
export const BOX_SCHEME = 'Box';

/**
 * Enrolment codes: 10 characters of an alphabet without look-alikes (no 0/O, 1/I/L, no U), shown in two
 * groups of five. 30^10 is about 6 * 10^14 codes; a code lives hours, is used once, and every wrong try
 * counts against the sign-in limiter.
 */
export const ENROL_CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';
export const ENROL_CODE_LENGTH = 10;

/** A new code, unformatted (uniform: rejection sampling over random bytes). */
export function newEnrolCode(): string {
  const a = ENROL_CODE_ALPHABET;
  const limit = 256 - (256 % a.length);
  let out = '';
  while (out.length < ENROL_CODE_LENGTH) {
    for (const b of crypto.randomBytes(16)) {
      if (b < limit && out.length < ENROL_CODE_LENGTH) out += a[b % a.length];
    }
  }
  return out;
}

/** `ABCDE-FGHJK`: how a code is shown and printed. */
export const formatEnrolCode = (code: string): string => `${code.slice(0, 5)}-${code.slice(5)}`;

/** What a person typed, as the code it means: case, spaces and dashes do not matter. */
export const normaliseEnrolCode = (typed: string): string => typed.toUpperCase().replace(/[\s-]/g, '');

/** SHA-256 hex: how central keeps codes and box secrets. */
export const sha256Hex = (text: string): string => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/** A box's secret: 32 random bytes, hex. Generated on the box; central keeps only its SHA-256. */
export const newBoxSecret = (): string => crypto.randomBytes(32).toString('hex');

const version = z.string().min(1).max(64).regex(/^[\w.+-]+$/, { error: 'must be a version such as 1.4.0' });
const protocol = z.number().int().min(1).max(1000);
const isoTime = z.iso.datetime({ offset: true, error: 'must be an ISO-8601 time' });
export const boxSecretSchema = z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' });

/** POST /fleet/enrol (Authorization: Enrol <code>). */
export const enrolBody = z.strictObject({ secret: boxSecretSchema, version, protocol });
export type EnrolBody = z.infer<typeof enrolBody>;
export interface EnrolAnswer {
  boxid: string;
  schoolid: string;
  schoolname: string | null;
  centraltime: string;
  protocol: number;
}

/** POST /fleet/box/contact (Authorization: Box <boxid>.<secret>). */
export const contactBody = z.strictObject({
  version,
  protocol,
  boxtime: isoTime,
  freediskbytes: z.number().min(0).max(1e18).optional(),
  /** The box's last failure, in words, or null when the last sync went well. */
  lasterror: z.string().max(500).nullable().optional(),
  /** Journal entries on the box that central has not acknowledged (optional: boxes of 1.x before it omit it). */
  rowswaiting: z.number().int().min(0).max(1e12).optional(),
  /** The box's failed syncs in a row (0 after a good one; optional like `rowswaiting`). */
  failures: z.number().int().min(0).max(1e9).optional(),
  /** The settings version the box applied (optional: a box that takes no settings omits it). */
  settingsversion: z.number().int().min(0).max(1e12).optional(),
});
export type ContactBody = z.infer<typeof contactBody>;
export interface ContactAnswer {
  boxid: string;
  schoolid: string;
  centraltime: string;
  /** Central's time minus the box's, as central measured it on this contact. */
  clockskewms: number;
  protocol: number;
  /** The last number of the box's journal central imported (0: none yet): the box sends what follows. */
  ackedseq: number;
  /** The box release central offers this box, or null (absent from a central without releases). */
  release?: ReleaseOffer | null;
  /** The settings central wants the box to run with (optional: a central before them omits it). */
  settings?: { version: number; values: FleetSettings };
  /** Diagnostics requests waiting for this box, oldest first (optional like `settings`). */
  diagnostics?: string[];
}

/** POST /fleet/box/log: a piece's answer. `already`: central had it (nothing was imported again). */
export interface PieceAnswer {
  ackedseq: number;
  already: boolean;
}

/** One media file of the box's school's list (`GET /fleet/box/media`): its SHA-256 (hex) and size in bytes. */
export interface FleetMediaFile {
  name: string;
  sha256: string;
  size: number;
}

const tag = z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' });

/**
 * POST /fleet/box/applied: what the box applied in one run (each body's tag, `media` the media list's) and the
 * bytes it downloaded for them. Central records it as the box's last down, at central's time.
 */
export const appliedBody = z.strictObject({
  protocol,
  applied: z.array(z.strictObject({ kind: z.enum(['package', 'students', 'teachers', 'media']), tag }))
    .min(1).max(4),
  bytes: z.number().int().min(0).max(1e15),
});
export type AppliedBody = z.infer<typeof appliedBody>;

/** Largest body of a box route: the bodies above are a few hundred bytes. */
export const FLEET_BODY_LIMIT = '4kb';

/** The Authorization header value of a box credential. */
export const boxAuthorization = (boxid: string, secret: string): string => `${BOX_SCHEME} ${boxid}.${secret}`;

/** The box credential of a header, or undefined (`Box <boxid>.<secret>`, the scheme in any case). */
export function parseBoxAuthorization(header: string | undefined): { boxid: string; secret: string } | undefined {
  const m = /^box\s+([0-9a-f-]{36})\.([0-9a-f]{64})\s*$/i.exec(header ?? '');
  return m ? { boxid: m[1].toLowerCase(), secret: m[2] } : undefined;
}

/** The enrolment code of a header, normalised, or undefined (`Enrol <code>`). */
export function parseEnrolAuthorization(header: string | undefined): string | undefined {
  const m = /^enrol\s+([A-Za-z0-9 -]{1,40})$/i.exec((header ?? '').trim());
  if (!m) return undefined;
  const code = normaliseEnrolCode(m[1]);
  return code.length === ENROL_CODE_LENGTH ? code : undefined;
}

/**
 * GET /fleet/box/release: the box release central offers this box, or null. A box installs it only from
 * `repourl`, only when the repository is signed by the key of `keyfingerprint` (an OpenPGP fingerprint,
 * upper-case hex), and only in its maintenance window.
 */
export interface ReleaseOffer {
  releaseid: string;
  version: string;
  repourl: string;
  keyfingerprint: string;
}

/** POST /fleet/box/release/report: what became of an offered release on the box. */
export const releaseReportBody = z.strictObject({
  releaseid: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    { error: 'must be a valid GUID' }),
  /** installed: the new version passed its checks; failed: it could not be installed (the box kept its
   * release); rolledback: it was installed, failed its checks, and the box returned to `fromversion`. */
  outcome: z.enum(['installed', 'failed', 'rolledback']),
  fromversion: version.nullable().optional(),
  message: z.string().max(2000).nullable().optional(),
});
export type ReleaseReportBody = z.infer<typeof releaseReportBody>;

/**
 * Settings a box may take from central (docs/fleet-protocol.md, "Settings"). Each is optional: one not set at
 * central leaves the box on its own configuration. Nothing here names a command: central sets values the box
 * already has, within ranges the box also checks.
 */
const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be a local time HH:MM' });
export const FLEET_LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug'] as const;
export const fleetSettingsSchema = z.strictObject({
  /** Seconds between two syncs (the agent's interval; jitter and backoff stay the box's). */
  syncintervalseconds: z.number().int().min(60).max(86_400).optional(),
  /** The box's maintenance window, local times; `end` before `start` crosses midnight. */
  maintenancewindow: z.strictObject({ start: clock, end: clock }).optional(),
  loglevel: z.enum(FLEET_LOG_LEVELS).optional(),
  /** Days the box keeps its own log files. */
  logretentiondays: z.number().int().min(1).max(366).optional(),
});
export type FleetSettings = z.infer<typeof fleetSettingsSchema>;

/** Outside school hours: what a box uses for its maintenance window when central sets none. */
export const DEFAULT_MAINTENANCE_WINDOW = { start: '22:00', end: '05:00' } as const;

/** Whether a local time (minutes after midnight) falls in a window (`end` before `start`: across midnight). */
export function inWindow(w: { start: string; end: string }, minutes: number): boolean {
  const m = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
  const s = m(w.start);
  const e = m(w.end);
  return s <= e ? minutes >= s && minutes < e : minutes >= s || minutes < e;
}

/** Largest diagnostics body a box sends, and what its log part may hold of it. */
export const DIAGNOSTICS_BODY_BYTES = 1536 * 1024;
export const DIAGNOSTICS_LOG_BYTES = 1024 * 1024;

/** POST /fleet/box/diagnostics/:diagnosticid: what the box sends when central asked for diagnostics. */
export const diagnosticsBody = z.strictObject({
  protocol,
  version,
  freediskbytes: z.number().min(0).max(1e18).nullable(),
  /** `PRAGMA integrity_check` (or the server's own check on PostgreSQL): `ok`, or the first problems. */
  integrity: z.string().max(4000),
  migrations: z.strictObject({
    applied: z.array(z.string().max(200)).max(1000),
    pending: z.array(z.string().max(200)).max(1000),
  }),
  /** Rows of the box's main tables. */
  rowcounts: z.record(z.string().max(64), z.number().int().min(0)),
  settings: z.strictObject({ version: z.number().int().min(0), values: fleetSettingsSchema }),
  /** The box's recent log lines, oldest first, learner names removed. */
  logs: z.array(z.string().max(16 * 1024)).max(20_000),
  logbytes: z.number().int().min(0),
  collectedat: isoTime,
});
export type DiagnosticsBody = z.infer<typeof diagnosticsBody>;
