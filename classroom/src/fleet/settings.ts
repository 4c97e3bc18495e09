import type { Knex } from '@lms/db';
import { DEFAULT_MAINTENANCE_WINDOW, fleetSettingsSchema, type FleetSettings, type Logger } from '@lms/shared';

/**
 * The settings the box took from central (docs/fleet-protocol.md, "Settings"), kept in `fleetsettings` so
 * that a restart runs with them before its first contact. A value central sets wins over the box's own
 * configuration, which stays the default for what central leaves unset: an operator of thousands of boxes
 * cannot see each box's environment, and a setting that does not reach the box is shown at central as not
 * applied. `FLEET_REMOTE_SETTINGS=off` keeps a box on its own configuration (for a person debugging at it);
 * it then reports applied version 0.
 */
export interface AppliedSettings {
  version: number;
  values: FleetSettings;
}

const NONE: AppliedSettings = { version: 0, values: {} };

/** Only the settings this release knows, each within its range: a value a box cannot take is left out. */
function known(values: unknown): FleetSettings {
  const whole = fleetSettingsSchema.safeParse(values);
  if (whole.success) return whole.data;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((values ?? {}) as Record<string, unknown>)) {
    const one = fleetSettingsSchema.safeParse({ [k]: v });
    if (one.success) Object.assign(out, one.data);
  }
  return out as FleetSettings;
}

export async function readApplied(db: Knex): Promise<AppliedSettings> {
  const row = (await db('fleetsettings').where({ id: 1 }).first()) as
    { version: number | string; settings: unknown } | undefined;
  if (!row) return NONE;
  const raw = typeof row.settings === 'string' ? (JSON.parse(row.settings) as unknown) : row.settings;
  return { version: Number(row.version), values: known(raw) };
}

/** Records what central answered, as the box can take it; answers what is applied now. */
export async function takeSettings(db: Knex, offered: { version: number; values: unknown }):
  Promise<AppliedSettings> {
  const next = { version: offered.version, values: known(offered.values) };
  await db('fleetsettings').insert({ id: 1, version: next.version, settings: JSON.stringify(next.values),
    appliedat: new Date().toISOString() }).onConflict('id').merge();
  return next;
}

/** The box's maintenance window: central's, or outside school hours. */
export const maintenanceWindow = (s: FleetSettings) => s.maintenancewindow ?? DEFAULT_MAINTENANCE_WINDOW;

/**
 * What the server applies itself (the agent applies its interval): central's log level, or the box's own
 * `LOG_LEVEL` again once central clears it; and the daily files' retention.
 */
export function serverSettings(logger: Logger, files: { setRetentionDays(days: number | undefined): void },
  ownLevel: string): (values: FleetSettings) => void {
  return (values) => {
    logger.level = values.loglevel ?? ownLevel;
    files.setRetentionDays(values.logretentiondays);
  };
}
