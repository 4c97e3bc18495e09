import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS as DEMO, GRANT_ROWS, PERMISSION_NAMES, PERMISSION_TITLES, ROLE_ROWS } from '@lms/shared';
import { seedDemo, DEMO_STAFF } from '../src/seed/demo';
import { setStaffPassword } from '../src/auth/set-password';
import { makeApp, type TestApp } from './helpers';
import { claimsOf, schoolLogin, staffLogin } from './accounts';

let t: TestApp;
beforeAll(async () => { t = await makeApp(); });
afterAll(async () => { await t.tdb.dispose(); });

describe('migration 0002: RBAC data', () => {
  it('holds the catalogue: 5 roles, 28 titles, 190 permissions, the grants of each role', async () => {
    const db = t.tdb.db;
    expect(
      (await db('roles').orderBy('rolename').select('roleid', 'rolename')).map((r) => [r.roleid, r.rolename]).sort(),
    ).toEqual(ROLE_ROWS.map((r) => [r.roleid, r.name]).sort());
    expect((await db('permissionstitle').select('permissiontitle')).map((r) => r.permissiontitle).sort()).toEqual(
      [...PERMISSION_TITLES].sort(),
    );
    expect((await db('permissions').select('permissionname')).map((r) => r.permissionname).sort()).toEqual(
      [...PERMISSION_NAMES].sort(),
    );
    expect(await db('permissions').whereNull('permissiontitleid').count({ n: '*' }).first()).toEqual({ n: 0 });
    for (const r of ROLE_ROWS) {
      const names = await db('roles_permissions as rp')
        .join('permissions as p', 'p.permissionid', 'rp.permissionid')
        .where('rp.roleid', r.roleid)
        .select('p.permissionname');
      expect(names.map((n) => n.permissionname).sort()).toEqual([...GRANT_ROWS[r.name]].sort());
    }
    expect(await db('permissions').where({ permissionname: 'superadmin' }).first()).toBeUndefined();
  });

  it('seeds the superadmin bound to Super Admin with a hash no password matches', async () => {
    const sa = await t.tdb.db('lmsusers').where({ lmsusername: 'superadmin@superadmin.com' }).first();
    expect(sa.isdisabled).toBe(false);
    expect(await t.tdb.db('lmsusers_roles').where({ lmsuserid: sa.lmsuserid }).select('roleid')).toEqual([
      { roleid: 'Mapyr2Pw' },
    ]);
    const res = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'superadmin@superadmin.com', lmsuserpassword: '!unusable' });
    expect(res.status).toBe(400);
    const guess = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'superadmin@superadmin.com', lmsuserpassword: 'Password1' });
    expect([guess.status, guess.body.errormessage]).toEqual([400, 'User/Password not matching']);
  });
});

describe('set-password', () => {
  it('refuses unknown accounts and weak passwords, then makes the superadmin usable', async () => {
    await expect(setStaffPassword(t.tdb.db, 'ghost@superadmin.com', 'Strong123')).rejects.toThrow(/No staff account/);
    await expect(setStaffPassword(t.tdb.db, 'superadmin@superadmin.com', 'weak')).rejects.toThrow(/Invalid password/);
    const before = (await t.tdb.db('lmsusers').where({ lmsusername: 'superadmin@superadmin.com' }).first())
      .lmsuserpasswordhash;
    expect(before).toBe('!unusable');
    expect(await setStaffPassword(t.tdb.db, 'superadmin@superadmin.com', 'Strong123')).toMatch(/Password set/);
    const pair = await staffLogin(t.app, 'superadmin@superadmin.com', 'Strong123');
    const c = claimsOf(pair.accessToken);
    expect(c.permissions).toHaveLength(191);
    expect(c.permissions).toContain('superadmin');
    await setStaffPassword(t.tdb.db, 'superadmin@superadmin.com', 'Stronger456');
    expect(
      (
        await request(t.app)
          .get('/user/' + c.lmsuserid)
          .set('Authorization', `Bearer ${pair.accessToken}`)
      ).status,
    ).toBe(401);
  });

  it('works from the command line', async () => {
    const cli = path.join(__dirname, '../dist/cli.js');
    const env = { ...process.env, NODE_ENV: 'test', DATABASE_URL: t.tdb.url };
    const ok = await promisify(execFile)('node', [cli, 'set-password', 'superadmin@superadmin.com', 'FromCli789'], {
      env,
    });
    expect(ok.stdout).toMatch(/Password set for superadmin@superadmin.com/);
    await staffLogin(t.app, 'superadmin@superadmin.com', 'FromCli789');
    await expect(
      promisify(execFile)('node', [cli, 'set-password', 'nobody@x.org', 'FromCli789'], { env }),
    ).rejects.toThrow(/No staff account/);
  });
});

describe('demo data', () => {
  it('signs in every demo staff account with its role, and the school teacher but not the learner', async () => {
    const lines = await seedDemo(t.tdb.db);
    await seedDemo(t.tdb.db); // twice: the seed is idempotent
    expect(lines.join('\n')).toContain('admin@demo.lms / DemoAdmin1');
    for (const s of DEMO_STAFF) {
      const c = claimsOf((await staffLogin(t.app, s.lmsusername, s.password)).accessToken);
      expect(c.lmsuserroles).toEqual([s.roleid]);
    }
    expect(await t.tdb.db('lmsusers').where({ lmsusername: 'admin@demo.lms' }).count({ n: '*' }).first()).toEqual({
      n: 1,
    });
    const teacher = claimsOf((await schoolLogin(t.app, 'demo.teacher', 'demo')).accessToken);
    expect(teacher).toMatchObject({ schoolname: DEMO.schoolname, schoolid: DEMO.schoolid, schooluserrole: 3 });
    const learner = await request(t.app)
      .post('/auth/school/login')
      .send({ lmsusername: 'demo.student', lmsuserpassword: 'demo' });
    expect(learner.status).toBe(400);
    const wg = await t.tdb
      .db('students')
      .where({ schoolname: DEMO.schoolname })
      .whereNotNull('wg_hearing')
      .count({ n: '*' })
      .first();
    expect(wg).toEqual({ n: 4 }); // of five learners: one was never asked
  });
});
