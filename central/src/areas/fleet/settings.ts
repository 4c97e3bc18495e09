import type { Knex } from '@lms/db';
import { fleetSettingsSchema, httpError, type FleetSettings } from '@lms/shared';
import { uuidParam } from '../../auth/validation';
import { schoolInScope, type Scope } from '../../http/scope';

/**
 * Settings a box takes from central (docs/fleet-protocol.md, "Settings"): set fleet-wide, per school or per
 * box, each level holding only what it sets; a box runs with the box level over the school's over the
 * fleet's, and with its own configuration for what none sets. A row's `version` grows on every write and a
 * row is never deleted (clearing writes `{}`), so the sum over the rows that apply to a box — its wanted
 * version — grows with every change that reaches it.
 */
export type SettingsLevel = 'fleet' | 'school' | 'box';

/** PUT replaces the level's settings whole: what is not in the body is no longer set at that level. */
export const settingsBody = fleetSettingsSchema;
export const schoolParams = uuidParam('schoolid', 'must be a valid GUID');

interface SettingsRow { level: string; targetid: string; settings: unknown; version: number | string;
  updatedat: unknown; updatedby: string | null }

const parsed = (v: unknown): FleetSettings => {
  const o = typeof v === 'string' ? (JSON.parse(v) as unknown) : v;
  // A row written by a later release may hold a setting this one does not know: it is left out, not refused.
  const r = fleetSettingsSchema.safeParse(o);
  if (r.success) return r.data;
  const known = Object.keys(fleetSettingsSchema.shape);
  const only = Object.fromEntries(Object.entries((o ?? {}) as Record<string, unknown>)
    .filter(([k]) => known.includes(k)));
  const again = fleetSettingsSchema.safeParse(only);
  return again.success ? again.data : {};
};

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

function levelView(row: SettingsRow | undefined) {
  return {
    settings: row ? parsed(row.settings) : {},
    version: row ? Number(row.version) : 0,
    updatedat: row ? iso(row.updatedat) : null,
  };
}

const targetOf = (level: SettingsLevel, id: string | null) => (level === 'fleet' ? '' : id ?? '');

async function rowOf(db: Knex, level: SettingsLevel, targetid: string): Promise<SettingsRow | undefined> {
  return (await db('boxsettings').where({ level, targetid }).first()) as SettingsRow | undefined;
}

/** Writes one level's settings whole; the row's version grows by one in the same statement. */
async function writeLevel(db: Knex, level: SettingsLevel, targetid: string, settings: FleetSettings,
  by: string | null): Promise<void> {
  const now = new Date().toISOString();
  await db('boxsettings')
    .insert({ level, targetid, settings: JSON.stringify(settings), version: 1, updatedat: now, updatedby: by })
    .onConflict(['level', 'targetid'])
    .merge({ settings: JSON.stringify(settings), updatedat: now, updatedby: by,
      version: db.raw('?? + 1', ['boxsettings.version']) });
}

/** What a box runs with, and its version: the box level over the school's over the fleet's. */
export async function effectiveSettings(db: Knex, box: { boxid: string; schoolid: string }):
  Promise<{ version: number; values: FleetSettings }> {
  const rows = (await db('boxsettings')
    .where((q) => q.where({ level: 'fleet', targetid: '' })
      .orWhere({ level: 'school', targetid: box.schoolid })
      .orWhere({ level: 'box', targetid: box.boxid }))) as SettingsRow[];
  const by = new Map(rows.map((r) => [r.level, r]));
  const values: FleetSettings = {};
  let version = 0;
  for (const level of ['fleet', 'school', 'box'] as const) {
    const r = by.get(level);
    if (!r) continue;
    Object.assign(values, parsed(r.settings));
    version += Number(r.version);
  }
  return { version, values };
}

/** The wanted version of each box of a page, in three queries whatever the page's size. */
export async function wantedVersions(db: Knex, boxes: Array<{ boxid: string; schoolid: string }>):
  Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!boxes.length) return out;
  const rows = (await db('boxsettings').select('level', 'targetid', 'version')
    .where((q) => q.where({ level: 'fleet', targetid: '' })
      .orWhere((w) => w.where('level', 'school').whereIn('targetid', [...new Set(boxes.map((b) => b.schoolid))]))
      .orWhere((w) => w.where('level', 'box').whereIn('targetid', boxes.map((b) => b.boxid))))) as SettingsRow[];
  const v = new Map(rows.map((r) => [`${r.level}:${r.targetid}`, Number(r.version)]));
  for (const b of boxes) {
    out.set(b.boxid, (v.get('fleet:') ?? 0) + (v.get(`school:${b.schoolid}`) ?? 0) + (v.get(`box:${b.boxid}`) ?? 0));
  }
  return out;
}

export async function fleetSettings(db: Knex) {
  return levelView(await rowOf(db, 'fleet', targetOf('fleet', null)));
}

export async function putFleetSettings(db: Knex, settings: FleetSettings, by: string | null) {
  await writeLevel(db, 'fleet', '', settings, by);
  return fleetSettings(db);
}

const SCHOOL_NOT_FOUND = 'School not found';

async function schoolIn(db: Knex, scope: Scope, schoolid: string): Promise<void> {
  const school = (await db('schools').where({ schoolid, isdeleted: false }).first('schoolid')) as
    | { schoolid: string } | undefined;
  if (!school || !schoolInScope(scope, { schoolid })) throw httpError(404, SCHOOL_NOT_FOUND);
}

export async function schoolSettings(db: Knex, scope: Scope, schoolid: string) {
  await schoolIn(db, scope, schoolid);
  return levelView(await rowOf(db, 'school', schoolid));
}

export async function putSchoolSettings(db: Knex, scope: Scope, schoolid: string, settings: FleetSettings,
  by: string | null) {
  await schoolIn(db, scope, schoolid);
  await writeLevel(db, 'school', schoolid, settings, by);
  return levelView(await rowOf(db, 'school', schoolid));
}

/** A box's own level, what it runs with as central computes it, and what it said it applied. */
export async function boxSettingsView(
  db: Knex, box: { boxid: string; schoolid: string; settingsversion: number | null },
) {
  const own = levelView(await rowOf(db, 'box', box.boxid));
  const effective = await effectiveSettings(db, box);
  return { ...own, effective, wantedversion: effective.version, appliedversion: box.settingsversion };
}

export async function putBoxSettings(db: Knex, boxid: string, settings: FleetSettings, by: string | null) {
  await writeLevel(db, 'box', boxid, settings, by);
}
