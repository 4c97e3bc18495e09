import { migrations as centralMigrations } from '../central';
import { tables as centralTables } from '../central/schema-0001';
import { ROLES, SUPERADMIN_USERNAME, UNUSABLE_HASH } from '../central/migrations/0002_rbac';
import { migrations as classroomMigrations } from '../classroom';
import { tables as classroomTables } from '../classroom/schema-0001';
import type { TakeoverContext, TakeoverProfile } from './run';

const RBAC = ['roles', 'permissionstitle', 'permissions', 'roles_permissions'];
const BUILT_IN_ROLES = new Set(ROLES.map(([id]) => id));

type Row = Record<string, unknown>;

/**
 * Central: every table of the original except its migration bookkeeping; `syncrecords` fills `syncs`. The
 * original's roles, permission titles, permissions and grants take the place of the ones `npm run migrate`
 * seeded (permission ids are random per deployment; names match), and its superadmin account that of ours.
 * A permission name the source lacks keeps our row and its grants.
 */
export function centralProfile(): TakeoverProfile {
  let ours: { titles: Row[]; permissions: Row[]; grants: Row[] } | undefined;
  return {
    service: 'central',
    migrations: centralMigrations,
    tables: centralTables,
    sourceNames: { syncs: 'syncrecords' },
    // The RBAC tables and the sync records are central's alone (schema-classroom.md: no counterpart on a box).
    coreTables: ['lmsusers', 'roles', 'permissions', 'roles_permissions', 'schools', 'students', 'syncrecords'],
    ownTables: [],
    ignoredSourceTables: ['SequelizeMeta', 'studentpracticesprogress', 'studentquizzesprogress'],
    seededTables: ['lmsusers', 'lmsusers_roles', ...RBAC],
    upsertTables: ['roles'],
    async migrateWroteOnly(trx) {
      const users = await trx('lmsusers')
        .whereNot((q) => q.where({ lmsusername: SUPERADMIN_USERNAME, lmsuserpasswordhash: UNUSABLE_HASH }))
        .count({ n: '*' })
        .first();
      if (Number(users?.n) > 0) return `lmsusers: ${Number(users?.n)} accounts besides the seeded superadmin`;
      const roles = await trx('roles').whereNotIn('roleid', [...BUILT_IN_ROLES]).count({ n: '*' }).first();
      if (Number(roles?.n) > 0) return `roles: ${Number(roles?.n)} roles besides the built-in ones`;
      return undefined;
    },
    async prepare({ trx, source, notes }: TakeoverContext) {
      if (source.tables.has('permissions') && (await source.count('permissions')) > 0) {
        ours = {
          titles: await trx('permissionstitle').select(),
          permissions: await trx('permissions').select(),
          grants: await trx('roles_permissions').select(),
        };
        await trx('roles_permissions').del();
        await trx('permissions').del();
        await trx('permissionstitle').del();
        notes.push(
          "permissions, permission titles and grants: the source's rows replace the ones seeded here (names decide)",
        );
      }
      if (source.tables.has('lmsusers')) {
        const theirs = await source.query('SELECT lmsuserid FROM lmsusers WHERE LOWER(lmsusername) = ?', [
          SUPERADMIN_USERNAME,
        ]);
        if (theirs.length) {
          const seeded = await trx('lmsusers')
            .where({ lmsusername: SUPERADMIN_USERNAME, lmsuserpasswordhash: UNUSABLE_HASH })
            .select('lmsuserid');
          for (const { lmsuserid } of seeded) {
            await trx('lmsusers_roles').where({ lmsuserid }).del();
            await trx('tokens').where({ lmsuserid }).del();
            await trx('lmsusers').where({ lmsuserid }).del();
          }
          if (seeded.length)
            notes.push(
              `lmsusers: the ${SUPERADMIN_USERNAME} account seeded here ` +
                `gave way to the source's (${String(theirs[0].lmsuserid)})`,
            );
        }
      }
    },
    async finish(ctx: TakeoverContext) {
      await refuseWideAccounts(ctx);
      await reportSharedStaffNames(ctx);
      if (!ours) return;
      const { trx, notes } = ctx;
      await refuseUnknownPermissions(ctx, ours.permissions);
      await reportDifferingGrants(ctx, ours);
      const names = new Set(
        (await trx('permissions').select('permissionname')).map((r: Row) => String(r.permissionname)),
      );
      const missing = ours.permissions.filter((p) => !names.has(String(p.permissionname)));
      if (!missing.length) return;
      const titleIds = new Map(
        (await trx('permissionstitle').select('permissiontitleid', 'permissiontitle')).map((r: Row) => [
          String(r.permissiontitle),
          String(r.permissiontitleid),
        ]),
      );
      const ourTitles = new Map(ours.titles.map((t) => [String(t.permissiontitleid), t]));
      for (const p of missing) {
        const title = ourTitles.get(String(p.permissiontitleid));
        let titleid: string | null = null;
        if (title) {
          titleid = titleIds.get(String(title.permissiontitle)) ?? null;
          if (!titleid) {
            await trx('permissionstitle').insert(title);
            titleid = String(title.permissiontitleid);
            titleIds.set(String(title.permissiontitle), titleid);
          }
        }
        await trx('permissions').insert({ ...p, permissiontitleid: titleid });
      }
      const roles = new Set((await trx('roles').select('roleid')).map((r: Row) => String(r.roleid)));
      const ids = new Set(missing.map((p) => String(p.permissionid)));
      const grants = ours.grants.filter((g) => ids.has(String(g.permissionid)) && roles.has(String(g.roleid)));
      for (const g of grants) await trx('roles_permissions').insert(g);
      notes.push(
        'permissions the source lacks, kept as seeded here with their grants: ' +
          missing.map((p) => String(p.permissionname)).join(', '),
      );
    },
  };
}

