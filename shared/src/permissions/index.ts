import {
  ADMIN_EXCLUDED,
  GRANT_ROWS,
  PERMISSION_ROWS,
  ROLE_ROWS,
  TEACHER_EXCLUDED_LEARNER_IDENTITY,
  TITLE_ROWS,
} from './data';

export * from './data';

/** The roleids that tokens carry in `lmsuserroles`; route role lists use the keys. */
export const ROLE_IDS = {
  superadmin: 'Mapyr2Pw',
  admin: 'zr5ER4QD',
  teacher: 'Q3Qs7PuD',
  user: 'wSRgm8KP',
  apikey: 'dErM4cvb',
} as const;

export type RoleKey = keyof typeof ROLE_IDS;

const idByKey = new Map(ROLE_ROWS.map((r) => [r.key, r.roleid]));
const keyById = new Map(ROLE_ROWS.map((r) => [r.roleid, r.key]));

/** The roleid of a role key used in a route's role list (`superadmin` -> `Mapyr2Pw`). */
export function roleIdOf(key: string): string | undefined {
  return idByKey.get(key);
}

export function roleKeyOf(roleid: string): string | undefined {
  return keyById.get(roleid);
}

/** `superadmin` is never a permission row: it is the synthetic wildcard entry of a token's permissions. */
export const WILDCARD_PERMISSION = 'superadmin';

/** Every permission row name (190). */
export const PERMISSION_NAMES: readonly string[] = PERMISSION_ROWS.map((p) => p.name);

/** The Permission enumeration (167 names): what grants and endpoints refer to. */
export const PERMISSION_ENUM: readonly string[] = PERMISSION_ROWS.filter((p) => p.inEnum).map((p) => p.name);

/** Permission names granted to a seeded role, by its name (`Super Admin`, `Admin`, `Teacher`, `User`, `API Key`). */
export function grantsOf(roleName: string): readonly string[] {
  return GRANT_ROWS[roleName] ?? [];
}

/**
 * The grant rules the data follows, so the data can be checked against them: Admin gets the
 * enumeration minus user and role administration; Teacher gets read-only names minus that set and
 * minus the learner-identity names (matched exactly, never by prefix).
 */
export function derivedGrants(roleName: string): string[] {
  const admin = new Set(ADMIN_EXCLUDED);
  switch (roleName) {
    case 'Super Admin':
      return [...PERMISSION_NAMES];
    case 'Admin':
      return PERMISSION_ENUM.filter((n) => !admin.has(n));
    case 'Teacher': {
      const identity = new Set(TEACHER_EXCLUDED_LEARNER_IDENTITY);
      return PERMISSION_ENUM.filter((n) => /^(view|download)_/.test(n) && !admin.has(n) && !identity.has(n));
    }
    default:
      return [];
  }
}

export const PERMISSION_TITLES: readonly string[] = TITLE_ROWS.map((t) => t.title);
