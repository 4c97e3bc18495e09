import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROLE_IDS, connectRedis } from '@lms/shared';
import { REVOCATION_CHANNEL, revokeAll, shareRevocations } from '../src/auth/tokens';
import { silentLogger } from './helpers';
import { makeApp, type TestApp } from './helpers';
import { PASSWORD, captureMailer, claimsOf, createSchoolUser, createStaff, staffLogin } from './accounts';

const mailer = captureMailer();
let t: TestApp;
const ADMIN = 'admin@example.org';
beforeAll(async () => {
  t = await makeApp({ JWT_SECRET: 'test-secret-for-auth', APPLICATION_API_KEY: 'app-key-123' }, undefined, { mailer });
  await createStaff(t.tdb.db, { lmsusername: ADMIN, roleids: [ROLE_IDS.admin], countries: ['c1'] });
  await createStaff(t.tdb.db, { lmsusername: 'new@example.org', roleids: [ROLE_IDS.teacher], isverified: false });
  await createStaff(t.tdb.db, { lmsusername: 'off@example.org', roleids: [ROLE_IDS.admin], isdisabled: true });
  await createSchoolUser(t.tdb.db, { schoolusername: 'teach1', role: 3 });
  await createSchoolUser(t.tdb.db, { schoolusername: 'learn1', role: 4 });
});
afterAll(async () => { await t.tdb.dispose(); });

const feed = (token: string) => request(t.app).get('/curriculum/all').set('Authorization', `bearer ${token}`);
const tokenRows = async () => Number((await t.tdb.db('tokens').count({ n: '*' }).first())?.n);

