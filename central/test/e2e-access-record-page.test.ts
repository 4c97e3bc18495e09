import fsp from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS, PAGE_CSP } from '@lms/shared';
import { ACCESS_COLUMNS } from '../src/access/routes';
import { createApp } from '../src/app';
import { parseCsv } from '../src/areas/import/csv';
import { loadConfig } from '../src/config';
import { DEMO_STAFF, seedDemo } from '../src/seed/demo';
import { silentLogger, testDatabase } from './helpers';
import type { TestDatabase } from '@lms/db';

// Central's /access-record/ page in a real Chromium: entries written by real requests are read, filtered,
// paged, downloaded and verified by a superadmin; a tampered entry is named; an Admin is turned away.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
const PHONE = { width: 360, height: 740 };
const D = DEMO_IDS;
const staff = (name: string) => DEMO_STAFF.find((s) => s.lmsusername === name)!;
const SUPER = staff('superadmin@demo.lms');
const ADMIN = staff('admin@demo.lms');

describe('the access record page in a browser', () => {
  let tdb: TestDatabase;
  let server: Server;
  let origin: string;
  let browser: Browser;
  let tmp: string;
  let superId: string;
  let adminId: string;
  /** The entry of the Admin's GET /student/all (every learner of the school). */
  let listEntry: number;
  /** The entries of the superadmin's reads of one learner each. */
  let oneEntries: number[];

  async function api(method: string, url: string, o: { token?: string; body?: unknown } = {}) {
    const res = await fetch(`${origin}${url}`, {
      method,
      headers: {
        'Content-Type': 'application/json',
        ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}),
      },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    return { status: res.status, body: (await res.json()) as { data: any } };
  }
  const signInApi = async (name: string, password: string): Promise<string> =>
    (await api('POST', '/auth/login', { body: { lmsusername: name, lmsuserpassword: password } })).body.data
      .accessToken as string;
  const lastId = async () => Number((await tdb.db('accessrecord').max({ m: 'id' }).first())?.m ?? 0);

  beforeAll(async () => {
    await fsp.access(CHROMIUM).catch(() => {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (bash scripts/ci/ensure-chromium.sh, as root)`,
      );
    });
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-e2e-access-'));
    tdb = await testDatabase();
    await seedDemo(tdb.db);
    const app = createApp(
      loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url, RATE_LIMIT_MAX: '100000' }),
      { db: tdb.db, logger: silentLogger },
    );
    server = (app as unknown as { listen(port: number, host: string): Server }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    superId = (await tdb.db('lmsusers').where('lmsusername', SUPER.lmsusername).first('lmsuserid')).lmsuserid;
    adminId = (await tdb.db('lmsusers').where('lmsusername', ADMIN.lmsusername).first('lmsuserid')).lmsuserid;

    // Real reads of learner data, each of which leaves its entry: the Admin lists the school's learners,
    // the superadmin opens one learner's page again and again (more entries than one page holds).
    const adminToken = await signInApi(ADMIN.lmsusername, ADMIN.password);
    const superToken = await signInApi(SUPER.lmsusername, SUPER.password);
    expect((await api('GET', `/student/${D.learners[0].studentid}`, { token: superToken })).status).toBe(200);
    const before = await lastId();
    const all = await api('GET', `/student/all?schoolname=${encodeURIComponent(D.schoolname)}`, { token: adminToken });
    expect(all.status).toBe(200);
    expect(all.body.data.length).toBe(D.learners.length);
    listEntry = await lastId();
    expect(listEntry).toBeGreaterThan(before);
    for (let i = 0; i < 30; i += 1) {
      const one = await api('GET', `/student/${D.learners[0].studentid}`, { token: superToken });
      expect(one.status).toBe(200);
    }
    oneEntries = (await tdb.db('accessrecord').where('id', '>', listEntry).orderBy('id').pluck('id')).map(Number);
    expect(oneEntries).toHaveLength(30);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    server?.close();
    await tdb?.dispose();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  async function context(o: { locale?: string; phone?: boolean } = {}): Promise<BrowserContext> {
    return browser.newContext({
      locale: o.locale ?? 'en-US',
      viewport: o.phone ? PHONE : { width: 1280, height: 900 },
      acceptDownloads: true,
    });
  }

  async function signIn(page: Page, user: string, password: string): Promise<void> {
    await page.locator('#user').fill(user);
    await page.locator('#password').fill(password);
    await page.locator('#signin button[type=submit]').click();
  }

  /** The entry ids the table shows, in its order. */
  const shownIds = async (page: Page): Promise<number[]> =>
    (await page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.id)))
      .map(Number);

  /** Applies a filter and waits for the table (or the "none" message) to follow it. */
  async function filter(
    page: Page,
    f: { account?: string; learner?: string; route?: string; from?: string; to?: string },
  ): Promise<void> {
    await page.locator('#f-from').fill(f.from ?? '');
    await page.locator('#f-to').fill(f.to ?? '');
    await page.locator('#f-account').fill(f.account ?? '');
    await page.locator('#f-learner').fill(f.learner ?? '');
    await page.locator('#f-route').fill(f.route ?? '');
    const answered = page.waitForResponse((r) => r.url().includes('/accessrecord?'));
    await page.locator('#show').click();
    await answered;
    await expect.poll(() => page.locator('#list-status').textContent()).not.toBe('Reading the record…');
  }

  it('a superadmin reads, filters, pages, downloads and verifies the record; a tampered entry is named',
    async () => {
      const ctx = await context();
      const page = await ctx.newPage();
      const elsewhere: string[] = [];
      page.on('request', (r) => {
        const u = r.url();
        if (!u.startsWith(`${origin}/`) && !u.startsWith('blob:')) elsewhere.push(u);
      });
      const res = await page.goto(`${origin}/access-record/`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toBe(PAGE_CSP);
      await expect.poll(() => page.title()).toBe('Access record of learner data');
      const login = page.waitForResponse((r) => r.url().endsWith('/auth/login'));
      await signIn(page, SUPER.lmsusername, SUPER.password);
      const pageToken = ((await (await login).json()) as { data: { accessToken: string } }).data.accessToken;
      await page.locator('#entries').waitFor({ state: 'visible' });
      expect(await page.locator('#who').textContent()).toBe(`Signed in as ${SUPER.lmsusername}.`);

      // Newest first, a page of 25; the next page holds the rest.
      const total = Number((await tdb.db('accessrecord').count({ n: '*' }))[0].n);
      const allIds = (await tdb.db('accessrecord').orderBy('id', 'desc').pluck('id')).map(Number);
      expect(total).toBeGreaterThan(25);
      expect(await shownIds(page)).toEqual(allIds.slice(0, 25));
      expect(await page.locator('#list-status').textContent()).toBe(`Entries 1–25 of ${total}, newest first.`);
      expect(await page.locator('#prev').isDisabled()).toBe(true);
      await page.locator('#next').click();
      await expect.poll(() => shownIds(page)).toEqual(allIds.slice(25, 50));
      expect(await page.locator('#list-status').textContent())
        .toBe(`Entries 26–${Math.min(50, total)} of ${total}, newest first.`);
      await page.locator('#prev').click();
      await expect.poll(() => shownIds(page)).toEqual(allIds.slice(0, 25));

      // By learner: the second learner was named by the Admin's list only.
      const second = D.learners[1].studentid;
      await filter(page, { learner: second });
      const bySecond = (await tdb.db('accessrecordlearners').where('studentid', second).orderBy('entryid', 'desc')
        .pluck('entryid')).map(Number);
      expect(bySecond).toContain(listEntry);
      expect(await shownIds(page)).toEqual(bySecond);
      const row = page.locator(`#rows tr[data-id="${listEntry}"]`);
      const cells = await row.locator('td').allTextContents();
      expect(cells[1]).toBe(`${adminId}staff`);
      expect(cells[2]).toBe('GET /student/all');
      expect(cells[3]).toContain('/student/all');
      expect(cells[3]).toContain(`filter: {"schoolname":"${D.schoolname}"}`);
      expect(cells[4]).toBeTruthy();
      expect(cells[5]).toBe('answered');
      expect(cells[6]).toBe('200');
      expect(cells[7]).toContain(`${D.learners.length} learners`);
      for (const l of D.learners) expect(cells[7]).toContain(l.studentid);
      const hash = (await tdb.db('accessrecord').where('id', listEntry).first('hash')).hash as string;
      expect(cells[8]).toBe(hash.slice(0, 12));
      // No learner's name, sign-in name or other identity anywhere on the page.
      const text = (await page.locator('body').textContent()) ?? '';
      for (const l of D.learners) {
        for (const v of [l.studentfirstname, l.studentlastname, l.schoolusername]) expect(text).not.toContain(v);
      }

      // By account: the superadmin's own reads, and nothing of the Admin's.
      await filter(page, { account: superId });
      const bySuper = (await tdb.db('accessrecord').where('accountid', superId).orderBy('id', 'desc').pluck('id'))
        .map(Number);
      expect(bySuper.slice(0, 25)).toEqual([...oneEntries].reverse().slice(0, 25));
      expect(await shownIds(page)).toEqual(bySuper.slice(0, 25));
      expect(await page.locator('#list-status').textContent())
        .toBe(`Entries 1–25 of ${bySuper.length}, newest first.`);
      // The route picked from the routes seen narrows it further; an account with no entries shows none.
      expect(await page.locator('#routes option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value)))
        .toContain('/student/:studentid');
      await filter(page, { account: superId, route: '/student/all' });
      expect(await shownIds(page)).toEqual([]);
      expect(await page.locator('#list-status').textContent()).toBe('No entry matches the filter.');
      expect(await page.locator('#entries').isHidden()).toBe(true);
      await filter(page, { account: adminId, route: '/student/all' });
      expect(await shownIds(page)).toEqual([listEntry]);
      // By day (UTC): today's entries, none from tomorrow, and none up to yesterday.
      const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
      const at = new Date((await tdb.db('accessrecord').where('id', listEntry).first('at')).at);
      // (Skipped only when the test runs across midnight UTC.)
      if (at.toISOString().slice(0, 10) === day(0)) {
        await filter(page, { account: adminId, from: day(0), to: day(0) });
        expect(await shownIds(page)).toEqual([listEntry]);
        await filter(page, { account: adminId, from: day(1) });
        expect(await shownIds(page)).toEqual([]);
        await filter(page, { account: adminId, to: day(-1) });
        expect(await shownIds(page)).toEqual([]);
      }
      await page.locator('#f-from').fill(day(1));
      await page.locator('#f-to').fill(day(0));
      await page.locator('#show').click();
      await expect.poll(() => page.locator('#list-status').textContent()).toBe('The "from" day is after the "to" day.');

      // The CSV of the filter shown: central's own columns, its entries oldest first.
      await filter(page, { account: superId });
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-csv').click()]);
      expect(download.suggestedFilename()).toMatch(/^accessrecord-\d{4}-\d{2}-\d{2}\.csv$/);
      const file = path.join(tmp, 'record.csv');
      await download.saveAs(file);
      const csv = await fsp.readFile(file, 'utf8');
      // Byte for byte what the API streams for the same filter (reading the record writes no entry).
      const direct = await fetch(`${origin}/accessrecord/download?format=csv&accountid=${superId}`, {
        headers: { Authorization: `Bearer ${pageToken}` },
      });
      expect(direct.status).toBe(200);
      expect(await direct.text()).toBe(csv);
      const [header, ...rows] = parseCsv(csv).filter((r) => r.length > 1);
      expect(header).toEqual(ACCESS_COLUMNS);
      const col = (name: string) => header.indexOf(name);
      expect(rows.map((r) => Number(r[col('id')]))).toEqual([...bySuper].reverse());
      expect(new Set(rows.map((r) => r[col('accountid')]))).toEqual(new Set([superId]));
      const oneRow = rows.find((r) => Number(r[col('id')]) === oneEntries[0])!;
      expect(oneRow[col('route')]).toBe('/student/:studentid');
      expect(oneRow[col('studentids')]).toBe(D.learners[0].studentid);
      await expect.poll(() => page.locator('#download-status').textContent())
        .toMatch(/^Downloaded accessrecord-\d{4}-\d{2}-\d{2}\.csv \([\d.,]+ (B|KB)\)\.$/);
      const [nd] = await Promise.all([page.waitForEvent('download'), page.locator('#download-ndjson').click()]);
      const ndFile = path.join(tmp, 'record.ndjson');
      await nd.saveAs(ndFile);
      const lines = (await fsp.readFile(ndFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.map((l) => l.id)).toEqual([...bySuper].reverse());

      // The chain holds.
      const count = Number((await tdb.db('accessrecord').count({ n: '*' }))[0].n);
      const [first, last] = [allIds.at(-1), (await lastId())];
      await page.locator('#verify').click();
      await expect.poll(() => page.locator('#verify-status').textContent())
        .toBe(`The chain holds: ${count} entries checked (ids ${first} to ${last}).`);

      // Someone with the database changes the Admin's entry: verify names it, and its row is marked.
      const { client } = await tdb.db('accessrecord').where('id', listEntry).first('client');
      await tdb.db('accessrecord').where('id', listEntry).update({ client: '198.51.100.7' });
      try {
        await filter(page, { learner: second });
        await page.locator('#verify').click();
        const before = allIds.filter((id) => id < listEntry).length;
        await expect.poll(() => page.locator('#verify-status').textContent())
          .toBe(`The chain is broken at entry ${listEntry}: its columns or learners do not match its hash ` +
            `(the entry was changed). Entries before it that fit: ${before}.`);
        expect(await page.locator(`#rows tr[data-id="${listEntry}"]`).getAttribute('class')).toBe('broken');
        expect(await page.locator(`#rows tr[data-id="${listEntry}"] td`).nth(8).textContent())
          .toContain('does not fit the chain');
      } finally {
        await tdb.db('accessrecord').where('id', listEntry).update({ client });
      }
      // An entry removed from the middle: verify names the one after it.
      const [gone, after] = [oneEntries[5], oneEntries[6]];
      const goneRow = await tdb.db('accessrecord').where('id', gone).first();
      const goneLearners = await tdb.db('accessrecordlearners').where('entryid', gone).select('entryid', 'studentid');
      await tdb.db('accessrecord').where('id', gone).delete();
      try {
        await page.locator('#verify').click();
        const fit = allIds.filter((id) => id < after && id !== gone).length;
        await expect.poll(() => page.locator('#verify-status').textContent())
          .toBe(`The chain is broken at entry ${after}: its prevhash is not the hash of the entry before it ` +
            `(an entry was removed or inserted). Entries before it that fit: ${fit}.`);
      } finally {
        await tdb.db('accessrecord').insert(goneRow);
        await tdb.db('accessrecordlearners').insert(goneLearners);
      }
      await page.locator('#verify').click();
      await expect.poll(() => page.locator('#verify-status').textContent())
        .toBe(`The chain holds: ${count} entries checked (ids ${first} to ${last}).`);

      // Signing out forgets the session: the token no longer reads the record.
      expect((await api('GET', '/accessrecord?pagesize=1', { token: pageToken })).status).toBe(200);
      await page.locator('#signout').click();
      expect(await page.locator('#work').isHidden()).toBe(true);
      expect(await page.locator('#rows tr').count()).toBe(0);
      await expect.poll(async () => (await api('GET', '/accessrecord?pagesize=1', { token: pageToken })).status)
        .toBe(401);
      expect(elsewhere).toEqual([]);
      await ctx.close();
    }, 120_000);

  it('an Admin is told that only a superadmin may read the record, and sees none of it', async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    const statuses: number[] = [];
    page.on('response', (r) => { if (r.url().includes('/accessrecord')) statuses.push(r.status()); });
    await page.goto(`${origin}/access-record/`);
    await signIn(page, ADMIN.lmsusername, ADMIN.password);
    await expect.poll(() => page.locator('#signin-status').textContent())
      .toBe('Only a superadmin may read the access record. This account is not a superadmin.');
    expect(await page.locator('#work').isHidden()).toBe(true);
    expect(await page.locator('#rows tr').count()).toBe(0);
    expect(statuses).toEqual([403]);
    // A wrong password is said as on the other pages.
    await signIn(page, SUPER.lmsusername, 'Not-the-password1');
    await expect.poll(() => page.locator('#signin-status').textContent()).toBe('Wrong user name or password.');
    expect(await page.locator('#work').isHidden()).toBe(true);
    await ctx.close();
  }, 60_000);

  it("speaks Khmer when the browser does, and fits a phone's width", async () => {
    const ctx = await context({ locale: 'km-KH', phone: true });
    const page = await ctx.newPage();
    await page.goto(`${origin}/access-record/`);
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('km');
    await expect.poll(() => page.title()).toBe('កំណត់ត្រាការចូលមើលទិន្នន័យសិស្ស');
    expect(await page.locator('label[for=user]').textContent()).toBe('អ៊ីមែល (គណនីបុគ្គលិក)');
    await signIn(page, ADMIN.lmsusername, ADMIN.password);
    await expect.poll(() => page.locator('#signin-status').textContent())
      .toBe('មានតែ superadmin ទេដែលអាចអានកំណត់ត្រាការចូលមើលបាន។ គណនីនេះមិនមែនជា superadmin ទេ។');

    await signIn(page, SUPER.lmsusername, SUPER.password);
    await page.locator('#entries').waitFor({ state: 'visible' });
    expect(await page.locator('#verify').textContent()).toBe('ផ្ទៀងផ្ទាត់ខ្សែសង្វាក់');
    expect(await page.locator('#download-csv').textContent()).toBe('ទាញយក CSV');
    // Each entry is a card whose cells carry their column's name in Khmer; nothing is wider than the phone.
    const firstRow = page.locator('#rows tr').first();
    expect(await firstRow.locator('td').first().getAttribute('data-label')).toBe('ពេលវេលា (UTC)');
    expect(await firstRow.locator('td').nth(5).textContent()).toBe('បានឆ្លើយ');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    for (const id of ['#verify', '#download-csv', '#next']) {
      const box = await page.locator(id).boundingBox();
      expect({ id, tall: box!.height >= 44, inside: box!.x + box!.width <= PHONE.width })
        .toEqual({ id, tall: true, inside: true });
    }
    await page.locator('#verify').click();
    await expect.poll(() => page.locator('#verify-status').textContent()).toMatch(/^ខ្សែសង្វាក់នៅល្អ៖ បានពិនិត្យធាតុ /);
    // Switched to English: what the page drew follows.
    await page.locator('#lang').selectOption('en');
    expect(await firstRow.locator('td').first().getAttribute('data-label')).toBe('Time (UTC)');
    expect(await page.locator('#verify-status').textContent()).toMatch(/^The chain holds: /);
    await ctx.close();
  }, 60_000);
});
