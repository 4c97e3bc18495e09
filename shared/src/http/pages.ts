import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { RequestHandler } from 'express';
import { errorEnvelope } from './errors';

/**
 * The teacher's log-sync pages (`GET /sync-log/`), and central's access record page (`GET /access-record/`,
 * for a superadmin): one HTML page each, the shared stylesheet and
 * the scripts compiled from shared/web by the project's TypeScript. Nothing comes from elsewhere, and the
 * policy says so: a page that tried to load a font, script or style from another origin would be refused.
 * No `upgrade-insecure-requests`: a classroom server is reached over plain HTTP on the school network.
 */
export const PAGE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'",
  "form-action 'none'", "base-uri 'none'", "frame-ancestors 'none'",
].join('; ');

export type SyncLogPage =
  | 'classroom'
  | 'central'
  | 'fleet'
  | 'access-record';

/** Files a page needs beyond the shared ones (its own stylesheet), by the name the page asks for. */
const PAGE_EXTRAS: Partial<Record<SyncLogPage, Record<string, string>>> = {
  'access-record': { 'access-record.css': 'static/access-record.css' },
};

/** shared/web, from shared/src/http (tests) and from shared/dist/http (the built services) alike. */
export const WEB_DIR = path.resolve(__dirname, '../../web');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
};

/**
 * The QR encoder of the fleet page (uqr: MIT, no dependencies, one ES module), served as the page's own file
 * so that nothing is loaded from elsewhere.
 */
const qrModule = (): string => path.join(path.dirname(require.resolve('uqr')), 'index.mjs');

/** The files one page needs, by the name the page asks for (relative to the page's directory). */
export function pageFiles(page: SyncLogPage): Record<string, string> {
  return {
    '': `static/${page}.html`,
    'sync-log.css': 'static/sync-log.css',
    [`${page}.js`]: `dist/${page}.js`,
    'common.js': 'dist/common.js',
    'i18n.js': 'dist/i18n.js',
    ...(page === 'fleet' ? { 'qr.js': qrModule() } : {}),
    ...PAGE_EXTRAS[page],
  };
}

interface Asset { type: string; body: Buffer; gzip: Buffer; etag: string }

function load(file: string): Asset {
  const body = fs.readFileSync(path.resolve(WEB_DIR, file));
  return {
    type: TYPES[path.extname(file)] ?? 'application/octet-stream',
    body,
    gzip: zlib.gzipSync(body, { level: 9 }),
    etag: `"${crypto.createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`,
  };
}

/**
 * Serves one page (the log-sync pages, central's fleet page) under the path it is mounted at (outside the
 * route tables: these are files, not API routes). Files are read on first use and kept in memory, with a
 * gzip copy; a missing build answers 404.
 */
export function syncLogPage(page: SyncLogPage): RequestHandler {
  const files = pageFiles(page);
  const cache = new Map<string, Asset>();
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') { next(); return; }
    // /sync-log without the slash: the page's relative asset names need the directory form.
    if (req.path === '/' && !req.originalUrl.split('?')[0].endsWith('/')) {
      res.redirect(301, `${req.baseUrl}/`);
      return;
    }
    const name = req.path.slice(1);
    const file = files[name];
    if (file === undefined) { next(); return; }
    let asset = cache.get(name);
    if (!asset) {
      try {
        asset = load(file);
      } catch {
        res.status(404).json(errorEnvelope(`Cannot ${req.method} ${req.originalUrl.split('?')[0]}`));
        return;
      }
      cache.set(name, asset);
    }
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Content-Type', asset.type);
    // Revalidated on every load (a 304 is a few bytes) so that an upgraded server never runs old scripts.
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', asset.etag);
    res.vary('Accept-Encoding');
    if (req.headers['if-none-match'] === asset.etag) {
      res.status(304).end();
      return;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzip : asset.body;
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', String(body.length));
    res.status(200);
    if (req.method === 'HEAD') res.end();
    else res.end(body);
  };
}
