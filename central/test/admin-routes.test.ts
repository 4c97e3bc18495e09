import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { PASSWORD, claimsOf, createStaff, staffLogin } from './accounts';

let t: TestApp;
let root: string; // Super Admin bearer
let admin: string;
let rootId: string;
beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  rootId = await createStaff(t.tdb.db, { lmsusername: 'root@example.org', roleids: [ROLE_IDS.superadmin] });
  await createStaff(t.tdb.db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.admin] });
  root = `Bearer ${(await staffLogin(t.app, 'root@example.org')).accessToken}`;
  admin = `Bearer ${(await staffLogin(t.app, 'admin@example.org')).accessToken}`;
});
afterAll(async () => { await t.tdb.dispose(); });

const count = async (table: string) => Number((await t.tdb.db(table).count({ n: '*' }).first())?.n);
const noHash = (body: unknown) => expect(JSON.stringify(body)).not.toMatch(/argon2|passwordhash/);

describe('/user', () => {
  it('creates an account bound to the given roles; it signs in with exactly those roles', async () => {
    const res = await request(t.app)
      .post('/user/create')
      .set('Authorization', root)
      .send({
        lmsusername: 'new.admin@example.org',
        lmsuserpasswordhash: 'NewAdmin12',
        lmsuserroles: [ROLE_IDS.admin, ROLE_IDS.teacher],
        countryids: ['c1'],
        schoolids: [],
      });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      lmsusername: 'new.admin@example.org',
      isverified: true,
      isdisabled: false,
      lmsuserrole: 'Mapyr2Pw',
      countries: ['c1'],
    });
    noHash(res.body);
    const c = claimsOf((await staffLogin(t.app, 'new.admin@example.org', 'NewAdmin12')).accessToken);
    expect((c.lmsuserroles as string[]).sort()).toEqual([ROLE_IDS.admin, ROLE_IDS.teacher].sort());
    expect(c.countries).toEqual(['c1']);
  });

  it('refuses a taken email, an unknown role, a weak password and no role, writing nothing', async () => {
    const users = await count('lmsusers');
    const links = await count('lmsusers_roles');
    const cases: Array<[object, string | RegExp]> = [
      [
        { lmsusername: 'NEW.admin@example.org', lmsuserpasswordhash: 'NewAdmin12', lmsuserroles: [ROLE_IDS.admin] },
        'user email already exists',
      ],
      [{ lmsusername: 'x@example.org', lmsuserpasswordhash: 'NewAdmin12', lmsuserroles: ['nope'] }, 'Invalid role id'],
      [
        { lmsusername: 'x@example.org', lmsuserpasswordhash: 'weak', lmsuserroles: [ROLE_IDS.admin] },
        /^Invalid password/,
      ],
      [
        { lmsusername: 'x@example.org', lmsuserpasswordhash: 'NewAdmin12', lmsuserroles: [] },
        'The user must have at least 1 role',
      ],
      [
        { lmsusername: 'x@example.org', lmsuserpasswordhash: 'NewAdmin12', lmsuserroles: [ROLE_IDS.admin], extra: 1 },
        '"extra" is not allowed',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await request(t.app).post('/user/create').set('Authorization', root).send(body);
      expect(res.status).toBe(400);
      expect(res.body.errormessage).toMatch(message);
    }
    expect(await count('lmsusers')).toBe(users);
    expect(await count('lmsusers_roles')).toBe(links);
  });

  it('refuses an Admin (no user administration) with 403 and writes nothing', async () => {
    const users = await count('lmsusers');
    const res = await request(t.app).post('/user/create').set('Authorization', admin).send({
      lmsusername: 'sneaky@example.org', lmsuserpasswordhash: 'Sneaky123', lmsuserroles: [ROLE_IDS.superadmin],
    });
    expect([res.status, res.body.errormessage]).toEqual([403, 'Forbidden resource']);
    const bind = await request(t.app)
      .post('/roles/user-bind-role')
      .set('Authorization', admin)
      .send({ lmsuserid: rootId, rolesid: [] });
    expect(bind.status).toBe(403);
    expect(await count('lmsusers')).toBe(users);
    expect(await t.tdb.db('lmsusers_roles').where({ lmsuserid: rootId }).select('roleid')).toEqual([
      { roleid: ROLE_IDS.superadmin },
    ]);
  });

  it('lists, reads and updates accounts without a password hash', async () => {
    const list = await request(t.app)
      .post('/user')
      .set('Authorization', root)
      .send({ pageindex: 1, pagesize: 2, filter: [{ key: 'lmsusername', value: 'example.org' }] });
    expect(list.status).toBe(200);
    expect(list.body.data.total).toBe(3);
    expect(list.body.data.data).toHaveLength(2);
    expect(list.body.data.data[0]).toMatchObject({ lmsusername: 'admin@example.org', formattedroles: 'Admin' });
    noHash(list.body);
    const bad = await request(t.app)
      .post('/user')
      .set('Authorization', root)
      .send({ filter: [{ key: 'firstname', value: 'x' }] });
    expect([bad.status, bad.body.errormessage]).toEqual([400, '"filter.0.key" must be one of [lmsusername]']);

    const id = (await t.tdb.db('lmsusers').where({ lmsusername: 'new.admin@example.org' }).first()).lmsuserid;
    const one = await request(t.app).get(`/user/${id}`).set('Authorization', root);
    expect(one.body.data.user.roles.map((r: { rolename: string }) => r.rolename).sort()).toEqual(['Admin', 'Teacher']);
    expect(one.body.data.roles).toHaveLength(5);
    expect(one.body.data.roles.find((r: { id: string }) => r.id === ROLE_IDS.teacher).checked).toBe(true);
    expect(one.body.data.roles.find((r: { id: string }) => r.id === ROLE_IDS.user).checked).toBe(false);
    noHash(one.body);

    const session = await staffLogin(t.app, 'new.admin@example.org', 'NewAdmin12');
    const upd = await request(t.app)
      .put(`/user/${id}`)
      .set('Authorization', root)
      .send({
        lmsusername: 'new.admin@example.org',
        lmsuserpasswordhash: '',
        lmsuserroles: [ROLE_IDS.teacher],
        countryids: [],
        schoolids: ['s1'],
      });
    expect(upd.status).toBe(200);
    expect(upd.body.data.schools).toEqual(['s1']);
    noHash(upd.body);
    // Its old token carried Admin's permissions: the role change signs it out.
    expect(
      (await request(t.app).get('/curriculum/all').set('Authorization', `Bearer ${session.accessToken}`)).status,
    ).toBe(401);
    const c = claimsOf((await staffLogin(t.app, 'new.admin@example.org', 'NewAdmin12')).accessToken);
    expect(c.lmsuserroles).toEqual([ROLE_IDS.teacher]);
  });

  it('disables an account and removes its roles; refuses yourself and the seeded superadmin', async () => {
    const id = (await t.tdb.db('lmsusers').where({ lmsusername: 'new.admin@example.org' }).first()).lmsuserid;
    const del = await request(t.app).delete(`/user/${id}`).set('Authorization', root);
    expect(del.body).toEqual({ error: false, data: 'User is deleted successfully!' });
    expect((await t.tdb.db('lmsusers').where({ lmsuserid: id }).first()).isdisabled).toBe(true);
    expect(await t.tdb.db('lmsusers_roles').where({ lmsuserid: id }).count({ n: '*' }).first()).toEqual({ n: 0 });
    const login = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'new.admin@example.org', lmsuserpassword: 'NewAdmin12' });
    expect(login.status).toBe(400);

    const self = await request(t.app).delete(`/user/${rootId}`).set('Authorization', root);
    expect([self.status, self.body]).toEqual([
      200,
      { error: true, errormessage: 'Can not delete current user!', data: false },
    ]);
    const seeded = (await t.tdb.db('lmsusers').where({ lmsusername: 'superadmin@superadmin.com' }).first()).lmsuserid;
    const sa = await request(t.app).delete(`/user/${seeded}`).set('Authorization', root);
    expect([sa.status, sa.body.errormessage]).toEqual([400, 'Could not delete superadmin']);
    expect((await t.tdb.db('lmsusers').where({ lmsuserid: seeded }).first()).isdisabled).toBe(false);
  });
});

