import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { central, takeover } from '@lms/db';
import { migrateFromMysql } from '../src/takeover/command';
import { makeApp, type TestApp } from './helpers';
import { md5hex, seedOriginalCentral } from './takeover-fixture';

// A source whose grants and accounts were tampered with does not widen anyone here silently: an unknown
// permission is refused with its grants, a built-in role granted more than this release gives it is named,
// and accounts with a NUL byte in their name or a schools list too long for a token are refused.

const SERVER = takeover.testMysqlUrl();
// CI provides MariaDB (scripts/ci/ensure-mariadb.sh): there a missing server fails the file instead of skipping it.
const available = Boolean(process.env.CI) || (await takeover.mysqlAnswers(SERVER));

let src: takeover.ScratchMysql;
let t: TestApp;
let run: Awaited<ReturnType<typeof migrateFromMysql>>;
const lines: string[] = [];
const ids = {
  god: crypto.randomUUID(), nul: crypto.randomUUID(), wide: crypto.randomUUID(), fine: crypto.randomUUID(),
};
const USER_ROLE = central.ROLES.find(([, name]) => name === 'User')![0];

describe.skipIf(!available)('migrate-from-mysql from a tampered source', () => {
  beforeAll(async () => {
    src = await takeover.createScratchMysql(SERVER);
    await seedOriginalCentral(src.conn);
    const put = (table: string, rows: Array<Record<string, unknown>>) =>
      takeover.insertOriginalRows(src.conn, table, rows);
    const sql = "SELECT permissionid FROM permissions WHERE permissionname = 'create_user'";
    const [[createUser]] = (await src.conn.query(sql)) as unknown as [[{ permissionid: string }]];
    await put('permissions', [
      { permissionid: ids.god, permissionname: 'god_mode', permissiondesc: 'all', permissiontitleid: null },
    ]);
    await put('roles_permissions', [
      { roleid: USER_ROLE, permissionid: ids.god }, { roleid: USER_ROLE, permissionid: createUser.permissionid },
    ]);
    const account = (lmsuserid: string, lmsusername: string, schools: string[]) => ({
      lmsuserid, lmsusername, lmsuserpasswordhash: md5hex('pw'), firstname: 'F', lastname: 'L', lmsuserrole: 'Mapyr2Pw',
      isverified: 1, isdisabled: 0, type: 1, countries: null, schools: JSON.stringify(schools),
    });
    await put('lmsusers', [
      account(ids.nul, 'admin@org.example\u0000.evil', [crypto.randomUUID()]),
      account(ids.wide, 'wide@org.example', Array.from({ length: 20_000 }, () => crypto.randomUUID())),
      account(ids.fine, 'fine@org.example', Array.from({ length: 200 }, () => crypto.randomUUID())),
    ]);
    await put('lmsusers_roles', [ids.nul, ids.wide, ids.fine].map((lmsuserid) => ({ roleid: USER_ROLE, lmsuserid })));
    t = await makeApp();
    run = await migrateFromMysql(t.tdb.db, ['--source', src.url], { out: (l) => lines.push(l), err: () => undefined });
  }, 180_000);
  afterAll(async () => {
    await t?.tdb.dispose();
    await src?.drop();
  });

  it('refuses the unknown permission with its grants, and names the User role\'s extra grant', async () => {
    const db = t.tdb.db;
    expect(run.code).toBe(1);
    expect(run.tables.refusedRows).toContainEqual({
      table: 'permissions', id: ids.god, reason: 'unknown permission "god_mode": not copied, nor its grants',
    });
    expect(await db('permissions').where({ permissionname: 'god_mode' }).first()).toBeUndefined();
    expect(await db('roles_permissions').where({ permissionid: ids.god }).first()).toBeUndefined();
    const text = lines.join('\n');
    expect(text).toContain(
      "role User: grants differ from this release's (added: create_user); kept as the source has them: review them",
    );
    expect(text).toContain(`permissions ${ids.god}: unknown permission "god_mode"`);
  });

  it('refuses an account name with a NUL byte and an account narrowed to more schools than a token holds', async () => {
    const db = t.tdb.db;
    expect(run.tables.refusedRows).toEqual(expect.arrayContaining([
      { table: 'lmsusers', id: ids.nul, reason: 'text with a NUL byte' },
      { table: 'lmsusers', id: ids.wide, reason: 'narrowed to 20000 schools or countries, more than 200' },
    ]));
    expect(await db('lmsusers').whereIn('lmsuserid', [ids.nul, ids.wide]).select('lmsuserid')).toEqual([]);
    expect(await db('lmsusers_roles').whereIn('lmsuserid', [ids.nul, ids.wide]).select('lmsuserid')).toEqual([]);
    // 200 schools is within the limit: copied.
    expect(await db('lmsusers').where({ lmsuserid: ids.fine }).first('lmsusername'))
      .toEqual({ lmsusername: 'fine@org.example' });
  });
});
