import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fsp from 'node:fs/promises';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CSP, ROLE_IDS, sha256Hex } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, PASSWORD, staffLogin } from './accounts';
import { seedWorld, type World } from './people-fixtures';

// Central's fleet page in a real Chromium: an operator registers a box and reads its code once (with a QR code
// that a reader decodes to the same code), gives it a new code and revokes it after a confirmation; an
// administrator narrowed to one school sees that school's boxes only; the page speaks Khmer and fits a phone.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
const PHONE = { width: 360, height: 740 };
const CODE = /^[A-HJKMNP-TV-Z2-9]{5}-[A-HJKMNP-TV-Z2-9]{5}$/;
const SUPER = 'fleet-page-super@e2e.test';
const SCOPED = 'fleet-page-scoped@e2e.test';
const NOBODY = 'fleet-page-user@e2e.test';

let t: TestApp;
let w: World;
let server: http.Server;
let origin: string;
let browser: Browser;
let superadmin: string;

beforeAll(async () => {
  await fsp.access(CHROMIUM).catch(() => {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (bash scripts/ci/ensure-chromium.sh, as root)`);
  });
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000', RATE_LIMIT_MAX: '100000' });
  w = await seedWorld(t.tdb.db);
  await createStaff(t.tdb.db, { lmsusername: SUPER, roleids: [ROLE_IDS.superadmin] });
  await createStaff(t.tdb.db, { lmsusername: SCOPED, roleids: [ROLE_IDS.admin], schools: [w.schoolA.schoolid] });
  await createStaff(t.tdb.db, { lmsusername: NOBODY, roleids: [ROLE_IDS.user] });
  superadmin = `Bearer ${(await staffLogin(t.app, SUPER)).accessToken}`;
  server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await t?.tdb.dispose();
});

async function open(o: { locale?: string; phone?: boolean } = {}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({
    locale: o.locale ?? 'en-US', viewport: o.phone ? PHONE : { width: 1024, height: 768 },
  });
  const page = await ctx.newPage();
  const res = await page.goto(`${origin}/fleet/`);
  expect(res?.status()).toBe(200);
  expect(res?.headers()['content-security-policy']).toBe(PAGE_CSP);
  return { ctx, page };
}

async function signIn(page: Page, user: string): Promise<void> {
  await page.locator('#user').fill(user);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#signin button[type=submit]').click();
}

/** What a QR reader makes of the code drawn on the page. */
async function readQr(page: Page): Promise<string | undefined> {
  const png = PNG.sync.read(await page.locator('#qr svg').screenshot());
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}

const card = (page: Page, name: string) => page.locator('article.box', { has: page.locator('h3', { hasText: name }) });
const boxRow = (name: string) => t.tdb.db('boxes').where({ name }).first();

describe('the fleet page in a browser', () => {
  it('a superadmin registers a box and sees its code once, with a QR code of it; ' +
      'a new code replaces it; the box is revoked after a confirmation', async () => {
    const { ctx, page } = await open();
    // Nothing from elsewhere, and nothing the page's policy had to refuse.
    const elsewhere: string[] = [];
    const refusedByPolicy: string[] = [];
    page.on('request', (r) => { if (!r.url().startsWith(`${origin}/`)) elsewhere.push(r.url()); });
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) refusedByPolicy.push(m.text()); });
    await page.reload();
    await expect.poll(() => page.title()).toBe('Classroom boxes');
    await signIn(page, SUPER);
    await page.locator('#register').waitFor({ state: 'visible' });
    await page.locator('#r-school').selectOption(w.schoolA.schoolid);
    await page.locator('#r-name').fill('Room 4 box');
    await page.locator('#r-button').click();
    await page.locator('#code-panel').waitFor({ state: 'visible' });
    const code = (await page.locator('#code').textContent()) ?? '';
    expect(code).toMatch(CODE);
    // The QR code is of the code itself, and central holds only its digest.
    expect(await readQr(page)).toBe(code);
    const row = await boxRow('Room 4 box');
    expect(row).toMatchObject({ schoolid: w.schoolA.schoolid, state: 'registered',
      enrolcodehash: sha256Hex(code.replace('-', '')) });
    expect(await page.locator('#code-how').textContent()).toContain(`--central ${origin} --code ${code}`);
    const box = card(page, 'Room 4 box');
    expect(await box.locator('dd.state').textContent()).toBe('Registered, waiting for its code');
    expect(await box.textContent()).toContain('Accra Primary');

    // Hidden once done, and after a reload it is nowhere: central never answers it again.
    await page.locator('#code-done').click();
    expect(await page.locator('#code-panel').isHidden()).toBe(true);
    await page.reload();
    await signIn(page, SUPER);
    await card(page, 'Room 4 box').waitFor();
    expect(await page.locator('#code-panel').isHidden()).toBe(true);
    expect(await page.content()).not.toContain(code);
    const listed = await request(t.app).get('/fleet/boxes').set('Authorization', superadmin);
    expect(JSON.stringify(listed.body)).not.toContain(code.replace('-', ''));

    // A new code: shown once, and the earlier one's digest is gone.
    await card(page, 'Room 4 box').locator('button.new-code').click();
    await page.locator('#code-panel').waitFor({ state: 'visible' });
    const second = (await page.locator('#code').textContent()) ?? '';
    expect(second).toMatch(CODE);
    expect(second).not.toBe(code);
    expect(await readQr(page)).toBe(second);
    expect((await boxRow('Room 4 box')).enrolcodehash).toBe(sha256Hex(second.replace('-', '')));
    await page.locator('#code-done').click();

    // Revoke asks first; Cancel changes nothing.
    await card(page, 'Room 4 box').locator('button.revoke').click();
    await page.locator('#confirm').waitFor({ state: 'visible' });
    expect(await page.locator('#confirm-text').textContent()).toBe('Revoke Room 4 box? Its next request is ' +
      'refused until it is enrolled again with a new code.');
    await page.locator('#confirm-no').click();
    expect(await page.locator('#confirm').isHidden()).toBe(true);
    expect((await boxRow('Room 4 box')).state).toBe('registered');
    await card(page, 'Room 4 box').locator('button.revoke').click();
    await page.locator('#confirm-yes').click();
    await expect.poll(() => page.locator('#fleet-status').textContent())
      .toBe('Room 4 box is revoked: central refuses its next request.');
    expect(await card(page, 'Room 4 box').locator('dd.state').textContent()).toBe('Revoked');
    expect(await card(page, 'Room 4 box').locator('button.revoke').count()).toBe(0);
    expect(await boxRow('Room 4 box')).toMatchObject({ state: 'revoked', enrolcodehash: null });

    // Filtered by state: the revoked box only among the revoked.
    await page.locator('#f-state').selectOption('enrolled');
    await expect.poll(() => card(page, 'Room 4 box').count()).toBe(0);
    await page.locator('#f-state').selectOption('revoked');
    await expect.poll(() => card(page, 'Room 4 box').count()).toBe(1);
    expect(elsewhere).toEqual([]);
    expect(refusedByPolicy).toEqual([]);
    await ctx.close();
  }, 120_000);

  it("an administrator narrowed to school A sees A's boxes only, and cannot register one for B; " +
      'an account without the permission is told so', async () => {
    for (const [schoolid, name] of [[w.schoolA.schoolid, 'A library box'], [w.schoolB.schoolid, 'B library box']]) {
      const res = await request(t.app).post('/fleet/boxes').set('Authorization', superadmin).send({ schoolid, name });
      expect(res.status).toBe(201);
    }
    const { ctx, page } = await open();
    await signIn(page, SCOPED);
    await card(page, 'A library box').waitFor();
    expect(await card(page, 'B library box').count()).toBe(0);
    expect(await page.locator('#boxes').textContent()).not.toContain('Bamako Primary');
    const schools = await page.locator('#r-school option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(schools).toEqual([w.schoolA.schoolid]);
    expect(await page.locator('#f-school option').allTextContents()).toEqual(['All', 'Accra Primary']);

    // School A is deleted after the page read it: central refuses, the page says so, nothing is written.
    const before = Number((await t.tdb.db('boxes').count({ n: '*' }))[0].n);
    await t.tdb.db('schools').where({ schoolid: w.schoolA.schoolid }).update({ isdeleted: true });
    try {
      await page.locator('#r-name').fill('Never made');
      await page.locator('#r-button').click();
      await expect.poll(() => page.locator('#register-status').textContent())
        .toBe('Central refused it: Invalid school id.');
    } finally {
      await t.tdb.db('schools').where({ schoolid: w.schoolA.schoolid }).update({ isdeleted: false });
    }
    expect(Number((await t.tdb.db('boxes').count({ n: '*' }))[0].n)).toBe(before);
    await ctx.close();

    const other = await open();
    await signIn(other.page, NOBODY);
    await expect.poll(() => other.page.locator('#signin-status').textContent())
      .toBe('This account cannot manage boxes. Sign in with an administrator account.');
    expect(await other.page.locator('#work').isHidden()).toBe(true);
    await other.ctx.close();
  }, 120_000);

  it("speaks Khmer when the browser asks for it, and fits a phone's screen with the code shown", async () => {
    const { ctx, page } = await open({ locale: 'km-KH', phone: true });
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('km');
    expect(await page.locator('h1').textContent()).toBe('ប្រអប់ម៉ាស៊ីនមេថ្នាក់រៀន');
    await signIn(page, SUPER);
    await page.locator('#register').waitFor({ state: 'visible' });
    expect(await page.locator('#r-button').textContent()).toBe('ចុះឈ្មោះ ហើយបង្ហាញលេខកូដ');
    await page.locator('#r-school').selectOption(w.schoolB.schoolid);
    await page.locator('#r-name').fill('Phone box');
    await page.locator('#r-button').click();
    await page.locator('#code-panel').waitFor({ state: 'visible' });
    const code = (await page.locator('#code').textContent()) ?? '';
    expect(code).toMatch(CODE);
    expect(await readQr(page)).toBe(code);
    expect(await card(page, 'Phone box').locator('dd.state').textContent()).toBe('បានចុះឈ្មោះ កំពុងរង់ចាំលេខកូដ');
    expect(await page.locator('#code-done').textContent()).toBe('រួចរាល់៖ លាក់លេខកូដ');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    const revoke = await card(page, 'Phone box').locator('button.revoke').boundingBox();
    expect(revoke!.height).toBeGreaterThanOrEqual(44);
    // Switched to English on the page: what is drawn follows.
    await page.locator('#lang').selectOption('en');
    expect(await card(page, 'Phone box').locator('dd.state').textContent()).toBe('Registered, waiting for its code');
    expect(await page.locator('#code-title').textContent()).toBe('Enrolment code of Phone box');
    expect(await page.locator('#code').textContent()).toBe(code);
    await ctx.close();
  }, 120_000);
});
