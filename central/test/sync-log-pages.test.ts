import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CSP, WEB_DIR, pageFiles } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';

// How the /sync-log/ pages are served (the browser test drives them): the files of each page and no
// other, under a policy that allows nothing from elsewhere, gzip and revalidation.

let central: TestApp;
let room: ClassroomTestApp;
beforeAll(async () => {
  central = await makeApp();
  room = await makeClassroomApp();
});
afterAll(async () => {
  await central.tdb.dispose();
  await room.tdb.dispose();
});

describe('GET /sync-log/', () => {
  it('serves each service its own page, the shared files, and nothing else', async () => {
    for (const [app, page, other] of [
      [central.app, 'central', 'classroom'],
      [room.app, 'classroom', 'central'],
    ] as const) {
      const html = await request(app).get('/sync-log/');
      expect(html.status).toBe(200);
      expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(html.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(html.text).toContain(`<script type="module" src="${page}.js"></script>`);
      for (const name of Object.keys(pageFiles(page)).filter(Boolean)) {
        const res = await request(app).get(`/sync-log/${name}`);
        expect({ name, status: res.status }).toEqual({ name, status: 200 });
        expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
      }
      expect((await request(app).get(`/sync-log/${other}.js`)).status).toBe(404);
      expect((await request(app).get('/sync-log/i18n.d.ts')).status).toBe(404);
      expect((await request(app).get('/sync-log/../package.json')).status).toBe(404);
      expect((await request(app).post('/sync-log/')).status).toBe(404);
    }
  });

  it("serves central's access record page under /access-record/ with its own stylesheet only", async () => {
    const html = await request(central.app).get('/access-record/');
    expect(html.status).toBe(200);
    expect(html.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(html.text).toContain('<script type="module" src="access-record.js"></script>');
    expect(Object.keys(pageFiles('access-record'))).toContain('access-record.css');
    for (const name of Object.keys(pageFiles('access-record')).filter(Boolean)) {
      const res = await request(central.app).get(`/access-record/${name}`);
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    }
    const bare = await request(central.app).get('/access-record');
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe('/access-record/');
    expect((await request(central.app).get('/access-record/central.js')).status).toBe(404);
    expect((await request(central.app).get('/sync-log/access-record.js')).status).toBe(404);
    expect((await request(central.app).get('/sync-log/access-record.css')).status).toBe(404);
    // The box serves no access record: it has none.
    expect((await request(room.app).get('/access-record/')).status).toBe(404);
  });

  it('sends the directory form, gzip when asked, and 304 for a file the browser has', async () => {
    const bare = await request(central.app).get('/sync-log');
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe('/sync-log/');
    const gz = await request(central.app).get('/sync-log/common.js').set('Accept-Encoding', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(gz.headers.vary).toMatch(/Accept-Encoding/);
    expect(gz.text).toBe(fs.readFileSync(path.join(WEB_DIR, 'dist/common.js'), 'utf8'));
    const again = await request(central.app).get('/sync-log/common.js').set('If-None-Match', gz.headers.etag);
    expect(again.status).toBe(304);
    expect(again.headers['cache-control']).toBe('no-cache');
  });

  it('holds no inline script, style or outside address in its HTML, and the policy forbids them', async () => {
    for (const page of ['central', 'classroom', 'fleet', 'access-record'] as const) {
      const html = fs.readFileSync(path.join(WEB_DIR, `static/${page}.html`), 'utf8');
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
      expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    }
    for (const sheet of ['sync-log.css', 'access-record.css']) {
      const css = fs.readFileSync(path.join(WEB_DIR, 'static', sheet), 'utf8');
      expect(css).not.toMatch(/@import|url\(/);
    }
    expect(PAGE_CSP).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self';/);
    expect(PAGE_CSP).not.toMatch(/unsafe|https?:|\*/);
  });
});

describe('GET /fleet/', () => {
  it("serves central's fleet page with its QR module under the same policy, beside the /fleet API; " +
      'the classroom server has no such page', async () => {
    const html = await request(central.app).get('/fleet/');
    expect(html.status).toBe(200);
    expect(html.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(html.text).toContain('<script type="module" src="fleet.js"></script>');
    for (const name of Object.keys(pageFiles('fleet')).filter(Boolean)) {
      const res = await request(central.app).get(`/fleet/${name}`);
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    }
    const qr = await request(central.app).get('/fleet/qr.js');
    expect(qr.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(qr.text).toMatch(/export \{[^}]*\bencode\b/);
    expect((await request(central.app).get('/fleet')).headers.location).toBe('/fleet/');
    expect((await request(central.app).get('/fleet/central.js')).status).toBe(404);
    // The API under the same prefix still answers as an API (no token: 401, not the page).
    const api = await request(central.app).get('/fleet/boxes');
    expect(api.status).toBe(401);
    expect(api.body).toMatchObject({ error: true, data: false });
    expect((await request(room.app).get('/fleet/')).status).toBe(404);
  });
});