/**
 * The most schools or countries a staff account may be narrowed to: the lists travel in every token it signs in with.
 */
export const MAX_NARROWING_IDS = 200;

const listOf = (v: unknown): unknown[] => {
  if (Array.isArray(v)) return v;
  if (typeof v !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
};

/**
 * A staff account narrowed to more than MAX_NARROWING_IDS schools or countries would sign in with a token too
 * large for any request header (every request answered 431): refused, for the operator to give it a
 * `countries` list or no narrowing instead.
 */
async function refuseWideAccounts({ trx, refuse }: TakeoverContext): Promise<void> {
  for (const a of (await trx('lmsusers').select('lmsuserid', 'schools', 'countries')) as Row[]) {
    const widest = Math.max(listOf(a.schools).length, listOf(a.countries).length);
    if (widest <= MAX_NARROWING_IDS) continue;
    const lmsuserid = String(a.lmsuserid);
    await trx('lmsusers_roles').where({ lmsuserid }).del();
    await trx('tokens').where({ lmsuserid }).del();
    await trx('lmsusers').where({ lmsuserid }).del();
    refuse?.('lmsusers', lmsuserid, `narrowed to ${widest} schools or countries, more than ${MAX_NARROWING_IDS}`);
  }
}

/**
 * The original keeps no unique key on staff usernames and compares them ignoring case, as sign-in here does:
 * accounts whose names differ only in case are all copied, and named for a person to rename all but one
 * (sign-in takes whichever the database answers first, there as here).
 */
async function reportSharedStaffNames({ trx, notes }: TakeoverContext): Promise<void> {
  const shared = (await trx('lmsusers').select(trx.raw('lower(lmsusername) as name')).count({ n: '*' })
    .groupByRaw('lower(lmsusername)').havingRaw('count(*) > 1').orderBy('name')) as Row[];
  for (const r of shared) {
    const name = String(r.name);
    notes.push(`lmsusers: ${Number(r.n)} accounts share the username ${name} (ignoring case): rename all but one`);
  }
}

/**
 * A permission this service does not know grants nothing here today, but a later release could give the
 * name a meaning: refused with its grants, so that no role holds more than the catalogue says.
 */
async function refuseUnknownPermissions({ trx, refuse }: TakeoverContext, catalogue: Row[]): Promise<void> {
  const known = catalogue.map((p) => String(p.permissionname));
  const unknown = (await trx('permissions')
    .whereNotIn('permissionname', known)
    .select('permissionid', 'permissionname')) as Row[];
  if (!unknown.length) return;
  const ids = unknown.map((p) => String(p.permissionid));
  await trx('roles_permissions').whereIn('permissionid', ids).del();
  await trx('permissions').whereIn('permissionid', ids).del();
  for (const p of unknown) {
    refuse?.(
      'permissions',
      String(p.permissionid),
      `unknown permission ${JSON.stringify(p.permissionname)}: not copied, nor its grants`,
    );
  }
}

/** Names the grants of the built-in roles that differ from this release's (kept as the source has them, for review). */
async function reportDifferingGrants(
  { trx, notes }: TakeoverContext,
  ours: { permissions: Row[]; grants: Row[] },
): Promise<void> {
  const nameOf = new Map(ours.permissions.map((p) => [String(p.permissionid), String(p.permissionname)]));
  const theirs = (await trx('roles_permissions as rp').join('permissions as p', 'p.permissionid', 'rp.permissionid')
    .whereIn('rp.roleid', [...BUILT_IN_ROLES]).select('rp.roleid', 'p.permissionname')) as Row[];
  // A permission the source lacks altogether comes back with this release's grants (finish): no difference.
  const present = new Set(
    ((await trx('permissions').select('permissionname')) as Row[]).map((p) => String(p.permissionname)),
  );
  for (const [roleid, rolename] of ROLES) {
    const expected = new Set(
      ours.grants.filter((g) => String(g.roleid) === roleid).map((g) => nameOf.get(String(g.permissionid)) ?? ''),
    );
    const held = new Set(theirs.filter((g) => String(g.roleid) === roleid).map((g) => String(g.permissionname)));
    const added = [...held].filter((n) => !expected.has(n)).sort();
    const removed = [...expected].filter((n) => n && present.has(n) && !held.has(n)).sort();
    if (!added.length && !removed.length) continue;
    const parts = [
      added.length ? `added: ${added.join(', ')}` : '',
      removed.length ? `removed: ${removed.join(', ')}` : '',
    ].filter(Boolean);
    notes.push(
      `role ${rolename}: grants differ from this release's (${parts.join('; ')}); ` +
        'kept as the source has them: review them',
    );
  }
}

/**
 * A classroom box: every table, learners' progress that was never exported included. A box that never ran
 * the original's 2026-08-18 migration may hold one submission several times; ours has that migration's
 * unique rule, so duplicates are collapsed the way it does.
 */
export function classroomProfile(): TakeoverProfile {
  return {
    service: 'classroom',
    migrations: classroomMigrations,
    tables: classroomTables,
    // studenttrash is the box's alone (its model makes it at every boot); central has no such table.
    coreTables: ['schoolusers', 'schools', 'students', 'studentprogress', 'rpiuseraccess', 'studenttrash'],
    ownTables: [],
    ignoredSourceTables: ['SequelizeMeta'],
    duplicates: [
      {
        table: 'studentprogress',
        columns: ['studentid', 'studentprogressreferenceid', 'starttime'],
        id: 'studentprogressid',
        children: [{ table: 'studentprogressquestions', column: 'studentprogressid' }],
        resolution:
          'collapsed into the lowest studentprogressid of its group, its question rows dropped, ' +
          "as the existing system's own later migration does",
      },
    ],
  };
}