describe('POST /auth/login', () => {
  it('answers the contract shape with the claims the admin UI reads', async () => {
    const res = await request(t.app).post('/auth/login').send({ lmsusername: ADMIN, lmsuserpassword: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      error: false,
      data: { accessToken: expect.any(String), refreshToken: expect.any(String) },
    });
    const c = claimsOf(res.body.data.accessToken);
    expect(Object.keys(c).sort()).toEqual(
      [
        'claims',
        'countries',
        'exp',
        'firstname',
        'iat',
        'jti',
        'lastname',
        'lmsuserid',
        'lmsuserrole',
        'lmsuserroles',
        'lmsusername',
        'permissions',
        'schools',
        'sub',
      ].sort(),
    );
    expect(c.claims).toBe('wUKhn97t');
    expect(c.lmsuserrole).toBe('Mapyr2Pw');
    expect(c.lmsuserroles).toEqual([ROLE_IDS.admin]);
    expect(c.permissions).toHaveLength(159);
    expect(c.permissions).not.toContain('superadmin');
    expect(c.countries).toEqual(['c1']);
    expect(c.sub).toBe(c.lmsuserid);
    expect(JSON.parse(Buffer.from(res.body.data.accessToken.split('.')[0], 'base64url').toString()).alg).toBe('HS256');
    expect(claimsOf(res.body.data.refreshToken).claims).toBe('U3cLtVxj');
    expect((await feed(res.body.data.accessToken)).status).toBe(200);
  });

  it('reads the token from `Bearer <token>` in any case and white space, and from nothing else', async () => {
    const token = (await staffLogin(t.app, ADMIN)).accessToken;
    const as = (header: string) => request(t.app).get('/curriculum/all').set('Authorization', header);
    for (const header of [`Bearer ${token}`, `BEARER  ${token} `, `bearer\t${token}`, `Bearer\u00a0${token}`])
      expect((await as(header)).status).toBe(200);
    for (const header of [
      `Bearer${token}`,
      `Bearer ${token} extra`,
      `Token ${token}`,
      `Bearer ${token.slice(0, -2)}`,
      'Bearer ',
    ])
      expect((await as(header)).status).toBe(401);
  });

  it('gives an unknown account and a wrong password the same answer', async () => {
    const unknown = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'nobody@example.org', lmsuserpassword: PASSWORD });
    const wrong = await request(t.app).post('/auth/login').send({ lmsusername: ADMIN, lmsuserpassword: 'Wrong1234' });
    const disabled = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'off@example.org', lmsuserpassword: PASSWORD });
    for (const r of [unknown, wrong, disabled])
      expect([r.status, r.body]).toEqual([
        400,
        { error: true, errormessage: 'User/Password not matching', data: false },
      ]);
  });

  it('refuses a bad email, a weak password and an extra key without writing a token', async () => {
    const before = await tokenRows();
    const bad = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'not-an-email', lmsuserpassword: PASSWORD });
    expect([bad.status, bad.body.errormessage]).toEqual([400, 'Invalid Email']);
    const weak = await request(t.app).post('/auth/login').send({ lmsusername: ADMIN, lmsuserpassword: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.body.errormessage).toMatch(/^Invalid password, Required : Minimum length 8/);
    const extra = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: ADMIN, lmsuserpassword: PASSWORD, x: 1 });
    expect([extra.status, extra.body.errormessage]).toEqual([400, '"x" is not allowed']);
    expect(await tokenRows()).toBe(before);
  });

  it('refuses an unverified account and mails it a verification link', async () => {
    mailer.sent.length = 0;
    const res = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'new@example.org', lmsuserpassword: PASSWORD });
    expect([res.status, res.body.errormessage]).toEqual([
      400,
      'User not verified, Please verify with the link sent to your email',
    ]);
    expect(mailer.sent).toHaveLength(1);
    const token = mailer.sent[0].text.split('/auth/verify/')[1];
    expect(mailer.sent[0].text).toMatch(/^http:\/\/localhost:4200\/auth\/verify\//);
    const verified = await request(t.app)
      .post(`/auth/verify?verifyemailtoken=${token}`)
      .send({ headers: { normalizedNames: {} } });
    expect([verified.status, verified.body]).toEqual([202, { error: false, data: true }]);
    expect((await t.tdb.db('lmsusers').where({ lmsusername: 'new@example.org' }).first()).isverified).toBe(true);
    expect((await request(t.app).post(`/auth/verify?verifyemailtoken=${token}`)).status).toBe(401);
    await staffLogin(t.app, 'new@example.org');
  });

  it('keeps several sessions alive; logout ends only its own', async () => {
    const a = await staffLogin(t.app, ADMIN);
    const b = await staffLogin(t.app, ADMIN);
    expect((await feed(a.accessToken)).status).toBe(200);
    expect((await feed(b.accessToken)).status).toBe(200);
    const out = await request(t.app)
      .post('/auth/logout')
      .set('Authorization', `Bearer ${a.accessToken}`)
      .send({ headers: {} });
    expect([out.status, out.body]).toEqual([200, { error: false, data: true }]);
    expect((await feed(a.accessToken)).status).toBe(401);
    expect((await request(t.app).post(`/auth/refreshtoken?refreshtoken=${a.refreshToken}`)).status).toBe(401);
    expect((await feed(b.accessToken)).status).toBe(200);
    const again = await request(t.app).post('/auth/logout').set('Authorization', `Bearer ${a.accessToken}`);
    expect([again.status, again.body]).toEqual([200, { error: true, data: false }]);
    const none = await request(t.app).post('/auth/logout');
    expect([none.status, none.body]).toEqual([200, { error: true, data: false }]);
  });
});

describe('POST /auth/logout with the refresh token', () => {
  it('in a JSON body (or the query) ends that session, as the access token in the header does', async () => {
    const t2 = t;
    const a = await staffLogin(t2.app, ADMIN);
    const b = await staffLogin(t2.app, ADMIN);
    const out = await request(t2.app).post('/auth/logout').send({ refreshtoken: a.refreshToken });
    expect([out.status, out.body]).toEqual([200, { error: false, data: true }]);
    expect((await request(t2.app).post(`/auth/refreshtoken?refreshtoken=${a.refreshToken}`)).status).toBe(401);
    expect((await feed(a.accessToken)).status).toBe(401);
    expect((await feed(b.accessToken)).status).toBe(200);
    const byQuery = await request(t2.app).post(`/auth/logout?refreshtoken=${b.refreshToken}`).send({ headers: {} });
    expect([byQuery.status, byQuery.body]).toEqual([200, { error: false, data: true }]);
    expect((await feed(b.accessToken)).status).toBe(401);
    // An access token where the refresh token belongs, or a spent one, signs nothing out.
    const c = await staffLogin(t2.app, ADMIN);
    const wrongType = await request(t2.app).post('/auth/logout').send({ refreshtoken: c.accessToken });
    expect([wrongType.status, wrongType.body]).toEqual([200, { error: true, data: false }]);
    expect((await feed(c.accessToken)).status).toBe(200);
    const spent = await request(t2.app).post('/auth/logout').send({ refreshtoken: a.refreshToken });
    expect([spent.status, spent.body]).toEqual([200, { error: true, data: false }]);
  });
});

