#!/usr/bin/env node
// Takes the picture of central's access record page that docs/data-protection.md shows
// (docs/access-record-page.png) in Debian's Chromium, and prints what a load of the page transfers. Central runs
// in this process on a fresh demo database (SQLite in a temporary folder) and a loopback port of its own; an
// Admin lists the demo school's learners, the superadmin opens one learner, and one entry is then changed in
// the database, so that the picture shows a filter by learner and verify naming the changed entry.
// Needs the built tree (npx tsc -b) and /usr/bin/chromium (scripts/ci/ensure-chromium.sh).
// `--locale km-KH --out DIR` takes it in Khmer (or another language) into another folder.
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const { chromium } = require(require.resolve('playwright-core', { paths: [path.join(root, 'central')] }));
const { central: centralDb, createTestDatabase } = require(path.join(root, 'db/dist/index.js'));
const { createLogger, DEMO_IDS } = require(path.join(root, 'shared/dist/index.js'));
const { createApp } = require(path.join(root, 'central/dist/app.js'));
const { loadConfig } = require(path.join(root, 'central/dist/config.js'));
const { DEMO_STAFF, seedDemo } = require(path.join(root, 'central/dist/seed/demo.js'));

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
};
const out = path.resolve(arg('--out', path.join(root, 'docs')));
const locale = arg('--locale', 'en-GB');
const staff = (name) => DEMO_STAFF.find((s) => s.lmsusername === name);
const SUPER = staff('superadmin@demo.lms');
const ADMIN = staff('admin@demo.lms');

const db = await createTestDatabase({ kinds: centralDb.kinds, migrations: centralDb.migrations });
let server;
let browser;
try {
  await seedDemo(db.db);
  const app = createApp(loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url }), {
    db: db.db,
    logger: createLogger({ name: 'screenshot', level: 'silent' }),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const signIn = async (s) => {
    const res = await fetch(`${origin}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ lmsusername: s.lmsusername, lmsuserpassword: s.password }),
    });
    return (await res.json()).data.accessToken;
  };
  const get = (token, url) => fetch(`${origin}${url}`, { headers: { Authorization: `Bearer ${token}` } });
  const superToken = await signIn(SUPER);
  await get(superToken, `/student/${DEMO_IDS.learners[0].studentid}`);
  await get(await signIn(ADMIN), `/student/all?schoolname=${encodeURIComponent(DEMO_IDS.schoolname)}`);
  await get(superToken, `/student/download-students?schoolname=${encodeURIComponent(DEMO_IDS.schoolname)}`);
  const listed = await db.db('accessrecord').where('route', '/student/all').first('id');
  await db.db('accessrecord').where('id', listed.id).update({ client: '198.51.100.7' });

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 800 }, locale });
  const page = await ctx.newPage();
  const sizes = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname.startsWith('/access-record/')) sizes.push(Number(r.headers()['content-length'] ?? 0));
  });
  await page.goto(`${origin}/access-record/`, { waitUntil: 'networkidle' });
  const load = sizes.reduce((a, n) => a + n, 0);
  const files = sizes.length;
  await page.fill('#user', SUPER.lmsusername);
  await page.fill('#password', SUPER.password);
  await page.press('#password', 'Enter');
  await page.locator('#entries').waitFor({ state: 'visible' });
  await page.fill('#f-learner', DEMO_IDS.learners[1].studentid);
  await page.click('#show');
  await page.waitForFunction(() => document.querySelectorAll('#rows tr').length === 2);
  await page.click('#verify');
  await page.waitForFunction(() => (document.getElementById('verify-status')?.className ?? '').includes('error'));
  await page.locator('#verify').blur();
  await fsp.mkdir(out, { recursive: true });
  const file = path.join(out, 'access-record-page.png');
  await page.screenshot({ path: file, fullPage: true });
  process.stdout.write(`${path.relative(root, file)}: ${(await fsp.stat(file)).size} bytes\n`);
  process.stdout.write(`central /access-record/ page load: ${files} files, ${load} bytes (gzip)\n`);
} finally {
  await browser?.close();
  server?.close();
  await db.dispose();
}