describe('/roles', () => {
  it('lists roles and the permission tree', async () => {
    const all = await request(t.app).get('/roles').set('Authorization', root);
    expect(all.body.data).toHaveLength(5);
    expect(all.body.data[0]).toEqual({ id: expect.any(String), text: expect.any(String), checked: false });
    const tree = await request(t.app).get('/roles/node/permissions').set('Authorization', root);
    expect(tree.body.data).toHaveLength(28);
    const leaves = tree.body.data.flatMap((n: { children: unknown[] }) => n.children);
    expect(leaves).toHaveLength(190);
    expect(tree.body.data[0]).toMatchObject({ key: expect.stringMatching(/^all_/), expanded: false });
    const flat = await request(t.app).get('/roles/permissions').set('Authorization', root);
    expect(flat.body.data.flatMap((x: { permissions: unknown[] }) => x.permissions)).toHaveLength(190);
    const paged = await request(t.app)
      .post('/roles')
      .set('Authorization', root)
      .send({ filter: [{ key: 'rolename', value: ['Admin', 'Teacher'] }] });
    expect(paged.body.data.data.map((r: { rolename: string }) => r.rolename).sort()).toEqual([
      'Admin',
      'Super Admin',
      'Teacher',
    ]);
  });

  it('creates a role from a whole title plus one permission, updates it, ' +
      'and deletes it only when unbound', async () => {
    const db = t.tdb.db;
    const title = await db('permissionstitle').where({ permissiontitle: 'Curriculum' }).first();
    const extra = await db('permissions').where({ permissionname: 'view_grade' }).first();
    const created = await request(t.app)
      .post('/roles/create')
      .set('Authorization', root)
      .send({ rolename: 'Curriculum editor', permissionsid: [`all_${title.permissiontitleid}`, extra.permissionid] });
    expect(created.status).toBe(200);
    const roleid = created.body.data.roleid;
    const one = await request(t.app).get(`/roles/${roleid}`).set('Authorization', root);
    const underTitle = await db('permissions')
      .where({ permissiontitleid: title.permissiontitleid })
      .count({ n: '*' })
      .first();
    expect(one.body.data.selectedPerms).toHaveLength(Number(underTitle?.n) + 1);
    expect(one.body.data.role.permissions.map((p: { permissionname: string }) => p.permissionname)).toContain(
      'view_grade',
    );

    const bad = await request(t.app)
      .post('/roles/create')
      .set('Authorization', root)
      .send({ rolename: 'Bad', permissionsid: ['nope'] });
    expect([bad.status, bad.body.errormessage]).toEqual([400, 'Invalid permission id']);
    expect(await db('roles').where({ rolename: 'Bad' }).first()).toBeUndefined();

    const upd = await request(t.app)
      .put(`/roles/${roleid}`)
      .set('Authorization', root)
      .send({ rolename: 'Grade reader', permissionsid: [extra.permissionid] });
    expect(upd.body.data.rolename).toBe('Grade reader');
    expect(await db('roles_permissions').where({ roleid }).select('permissionid')).toEqual([
      { permissionid: extra.permissionid },
    ]);
    const dup = await request(t.app)
      .put(`/roles/${roleid}`)
      .set('Authorization', root)
      .send({ rolename: 'Admin', permissionsid: [] });
    expect([dup.status, dup.body.errormessage]).toEqual([400, 'Role name already exists']);

    const user = await createStaff(db, { lmsusername: 'reader@example.org' });
    const bind = await request(t.app)
      .post('/roles/user-bind-role')
      .set('Authorization', root)
      .send({ lmsuserid: user, rolesid: [roleid] });
    expect(bind.body).toEqual({ error: false, data: true });
    const c = claimsOf((await staffLogin(t.app, 'reader@example.org', PASSWORD)).accessToken);
    expect(c.permissions).toEqual(['view_grade']);
    const bound = await request(t.app).delete(`/roles/${roleid}`).set('Authorization', root);
    expect([bound.status, bound.body.errormessage]).toEqual([400, 'Role is binded, role cannot be deleted']);

    const unknownRole = await request(t.app)
      .post('/roles/user-bind-role')
      .set('Authorization', root)
      .send({ lmsuserid: user, rolesid: ['nope'] });
    expect(unknownRole.status).toBe(400);
    expect(await db('lmsusers_roles').where({ lmsuserid: user }).select('roleid')).toEqual([{ roleid }]);
    const extraKey = await request(t.app)
      .post('/roles/user-bind-role')
      .set('Authorization', root)
      .send({ lmsuserid: user, rolesid: [], x: 1 });
    expect([extraKey.status, extraKey.body.errormessage]).toEqual([400, '"x" is not allowed']);

    // Taking a permission away from the role signs its holders out at once; a rename alone does not.
    const reader = `Bearer ${(await staffLogin(t.app, 'reader@example.org', PASSWORD)).accessToken}`;
    const renamed = await request(t.app)
      .put(`/roles/${roleid}`)
      .set('Authorization', root)
      .send({ rolename: 'Grade readers', permissionsid: [extra.permissionid] });
    expect(renamed.status).toBe(200);
    expect((await request(t.app).get('/roles/permissions').set('Authorization', reader)).status).toBe(403);
    const other = await db('permissions').where({ permissionname: 'view_level' }).first();
    const narrowed = await request(t.app)
      .put(`/roles/${roleid}`)
      .set('Authorization', root)
      .send({ rolename: 'Grade readers', permissionsid: [other.permissionid] });
    expect(narrowed.status).toBe(200);
    expect((await request(t.app).get('/roles/permissions').set('Authorization', reader)).status).toBe(401);
    expect(await db('tokens').where({ lmsuserid: user }).count({ n: '*' }).first()).toMatchObject({ n: 0 });

    await request(t.app)
      .post('/roles/user-bind-role')
      .set('Authorization', root)
      .send({ lmsuserid: user, rolesid: [] });
    const gone = await request(t.app).delete(`/roles/${roleid}`).set('Authorization', root);
    expect(gone.body).toEqual({ error: false, data: true });
    expect(await db('roles').where({ roleid }).first()).toBeUndefined();
    expect(await db('roles_permissions').where({ roleid }).count({ n: '*' }).first()).toEqual({ n: 0 });
  });
});