describe('revocations between instances', () => {
  const redisUrl = process.env.TEST_REDIS_URL;
  it.runIf(!!redisUrl)(
    'with Redis, a logout elsewhere ends a session here at once, and a logout here is announced',
    async () => {
      const redis = await connectRedis(redisUrl!, silentLogger);
      const other = await connectRedis(redisUrl!, silentLogger);
      const heard: unknown[] = [];
      const otherListener = other.duplicate();
      await otherListener.connect();
      await otherListener.subscribe(REVOCATION_CHANNEL, (m) => heard.push(m));
      const stop = await shareRevocations(redis, silentLogger);
      try {
        // Another instance's logout: it deletes the session's rows, then announces the revocation.
        const a = await staffLogin(t.app, ADMIN);
        expect((await feed(a.accessToken)).status).toBe(200);
        const { jti, sub } = claimsOf(a.accessToken) as { jti: string; sub: string };
        const row = await t.tdb.db('tokens').where({ token: jti }).first('sessionid');
        await t.tdb.db('tokens').where({ lmsuserid: sub, sessionid: row.sessionid }).del();
        // Until this instance hears of it, its few seconds' memory of the live token still answers.
        expect((await feed(a.accessToken)).status).toBe(200);
        await other.publish(
          REVOCATION_CHANNEL,
          JSON.stringify({ kind: 'session', sub, sessionid: row.sessionid, jti }),
        );
        let status = 200;
        for (let i = 0; i < 50 && status === 200; i++) {
          await new Promise((r) => setTimeout(r, 20));
          status = (await feed(a.accessToken)).status;
        }
        expect(status).toBe(401);

        // A malformed message changes nothing.
        const b = await staffLogin(t.app, ADMIN);
        expect((await feed(b.accessToken)).status).toBe(200);
        await other.publish(REVOCATION_CHANNEL, '{"kind":"person"}');
        await other.publish(REVOCATION_CHANNEL, 'not json');
        await new Promise((r) => setTimeout(r, 100));
        expect((await feed(b.accessToken)).status).toBe(200);

        // This instance's logout is announced to the others.
        const bc = claimsOf(b.accessToken) as { jti: string; sub: string };
        heard.length = 0;
        expect(
          (await request(t.app).post('/auth/logout').set('Authorization', `Bearer ${b.accessToken}`)).body,
        ).toEqual({ error: false, data: true });
        for (let i = 0; i < 50 && !heard.length; i++) await new Promise((r) => setTimeout(r, 20));
        expect(heard.map((m) => JSON.parse(m as string))).toEqual([
          { kind: 'session', sub: bc.sub, sessionid: expect.any(String), jti: bc.jti },
        ]);

        // A revocation inside a transaction is announced when it commits, not before.
        heard.length = 0;
        await t.tdb.db.transaction(async (trx) => {
          await revokeAll(trx, bc.sub, ['VERIFYEMAIL']);
          await new Promise((r) => setTimeout(r, 100));
          expect(heard).toEqual([]);
        });
        for (let i = 0; i < 50 && !heard.length; i++) await new Promise((r) => setTimeout(r, 20));
        expect(heard.map((m) => JSON.parse(m as string))).toEqual([
          { kind: 'person', sub: bc.sub, types: ['VERIFYEMAIL'] },
        ]);
      } finally {
        await stop();
        await otherListener.quit();
        await Promise.all([redis.quit(), other.quit()]);
      }
    },
  );
});

