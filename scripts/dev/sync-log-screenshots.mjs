#!/usr/bin/env node
// Takes the pictures of the two log-sync pages that docs/classroom-box.md shows (docs/sync-log-classroom.png,
// docs/sync-log-central.png)
// in Debian's Chromium at a phone's size, and prints what each page transfers. Both servers run in this process
// on fresh demo databases (SQLite in a temporary folder) and loopback ports of their own.
// Needs the built tree (npx tsc -b) and /usr/bin/chromium (scripts/ci/ensure-chromium.sh).
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const { chromium } = require(require.resolve('playwright-core', { paths: [path.join(root, 'central')] }));
const { classroom, createTestDatabase, repoRoot } = require(path.join(root, 'db/dist/index.js'));
const { createLogger } = require(path.join(root, 'shared/dist/index.js'));
const central = {
  app: require(path.join(root, 'central/dist/app.js')),
  config: require(path.join(root, 'central/dist/config.js')),
  objects: require(path.join(root, 'central/dist/objects/index.js')),
  seed: require(path.join(root, 'central/dist/seed/demo.js')),
  db: require(path.join(root, 'db/dist/index.js')).central,
};
const room = {
  app: require(path.join(root, 'classroom/dist/app.js')),
  config: require(path.join(root, 'classroom/dist/config.js')),
  seed: require(path.join(root, 'classroom/dist/seed/demo.js')),
};

// `--locale km-KH --out DIR` takes the same pictures in Khmer (or another language) into another folder.
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
};
const out = path.resolve(arg('--out', path.join(root, 'docs')));
const locale = arg('--locale', 'en-GB');
const PHONE = { width: 360, height: 740 };
const logger = createLogger({ name: 'screenshots', level: 'silent' });

async function listen(app) {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}

/** Bytes on the wire of every response of a page load (gzip as the server sends it). */
function transferred(page) {
  const sizes = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname.startsWith('/sync-log/'))
      sizes.push({ url: r.url(), len: Number(r.headers()['content-length'] ?? 0) });
  });
  return sizes;
}

const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-shots-'));
const cdb = await createTestDatabase({ kinds: central.db.kinds, migrations: central.db.migrations });
const rdb = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
const servers = [];
let browser;
try {
  await central.seed.seedDemo(cdb.db);
  await room.seed.seedDemo(rdb.db);
  const C = room.seed.CLASSROOM_DEMO;
  const objects = central.objects.createObjectStore({
    kind: 'folder',
    dir: path.relative(repoRoot, path.join(tmp, 'objects')),
  });
  const c = await listen(
    central.app.createApp(
      central.config.loadConfig({ NODE_ENV: 'test', DATABASE_URL: cdb.url, LOG_IMPORT_ENABLED: 'true' }),
      { db: cdb.db, logger, objects },
    ),
  );
  const r = await listen(
    room.app.createApp(
      room.config.loadConfig({ NODE_ENV: 'test', DATABASE_URL: rdb.url, LOG_DIR: path.join(tmp, 'logs') }),
      { db: rdb.db, logger },
    ),
  );
  servers.push(c.server, r.server);

  // A little activity to show: each demo learner takes lesson 1's quiz on the classroom server.
  for (const [n, learner] of C.students.entries()) {
    const login = await fetch(`${r.origin}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ studentusername: learner.schoolusername, studentpassword: C.password }),
    });
    const token = (await login.json()).data.accessToken;
    const started = Date.now() - (n + 1) * 86_400_000;
    await fetch(`${r.origin}/result/lesson/quiz/${C.quizid}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({
        starttime: started,
        endtime: started + 30_000,
        result: C.quizquestions.map((q, i) => ({
          iscorrect: i !== n,
          questionid: C.questions[i],
          lessonquizid: C.quizid,
          lessonquizquestionid: q,
        })),
      }),
    });
  }

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const ctx = await browser.newContext({ viewport: PHONE, locale, acceptDownloads: true });
  await fsp.mkdir(out, { recursive: true });
  const zip = path.join(tmp, 'studentlog.zip');

  const page = await ctx.newPage();
  const roomSizes = transferred(page);
  await page.goto(`${r.origin}/sync-log/`, { waitUntil: 'networkidle' });
  const roomLoad = roomSizes.reduce((a, s) => a + s.len, 0);
  const roomFiles = roomSizes.length;
  await page.fill('#user', C.teacher.schoolusername);
  await page.fill('#password', C.password);
  await page.press('#password', 'Enter');
  await page.locator('#summary').waitFor({ state: 'visible' });
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
  await download.saveAs(zip);
  await page.waitForFunction(() =>
    /studentlog\.zip \(/.test(document.getElementById('save-status')?.textContent ?? ''),
  );
  await page.locator('#save').blur();
  await page.screenshot({ path: path.join(out, 'sync-log-classroom.png'), fullPage: true });

  const cpage = await ctx.newPage();
  const centralSizes = transferred(cpage);
  await cpage.goto(`${c.origin}/sync-log/`, { waitUntil: 'networkidle' });
  const centralLoad = centralSizes.reduce((a, s) => a + s.len, 0);
  const centralFiles = centralSizes.length;
  await cpage.fill('#user', C.teacher.schoolusername);
  await cpage.fill('#password', C.password);
  await cpage.press('#password', 'Enter');
  await cpage.locator('#upload').waitFor({ state: 'visible' });
  await cpage.setInputFiles('#file', zip);
  await cpage.click('#upload-button');
  await cpage.waitForFunction(() => (document.getElementById('upload-status')?.className ?? '').includes('ok'));
  await cpage.locator('#upload-button').blur();
  await cpage.screenshot({ path: path.join(out, 'sync-log-central.png'), fullPage: true });

  for (const f of ['sync-log-classroom.png', 'sync-log-central.png']) {
    process.stdout.write(
      `${path.relative(root, path.join(out, f))}: ${(await fsp.stat(path.join(out, f))).size} bytes\n`,
    );
  }
  process.stdout.write(`classroom /sync-log/ page load: ${roomFiles} files, ${roomLoad} bytes (gzip)\n`);
  process.stdout.write(`central /sync-log/ page load: ${centralFiles} files, ${centralLoad} bytes (gzip)\n`);
} finally {
  await browser?.close();
  for (const s of servers) s.close();
  await cdb.dispose();
  await rdb.dispose();
  await fsp.rm(tmp, { recursive: true, force: true });
}
