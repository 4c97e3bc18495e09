import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classroom, createTestDatabase, repoRoot, type TestDatabase } from '@lms/db';
import { PAGE_CSP } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { ObjectStoreError, createObjectStore } from '../src/objects';
import { seedDemo } from '../src/seed/demo';
import { silentLogger, testDatabase } from './helpers';
import { createApp as createClassroomApp } from '../../classroom/src/app';
import { loadConfig as loadClassroomConfig } from '../../classroom/src/config';
import { CLASSROOM_DEMO as C, seedDemo as seedClassroomDemo } from '../../classroom/src/seed/demo';
import { tokenFor } from '../../classroom/test/auth-helpers';
import type { TestApp as ClassroomTestApp } from '../../classroom/test/helpers';

// The teacher's two pages in a real Chromium: save the log on the classroom server's /sync-log/, upload
// the saved file on central's /sync-log/, and read what happened. Both servers run in this process on
// loopback ports of their own.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
const PHONE = { width: 360, height: 740 };

async function listen(app: object): Promise<{ server: Server; origin: string }> {
  const server = (app as unknown as { listen(port: number, host: string): Server }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const count = async (db: TestDatabase, table: string): Promise<number> =>
  Number((await db.db(table).count({ n: '*' }))[0].n);

/** Signs in with the keyboard alone: Tab from the top of the page to the user name, type, Tab, type, Enter. */
async function keyboardSignIn(page: Page, user: string, password: string): Promise<void> {
  for (let i = 0; i < 5 && (await page.evaluate(() => document.activeElement?.id)) !== 'user'; i += 1)
    await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('user');
  await page.keyboard.type(user);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
}

/** Every request the page made went to its own server. */
function watchOrigins(page: Page, origin: string): string[] {
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(`${origin}/`) && !u.startsWith('blob:') && !u.startsWith('data:')) elsewhere.push(u);
  });
  return elsewhere;
}