describe('POST /auth/refreshtoken', () => {
  it('issues a new pair with roles read again and revokes the old pair', async () => {
    const lmsuserid = await createStaff(t.tdb.db, { lmsusername: 'grow@example.org', roleids: [ROLE_IDS.teacher] });
    const first = await staffLogin(t.app, 'grow@example.org');
    expect(claimsOf(first.accessToken).permissions).toHaveLength(60);
    await t.tdb.db('lmsusers_roles').insert({ lmsuserid, roleid: ROLE_IDS.superadmin });
    const res = await request(t.app)
      .post(`/auth/refreshtoken?refreshtoken=${first.refreshToken}`)
      .send({ headers: { lazyUpdate: null } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      error: false,
      data: { accessToken: expect.any(String), refreshToken: expect.any(String) },
    });
    const c = claimsOf(res.body.data.accessToken);
    expect(c.lmsuserroles).toEqual(expect.arrayContaining([ROLE_IDS.teacher, ROLE_IDS.superadmin]));
    expect(c.permissions).toContain('superadmin');
    expect((await feed(first.accessToken)).status).toBe(401);
    expect((await feed(res.body.data.accessToken)).status).toBe(200);
    const reuse = await request(t.app).post(`/auth/refreshtoken?refreshtoken=${first.refreshToken}`);
    expect([reuse.status, reuse.body.errormessage]).toEqual([401, 'Please authenticate']);
  });

  it('refuses an access token, garbage, and a disabled account with Please authenticate', async () => {
    const pair = await staffLogin(t.app, ADMIN);
    for (const tok of [pair.accessToken, 'garbage']) {
      const r = await request(t.app).post(`/auth/refreshtoken?refreshtoken=${tok}`);
      expect([r.status, r.body]).toEqual([401, { error: true, errormessage: 'Please authenticate', data: false }]);
    }
    const id = await createStaff(t.tdb.db, { lmsusername: 'soon-off@example.org', roleids: [ROLE_IDS.admin] });
    const p = await staffLogin(t.app, 'soon-off@example.org');
    await t.tdb.db('lmsusers').where({ lmsuserid: id }).update({ isdisabled: true });
    const r = await request(t.app).post(`/auth/refreshtoken?refreshtoken=${p.refreshToken}`);
    expect([r.status, r.body.errormessage]).toEqual([401, 'Please authenticate']);
  });
});

