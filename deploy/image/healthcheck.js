// The image's HEALTHCHECK: GET /healthz of the service in this container (the process answers at all).
// Central listens on PORT, the classroom server on RPI_PORT; PID 1's command line says which one runs.
'use strict';
const fs = require('node:fs');
const http = require('node:http');

let cmdline = '';
try { cmdline = fs.readFileSync('/proc/1/cmdline', 'utf8'); } catch { /* another PID namespace layout */ }
const port = Number((cmdline.includes('classroom/') ? process.env.RPI_PORT : process.env.PORT) || 3000);
const listening = process.env.HOST;
const host = !listening || listening === '0.0.0.0' || listening === '::' ? '127.0.0.1' : listening;
const req = http.get({ host, port, path: '/healthz', timeout: 2500 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('timed out')));
req.on('error', (err) => { process.stderr.write(`healthz on ${host}:${port}: ${err.message}\n`); process.exit(1); });
