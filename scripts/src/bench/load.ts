import http from 'node:http';

// The load generator of the guarded-read benchmark, run as its own process so that it does not
// share an event loop with the server it measures. argv: url connections seconds [authorization]
// Prints one JSON line: {requests, errors, rps, p50, p99} (latencies in ms).

async function main(): Promise<void> {
  const [url, conns = '20', secs = '5', authorization] = process.argv.slice(2);
  const connections = Number(conns);
  const until = Date.now() + Number(secs) * 1000;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const headers = authorization ? { authorization } : {};
  const latencies: number[] = [];
  let errors = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = process.hrtime.bigint();
      http
        .get(url, { agent, headers }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
            else errors += 1;
            resolve();
          });
        })
        .on('error', () => {
          errors += 1;
          resolve();
        });
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) await one();
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] : Number.NaN;
  const summary = { requests: sorted.length, errors, rps: sorted.length / seconds, p50: at(0.5), p99: at(0.99) };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

void main();