describe('password reset', () => {
  it('mails a change-password link that validates, sets the password once and ends every session', async () => {
    await createStaff(t.tdb.db, { lmsusername: 'forgot@example.org', roleids: [ROLE_IDS.admin] });
    const session = await staffLogin(t.app, 'forgot@example.org');
    mailer.sent.length = 0;
    const res = await request(t.app).post('/auth/forgotpassword').send({ lmsusername: 'forgot@example.org' });
    expect(res.body).toEqual({ error: false, data: 'Password reset mail sent.' });
    // The answer comes before the mail is sent (its timing must not tell which addresses have accounts).
    await vi.waitFor(() => expect(mailer.sent).toHaveLength(1));
    const token = mailer.sent[0].text.split('/auth/changepassword/')[1];
    expect(mailer.sent[0].to).toBe('forgot@example.org');
    const valid = await request(t.app)
      .post(`/auth/token/validate/changepassword?changepasswordtoken=${token}`)
      .send({ headers: {} });
    expect(valid.body).toEqual({ error: false, data: true });
    const asAccess = await request(t.app).post(
      `/auth/token/validate/changepassword?changepasswordtoken=${session.accessToken}`,
    );
    expect(asAccess.body).toEqual({ error: false, data: false });
    expect((await request(t.app).post('/auth/token/validate/changepassword?changepasswordtoken=junk')).body.data).toBe(
      false,
    );

    const weak = await request(t.app)
      .put(`/auth/changepassword?changepasswordtoken=${token}`)
      .send({ lmsuserpassword: 'weak' });
    expect(weak.status).toBe(400);
    const ok = await request(t.app)
      .put(`/auth/changepassword?changepasswordtoken=${token}`)
      .send({ lmsuserpassword: 'Another99' });
    expect([ok.status, ok.body]).toEqual([200, { error: false, data: true }]);
    expect((await feed(session.accessToken)).status).toBe(401);
    expect(
      (
        await request(t.app)
          .put(`/auth/changepassword?changepasswordtoken=${token}`)
          .send({ lmsuserpassword: 'Third999x' })
      ).status,
    ).toBe(401);
    await staffLogin(t.app, 'forgot@example.org', 'Another99');
    const old = await request(t.app)
      .post('/auth/login')
      .send({ lmsusername: 'forgot@example.org', lmsuserpassword: PASSWORD });
    expect(old.status).toBe(400);
  });

  it('keeps one live reset link per account: a new link ends the previous one', async () => {
    const id = await createStaff(t.tdb.db, { lmsusername: 'twice@example.org', roleids: [ROLE_IDS.admin] });
    mailer.sent.length = 0;
    const linkOf = (i: number) => mailer.sent[i].text.split('/auth/changepassword/')[1];
    const validate = async (token: string) =>
      (await request(t.app).post(`/auth/token/validate/changepassword?changepasswordtoken=${token}`)).body.data;
    expect((await request(t.app).post('/auth/forgotpassword').send({ lmsusername: 'twice@example.org' })).status).toBe(
      200,
    );
    await vi.waitFor(() => expect(mailer.sent).toHaveLength(1));
    expect((await request(t.app).post('/auth/forgotpassword').send({ lmsusername: 'twice@example.org' })).status).toBe(
      200,
    );
    await vi.waitFor(() => expect(mailer.sent).toHaveLength(2));
    const [first, second] = [linkOf(0), linkOf(1)];
    expect(first).not.toBe(second);
    expect(await validate(first)).toBe(false);
    expect(await validate(second)).toBe(true);
    const withFirst = await request(t.app)
      .put(`/auth/changepassword?changepasswordtoken=${first}`)
      .send({ lmsuserpassword: 'Another99' });
    expect(withFirst.status).toBe(401);
    const live = await t.tdb.db('tokens').where({ lmsuserid: id }).select('token');
    expect(live).toHaveLength(1);
    const ok = await request(t.app)
      .put(`/auth/changepassword?changepasswordtoken=${second}`)
      .send({ lmsuserpassword: 'Another99' });
    expect(ok.status).toBe(200);
    await staffLogin(t.app, 'twice@example.org', 'Another99');
  });

  it('answers unknown and disabled addresses exactly as known ones, without mailing them', async () => {
    mailer.sent.length = 0;
    const unknown = await request(t.app).post('/auth/forgotpassword').send({ lmsusername: 'who@example.org' });
    expect([unknown.status, unknown.body]).toEqual([200, { error: false, data: 'Password reset mail sent.' }]);
    const off = await request(t.app).put('/auth/sendverificationemail').send({ lmsusername: 'off@example.org' });
    expect([off.status, off.body]).toEqual([200, { error: false, data: 'Verification mail sent.' }]);
    const bad = await request(t.app).post('/auth/forgotpassword').send({ lmsusername: 'nope' });
    expect([bad.status, bad.body.errormessage]).toEqual([400, 'Invalid Email']);
    const sent = await request(t.app).put('/auth/sendverificationemail').send({ lmsusername: ADMIN });
    expect(sent.body).toEqual({ error: false, data: 'Verification mail sent.' });
    await vi.waitFor(() => expect(mailer.sent).toHaveLength(1));
    expect(mailer.sent[0].to).toBe(ADMIN);
  });

  it('counts every link request per e-mail address and per client, known address or not', async () => {
    const other = await makeApp({ MAIL_LINKS_PER_ACCOUNT_HOUR: '2', MAIL_LINKS_PER_CLIENT_HOUR: '5' }, undefined, {
      mailer,
    });
    try {
      const ask = (lmsusername: string) => request(other.app).post('/auth/forgotpassword').send({ lmsusername });
      expect((await ask('flood@example.org')).status).toBe(200);
      expect((await ask('Flood@example.org')).status).toBe(200);
      const third = await ask('flood@example.org');
      expect([third.status, third.body.errormessage]).toEqual([429, 'Too many requests, please try again later.']);
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect((await ask('a@example.org')).status).toBe(200);
      expect((await ask('b@example.org')).status).toBe(200);
      // The sixth request from this client, whatever the address.
      expect((await ask('c@example.org')).status).toBe(429);
    } finally {
      await other.tdb.dispose();
    }
  });
});