describe('the log-sync pages in a browser', () => {
  let centralDb: TestDatabase;
  let classroomDb: TestDatabase;
  let central: { server: Server; origin: string };
  let switchedOff: { server: Server; origin: string };
  // Central whose object store is out of reach while `storeDown` is set.
  let flaky: { server: Server; origin: string };
  let storeDown = false;
  let room: { server: Server; origin: string };
  let browser: Browser;
  let tmp: string;

  beforeAll(async () => {
    // Never skipped: a machine without the browser fails here with the way to install it.
    await fsp.access(CHROMIUM).catch(() => {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (bash scripts/ci/ensure-chromium.sh, as root)`,
      );
    });
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-e2e-pages-'));
    centralDb = await testDatabase();
    classroomDb = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
    await seedDemo(centralDb.db);
    await seedClassroomDemo(classroomDb.db);
    const objects = createObjectStore({ kind: 'folder', dir: path.relative(repoRoot, path.join(tmp, 'objects')) });
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: centralDb.url,
      RATE_LIMIT_MAX: '100000',
      MAX_CONCURRENT_IMPORTS: '1',
    };
    central = await listen(
      createApp(loadConfig({ ...env, LOG_IMPORT_ENABLED: 'true' }), {
        db: centralDb.db,
        logger: silentLogger,
        objects,
      }),
    );
    switchedOff = await listen(
      createApp(loadConfig({ ...env, LOG_IMPORT_ENABLED: 'false' }), {
        db: centralDb.db,
        logger: silentLogger,
        objects,
      }),
    );
    const unreachable: typeof objects = Object.create(objects);
    unreachable.put = (...args: Parameters<typeof objects.put>) =>
      storeDown
        ? Promise.reject(new ObjectStoreError('Unavailable', 'connect ECONNREFUSED 127.0.0.1:9'))
        : objects.put(...args);
    flaky = await listen(
      createApp(loadConfig({ ...env, LOG_IMPORT_ENABLED: 'true' }), {
        db: centralDb.db,
        logger: silentLogger,
        objects: unreachable,
      }),
    );
    room = await listen(
      createClassroomApp(
        loadClassroomConfig({ NODE_ENV: 'test', DATABASE_URL: classroomDb.url, LOG_DIR: path.join(tmp, 'logs') }),
        {
          db: classroomDb.db,
          logger: silentLogger,
        },
      ),
    );
    // launch() gives the browser a fresh profile of its own (a new temporary --user-data-dir, removed on close);
    // each test then opens a fresh context in it.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  });

  afterAll(async () => {
    await browser?.close();
    central?.server.close();
    switchedOff?.server.close();
    flaky?.server.close();
    room?.server.close();
    await centralDb?.dispose();
    await classroomDb?.dispose();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  async function context(o: { locale?: string; phone?: boolean } = {}): Promise<BrowserContext> {
    return browser.newContext({
      locale: o.locale ?? 'en-US',
      viewport: o.phone ? PHONE : { width: 1024, height: 768 },
      acceptDownloads: true,
    });
  }

  it("a teacher saves the log on the classroom page and uploads it on central, " +
      "whose rows then hold the learner's results", async () => {
    // A learner's quiz on the classroom server.
    const login = await fetch(`${room.origin}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ studentusername: C.students[0].schoolusername, studentpassword: C.password }),
    });
    const learner = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
    const started = Date.now() - 60_000;
    const quiz = await fetch(`${room.origin}/result/lesson/quiz/${C.quizid}`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${learner}` },
      body: JSON.stringify({
        starttime: started,
        endtime: started + 30_000,
        result: C.quizquestions.map((q, i) => ({
          iscorrect: i !== 2,
          questionid: C.questions[i],
          lessonquizid: C.quizid,
          lessonquizquestionid: q,
        })),
      }),
    });
    expect(quiz.status).toBe(200);
    const results = await classroomDb.db('studentprogress').select('studentprogressid', 'studentid');
    expect(results).toHaveLength(1);

    const ctx = await context();
    const page = await ctx.newPage();
    const elsewhere = watchOrigins(page, room.origin);
    const res = await page.goto(`${room.origin}/sync-log/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(PAGE_CSP);
    await expect.poll(() => page.title()).toBe('Save the classroom log');
    expect(
      await page.evaluate(
        () =>
          typeof localStorage !== 'undefined' && localStorage.length + sessionStorage.length + document.cookie.length,
      ),
    ).toBe(0);

    await keyboardSignIn(page, C.teacher.schoolusername, C.password);
    await page.locator('#summary').waitFor({ state: 'visible' });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('work-title');
    expect(await page.locator('#s-learners').textContent()).toBe('1');
    expect(await page.locator('#s-results').textContent()).toBe('1');
    expect(await page.locator('#s-answers').textContent()).toBe(String(C.quizquestions.length));
    expect(await page.locator('#s-last').textContent()).toBe('Never saved from this server');
    const summaryBytes = await page.locator('#s-size').textContent();

    // Tab from the heading reaches the save button; Enter saves the file.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('save');
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(download.suggestedFilename()).toBe('studentlog.zip');
    const zip = path.join(tmp, 'studentlog.zip');
    await download.saveAs(zip);
    await expect
      .poll(() => page.locator('#save-status').textContent())
      .toMatch(/^Saved studentlog\.zip \(.+\)\. Upload it on the central page\.$/);
    await expect
      .poll(() => page.locator('#s-last').textContent())
      .toMatch(new RegExp(`by ${C.teacher.schoolusername}$`));
    // The keyboard's focus stayed on the button it pressed.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('save');
    expect(summaryBytes).toMatch(/^[\d.,]+ (B|KB)$/);
    const exports = await classroomDb.db('logexports').select('schooluserid', 'bytes');
    expect(exports).toEqual([{ schooluserid: C.teacher.schooluserid, bytes: (await fsp.stat(zip)).size }]);
    expect(elsewhere).toEqual([]);
    await ctx.close();

    // On central: sign in as the same teacher, pick the file, upload.
    const ctx2 = await context();
    const cpage = await ctx2.newPage();
    const elsewhere2 = watchOrigins(cpage, central.origin);
    const cres = await cpage.goto(`${central.origin}/sync-log/`);
    expect(cres?.headers()['content-security-policy']).toBe(PAGE_CSP);
    await keyboardSignIn(cpage, C.teacher.schoolusername, C.password);
    await cpage.locator('#upload').waitFor({ state: 'visible' });
    await cpage.setInputFiles('#file', zip);
    const syncsBefore = await count(centralDb, 'syncs');
    await cpage.locator('#upload-button').focus();
    await cpage.keyboard.press('Enter');
    const status = cpage.locator('#upload-status');
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toMatch(/^Done\. Rows written: \d+\./);
    const text = (await status.textContent()) ?? '';
    expect(text).toContain(`Results: 1. Answers: ${C.quizquestions.length}.`);
    expect(text).toContain('Learners whose work was saved: 1.');
    expect(
      await cpage.locator('#upload-progress').evaluate((p: HTMLProgressElement) => p.value === p.max && p.max > 0),
    ).toBe(true);
    const inCentral = await centralDb
      .db('studentprogress')
      .whereIn(
        'studentprogressid',
        results.map((r) => r.studentprogressid),
      )
      .select('studentprogressid', 'studentid');
    expect(inCentral).toEqual(results);
    expect(await count(centralDb, 'syncs')).toBe(syncsBefore + 1);

    // The same file again: central says it changed nothing.
    await cpage.locator('#upload-button').click();
    await expect
      .poll(() => status.textContent(), { timeout: 15_000 })
      .toBe('Nothing changed: central already had everything in this file.');
    expect(elsewhere2).toEqual([]);
    await ctx2.close();
  });

  it('shows a wrong password on both pages, and a file that is not a log, without writing anything', async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    for (const origin of [room.origin, central.origin]) {
      await page.goto(`${origin}/sync-log/`);
      await keyboardSignIn(page, C.teacher.schoolusername, 'not-the-password');
      await expect.poll(() => page.locator('#signin-status').textContent()).toBe('Wrong user name or password.');
      expect(await page.locator('#work').isHidden()).toBe(true);
    }
    // A learner's account is refused by the classroom page: the log is for staff.
    await page.goto(`${room.origin}/sync-log/`);
    await keyboardSignIn(page, C.students[0].schoolusername, C.password);
    await expect.poll(() => page.locator('#signin-status').textContent()).toBe('Sign in with a teacher account.');
    expect(await page.locator('#work').isHidden()).toBe(true);

    await page.goto(`${central.origin}/sync-log/`);
    await keyboardSignIn(page, C.teacher.schoolusername, C.password);
    await page.locator('#upload').waitFor({ state: 'visible' });
    const notLog = path.join(tmp, 'notes.zip');
    await fsp.writeFile(notLog, 'these are my notes, not a log');
    const syncs = await count(centralDb, 'syncs');
    await page.setInputFiles('#file', notLog);
    await page.locator('#upload-button').click();
    await expect.poll(() => page.locator('#upload-status').textContent())
      .toBe('This is not a log file. Pick the studentlog.zip saved on the classroom page.');
    expect(await count(centralDb, 'syncs')).toBe(syncs);
    await ctx.close();
  });

  it('says when central has the import switched off', async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    await page.goto(`${switchedOff.origin}/sync-log/`);
    await keyboardSignIn(page, C.teacher.schoolusername, C.password);
    await page.locator('#upload').waitFor({ state: 'visible' });
    await page.setInputFiles('#file', path.join(tmp, 'studentlog.zip'));
    const syncs = await count(centralDb, 'syncs');
    await page.locator('#upload-button').click();
    await expect.poll(() => page.locator('#upload-status').textContent())
      .toBe('Central does not take logs now (import is switched off). Ask your administrator.');
    expect(await count(centralDb, 'syncs')).toBe(syncs);
    await ctx.close();
  });

  /**
   * Central's page at `origin` under a fake clock: the teacher signs in
   * and uploads the saved log; `imports` collects the answers' statuses.
   */
  async function uploadWithClock(origin: string): Promise<{ ctx: BrowserContext; page: Page; imports: number[] }> {
    const ctx = await context();
    const page = await ctx.newPage();
    await page.clock.install();
    await page.goto(`${origin}/sync-log/`);
    await keyboardSignIn(page, C.teacher.schoolusername, C.password);
    await page.locator('#upload').waitFor({ state: 'visible' });
    await page.setInputFiles('#file', path.join(tmp, 'studentlog.zip'));
    const imports: number[] = [];
    page.on('response', (r) => { if (r.url().endsWith('/log/import')) imports.push(r.status()); });
    await page.locator('#upload-button').click();
    return { ctx, page, imports };
  }

  it('on a 429 says central is busy, counts down from Retry-After and uploads again by itself', async () => {
    // Another upload holds central's only import slot: its body stops after the first bytes.
    const login = await fetch(`${central.origin}/auth/school/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ lmsusername: C.teacher.schoolusername, lmsuserpassword: C.password }),
    });
    const token = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
    const stalled = http.request(`${central.origin}/log/import`, {
      method: 'PUT',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'multipart/form-data; boundary=x',
        'Content-Length': '100000',
      },
    });
    stalled.on('error', () => undefined);
    stalled.write('--x\r\nContent-Disposition: form-data; name="importfile"; filename="a.zip"\r\n\r\nPK');
    // Ready once a bodiless probe is turned away for want of a slot (while the slot is free, a probe is
    // refused 400 for its missing file and writes nothing).
    for (let i = 0; ; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      const probe = await fetch(`${central.origin}/log/import`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}` },
      });
      await probe.arrayBuffer();
      if (probe.status === 429) break;
      expect(i).toBeLessThan(50);
    }

    const { ctx, page, imports } = await uploadWithClock(central.origin);
    // The account's turn is held by a running upload: central asks again within one lease (10 s).
    await expect.poll(() => page.locator('#upload-status').textContent())
      .toBe('Central is busy with other uploads. It will try again by itself in 10 seconds.');
    expect(await page.locator('#countdown').textContent()).toBe('Trying again in 10 s…');
    await page.clock.runFor(5_000);
    expect(await page.locator('#countdown').textContent()).toBe('Trying again in 5 s…');

    // The other upload ends; when the wait is over the page sends the file again, and it goes through.
    stalled.destroy();
    await new Promise((r) => setTimeout(r, 300));
    await page.clock.runFor(21_000);
    await expect.poll(() => page.locator('#upload-status').textContent(), { timeout: 15_000 })
      .toBe('Nothing changed: central already had everything in this file.');
    expect(imports.at(-1)).toBe(200);
    expect(imports.slice(0, -1)).toEqual([429]);
    expect(await page.locator('#countdown').isHidden()).toBe(true);
    await ctx.close();
  });

  it('when central cannot store the log now (400 with Retry-After), ' +
      'says it is not the file and uploads again by itself', async () => {
    storeDown = true;
    const { ctx, page, imports } = await uploadWithClock(flaky.origin);
    await expect.poll(() => page.locator('#upload-status').textContent())
      .toBe('Central cannot take the log right now (it is not the file). It will try again by itself in 30 seconds.');
    // The store is back; when the wait is over the same file goes through.
    storeDown = false;
    await page.clock.runFor(31_000);
    await expect.poll(() => imports, { timeout: 15_000 }).toEqual([400, 200]);
    await expect
      .poll(() => page.locator('#upload-status').textContent(), { timeout: 15_000 })
      .not.toContain('Central cannot take');
    expect(await page.locator('#countdown').isHidden()).toBe(true);
    await ctx.close();
  });

  it('names the learners central refused: one it does not know yet, one of another school', async () => {
    const roomApp = {
      tdb: classroomDb,
      config: loadClassroomConfig({ NODE_ENV: 'test', DATABASE_URL: classroomDb.url }),
    } as unknown as ClassroomTestApp;
    const newcomer = await tokenFor(roomApp, 4);
    const moved = await tokenFor(roomApp, 4);
    // The second learner is in central too, but on another school's roll.
    await centralDb
      .db('schoolusers')
      .insert({
        schooluserid: moved.schooluserid,
        schoolusername: moved.schoolusername,
        schooluserpasswordhash: 'x',
        schooluserrole: 4,
        schoolname: 'Another School',
      });
    const { curriculumid } = await centralDb.db('curriculums').first('curriculumid');
    await centralDb.db('students').insert({
      studentid: moved.studentid,
      studentfirstname: 'Moved',
      genderid: 1,
      city: 'C',
      country: 'X',
      state: 'S',
      curriculumid,
      schooluserid: moved.schooluserid,
      schoolname: 'Another School',
    });
    const when = new Date(Date.now() - 3_600_000).toISOString();
    await classroomDb.db('studentprogress').insert(
      [newcomer, moved].map((l) => ({
        studentprogressid: crypto.randomUUID(),
        studentid: l.studentid,
        ispass: true,
        studentprogressreferenceid: crypto.randomUUID(),
        progresstype: 2,
        resultpercentage: 90,
        points: 10,
        fullpoints: 10,
        marks: 9,
        scores: 2,
        starttime: when,
        endtime: when,
      })),
    );

    const ctx = await context();
    const page = await ctx.newPage();
    await page.goto(`${room.origin}/sync-log/`);
    await keyboardSignIn(page, C.teacher.schoolusername, C.password);
    await page.locator('#summary').waitFor({ state: 'visible' });
    expect(await page.locator('#s-learners').textContent()).toBe('3');
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#save').click()]);
    const zip = path.join(tmp, 'studentlog-2.zip');
    await download.saveAs(zip);

    await page.goto(`${central.origin}/sync-log/`);
    await keyboardSignIn(page, C.teacher.schoolusername, C.password);
    await page.locator('#upload').waitFor({ state: 'visible' });
    await page.setInputFiles('#file', zip);
    await page.locator('#upload-button').click();
    const status = page.locator('#upload-status');
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toMatch(/Learners refused/);
    const lines = await status.locator('p').allTextContents();
    expect(lines).toContain('Learners whose work was saved: 1.');
    expect(lines).toContain('Learners refused because they belong to another school: 1. Rows not written: 1.');
    expect(lines).toContain(
      'Learners refused because central does not know them yet: ' +
        '1. Their rows (1) are kept and written once they are added.',
    );
    expect(await centralDb.db('studentprogress').where({ studentid: moved.studentid }).first()).toBeUndefined();
    expect(await centralDb.db('logimportpending').where({ learnerid: newcomer.studentid }).pluck('tablename')).toEqual([
      'studentprogress',
    ]);
    await ctx.close();
  });

  it("works at a phone's size and in Khmer, chosen from the browser's language " +
      "and switchable on the page", async () => {
    const ctx = await context({ locale: 'km-KH', phone: true });
    const page = await ctx.newPage();
    for (const origin of [room.origin, central.origin]) {
      await page.goto(`${origin}/sync-log/`);
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('km');
      expect(await page.locator('label[for=password]').textContent()).toBe('ពាក្យសម្ងាត់');
      // Nothing wider than the phone's screen, and the buttons large enough for a finger.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      const button = await page.locator('#signin button[type=submit]').boundingBox();
      expect(button!.height).toBeGreaterThanOrEqual(44);
      await keyboardSignIn(page, C.teacher.schoolusername, 'wrong');
      await expect.poll(() => page.locator('#signin-status').textContent()).toBe('ឈ្មោះអ្នកប្រើ ' +
        'ឬពាក្យសម្ងាត់មិនត្រឹមត្រូវ។');
      // Switched to English with the keyboard: the message already shown follows.
      await page.locator('#lang').selectOption('en');
      expect(await page.locator('#signin-status').textContent()).toBe('Wrong user name or password.');
      await page.locator('#lang').selectOption('km');
    }
    // The classroom page signed in, in Khmer, at the phone's size.
    await page.goto(`${room.origin}/sync-log/`);
    await keyboardSignIn(page, C.teacher.schoolusername, C.password);
    await page.locator('#summary').waitFor({ state: 'visible' });
    expect(await page.locator('#save').textContent()).toBe('រក្សាទុក studentlog.zip');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await ctx.close();
  });
});