describe('POST /auth/school/login', () => {
  it('signs in a school teacher with the school claims and an empty refresh token', async () => {
    const res = await request(t.app)
      .post('/auth/school/login')
      .send({ lmsusername: 'teach1', lmsuserpassword: 'demo' });
    expect(res.status).toBe(200);
    expect(res.body.data.refreshToken).toBe('');
    const c = claimsOf(res.body.data.accessToken);
    expect(c).toMatchObject({
      schoolusername: 'teach1',
      schooluserrole: 3,
      uitheme: 'kids',
      schoolid: null,
      claims: 'wUKhn97t',
    });
    expect(c).not.toHaveProperty('lmsuserroles');
    expect(c).not.toHaveProperty('permissions');
  });

  it("ends a school account's tokens once it is disabled or deleted (within the " +
      "revocation cache's few seconds)", async () => {
    for (const change of [{ isdisabled: true }, { isdeleted: true }]) {
      await createSchoolUser(t.tdb.db, { schoolusername: `teach-${Object.keys(change)[0]}`, role: 3 });
      const res = await request(t.app)
        .post('/auth/school/login')
        .send({ lmsusername: `teach-${Object.keys(change)[0]}`, lmsuserpassword: 'demo' });
      const auth = `Bearer ${res.body.data.accessToken}`;
      expect((await request(t.app).get('/country/all').set('Authorization', auth)).status).toBe(200);
      await t.tdb.db('schoolusers').where({ schoolusername: `teach-${Object.keys(change)[0]}` }).update(change);
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 6_000 });
      try {
        expect((await request(t.app).get('/country/all').set('Authorization', auth)).status).toBe(401);
      } finally {
        vi.useRealTimers();
      }
    }
  });

  it('refuses a learner account exactly like a wrong password', async () => {
    const learner = await request(t.app)
      .post('/auth/school/login')
      .send({ lmsusername: 'learn1', lmsuserpassword: 'demo' });
    const wrong = await request(t.app)
      .post('/auth/school/login')
      .send({ lmsusername: 'teach1', lmsuserpassword: 'nope' });
    for (const r of [learner, wrong])
      expect([r.status, r.body.errormessage]).toEqual([400, 'User/Password not matching']);
  });
});

describe('attacks on tokens', () => {
  const secret = 'test-secret-for-auth';
  let good: Record<string, unknown>;
  beforeAll(async () => {
    good = claimsOf((await staffLogin(t.app, ADMIN)).accessToken);
  });
  const forge = (payload: object, key: string | Buffer, options: jwt.SignOptions = { algorithm: 'HS256' }) =>
    jwt.sign(payload, key, options);
  const strip = ({ iat: _i, exp: _e, ...rest }: Record<string, unknown>) => rest;

  it('refuses alg none, even with a forged wildcard and a recorded jti', async () => {
    const head = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(
      JSON.stringify({ ...good, lmsuserroles: [ROLE_IDS.superadmin], permissions: ['superadmin'] }),
    ).toString('base64url');
    expect((await feed(`${head}.${body}.`)).status).toBe(401);
    expect((await request(t.app).post('/user').set('Authorization', `Bearer ${head}.${body}.`)).status).toBe(401);
  });

  it('refuses a token signed with another secret', async () => {
    expect((await feed(forge(strip(good), 'wrong-secret'))).status).toBe(401);
  });

  it('refuses HS384/HS512 even with the right secret', async () => {
    expect((await feed(forge(strip(good), secret, { algorithm: 'HS512' }))).status).toBe(401);
  });

  it('refuses an expired token whose jti is recorded', async () => {
    const expired = forge({ ...strip(good), exp: Math.floor(Date.now() / 1000) - 10 }, secret, { algorithm: 'HS256' });
    expect((await feed(expired)).status).toBe(401);
  });

  it('refuses a correctly signed token with no recorded jti', async () => {
    expect((await feed(forge({ ...strip(good), jti: crypto.randomUUID() }, secret))).status).toBe(401);
  });

  it('refuses a refresh or change-password token used as an access token', async () => {
    const pair = await staffLogin(t.app, ADMIN);
    expect((await feed(pair.refreshToken)).status).toBe(401);
    // A correctly signed token of another type that copies the access claims is still not an access token.
    const asType = forge({ ...strip(good), claims: 'vW7Ea9Kf' }, secret);
    await t.tdb.db('tokens').insert({ token: (good.jti as string) + 'x', lmsuserid: good.sub, tokentype: 'vW7Ea9Kf' });
    expect((await feed(asType)).status).toBe(401);
  });

  it('refuses a forged lmsuserroles claim in an unsigned token', async () => {
    const [h, , s] = (await staffLogin(t.app, 'new@example.org')).accessToken.split('.');
    const c = claimsOf((await staffLogin(t.app, 'new@example.org')).accessToken);
    const body = Buffer.from(
      JSON.stringify({ ...c, lmsuserroles: [ROLE_IDS.superadmin], permissions: ['superadmin'] }),
    ).toString('base64url');
    expect((await request(t.app).post('/user').set('Authorization', `Bearer ${h}.${body}.${s}`)).status).toBe(401);
  });

  it('revokes every session of a disabled account', async () => {
    const id = await createStaff(t.tdb.db, { lmsusername: 'gone@example.org', roleids: [ROLE_IDS.admin] });
    const pair = await staffLogin(t.app, 'gone@example.org');
    const sa = await createStaff(t.tdb.db, { lmsusername: 'root@example.org', roleids: [ROLE_IDS.superadmin] });
    expect(sa).toBeTruthy();
    const root = await staffLogin(t.app, 'root@example.org');
    const del = await request(t.app).delete(`/user/${id}`).set('Authorization', `Bearer ${root.accessToken}`);
    expect(del.status).toBe(200);
    expect((await feed(pair.accessToken)).status).toBe(401);
    expect((await request(t.app).post(`/auth/refreshtoken?refreshtoken=${pair.refreshToken}`)).status).toBe(401);
  });

  it('accepts the API key only as exactly `Bearer <key>` and only where apikey is listed', async () => {
    expect((await request(t.app).get('/curriculum/all').set('Authorization', 'Bearer app-key-123')).status).toBe(200);
    expect((await request(t.app).get('/curriculum/all').set('Authorization', 'bearer app-key-123')).status).toBe(401);
    expect((await request(t.app).get('/curriculum/all').set('Authorization', 'Bearer app-key-12')).status).toBe(401);
    expect((await request(t.app).post('/user').set('Authorization', 'Bearer app-key-123')).status).toBe(401);
  });
});

describe('removed routes', () => {
  it('has no self-registration and no permission bootstrap', async () => {
    expect((await request(t.app).post('/auth/register').send({})).status).toBe(404);
    expect((await request(t.app).get('/roles/create-perm/abc')).status).toBe(404);
    expect((await request(t.app).post('/roles/create-perm/abc')).status).toBe(404);
    expect((await request(t.app).post('/roles/create-one-permission/abc')).status).toBe(404);
  });
});

describe('passwords carried over from the original system (decision 17)', () => {
  it('accepts bcrypt(md5) and bare md5 once and replaces them with argon2id', async () => {
    const md5 = (p: string) => crypto.createHash('md5').update(p).digest('hex');
    const bcrypt = (await import('bcryptjs')).default;
    const a = await createStaff(t.tdb.db, { lmsusername: 'legacy1@example.org', roleids: [ROLE_IDS.admin] });
    const b = await createStaff(t.tdb.db, { lmsusername: 'legacy2@example.org', roleids: [ROLE_IDS.admin] });
    await t.tdb
      .db('lmsusers')
      .where({ lmsuserid: a })
      .update({ lmsuserpasswordhash: bcrypt.hashSync(md5('Legacy123'), 10) });
    await t.tdb
      .db('lmsusers')
      .where({ lmsuserid: b })
      .update({ lmsuserpasswordhash: md5('Legacy123') });
    for (const [id, name] of [
      [a, 'legacy1@example.org'],
      [b, 'legacy2@example.org'],
    ]) {
      const wrong = await request(t.app).post('/auth/login').send({ lmsusername: name, lmsuserpassword: 'Legacy1234' });
      expect(wrong.status).toBe(400);
      expect((await t.tdb.db('lmsusers').where({ lmsuserid: id }).first()).lmsuserpasswordhash).not.toMatch(
        /^\$argon2id/,
      );
      await staffLogin(t.app, name, 'Legacy123');
      expect((await t.tdb.db('lmsusers').where({ lmsuserid: id }).first()).lmsuserpasswordhash).toMatch(
        /^\$argon2id\$/,
      );
      await staffLogin(t.app, name, 'Legacy123');
    }
  });

  it('replaces an argon2id hash of another cost (19 MiB, 2 passes) with the current one at sign-in', async () => {
    const argon2 = (await import('argon2')).default;
    const id = await createStaff(t.tdb.db, { lmsusername: 'oldcost@example.org', roleids: [ROLE_IDS.admin] });
    await t.tdb
      .db('lmsusers')
      .where({ lmsuserid: id })
      .update({
        lmsuserpasswordhash: await argon2.hash('OldCost123', {
          type: argon2.argon2id,
          memoryCost: 19_456,
          timeCost: 2,
          parallelism: 1,
        }),
      });
    await staffLogin(t.app, 'oldcost@example.org', 'OldCost123');
    const stored = (await t.tdb.db('lmsusers').where({ lmsuserid: id }).first()).lmsuserpasswordhash as string;
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=9216,t=4,p=1\$/);
    await staffLogin(t.app, 'oldcost@example.org', 'OldCost123');
  });
});
