import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLink, type Link } from '../src/fleet-test/link';

// The link emulator of `make fleet-test`: what it adds is a lower bound (a loaded machine only adds more), and
// its cuts and switch are checked by what the two ends see.
let echo: net.Server;
let target: { host: string; port: number };
const links: Link[] = [];

beforeAll(async () => {
  echo = net.createServer((s) => {
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  target = { host: '127.0.0.1', port: (echo.address() as net.AddressInfo).port };
});

afterAll(async () => {
  for (const l of links) await l.close();
  await new Promise((r) => echo.close(r));
});

async function link(p: Parameters<typeof startLink>[1]): Promise<Link> {
  const l = await startLink(target, p);
  links.push(l);
  return l;
}

/** Sends `bytes` through the link to the echo server; resolves with what came back, or how it ended. */
function roundTrip(port: number, bytes: Buffer): Promise<{ back: number; ms: number; error?: string }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let back = 0;
    const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
    s.on('data', (d: Buffer) => {
      back += d.length;
      if (back >= bytes.length) {
        s.destroy();
        resolve({ back, ms: Date.now() - t0 });
      }
    });
    s.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ back, ms: Date.now() - t0, error: err.code ?? err.message }));
    s.on('close', () => resolve({ back, ms: Date.now() - t0, error: back < bytes.length ? 'closed' : undefined }));
  });
}

describe('the link emulator', () => {
  it('delays each direction and limits its bandwidth, and counts the bytes', async () => {
    const l = await link({ name: 'slow', delayMs: 100, bitsPerSecond: 80_000, burstBytes: 1024 });
    const small = await roundTrip(l.port, Buffer.from('ping'));
    expect(small).toMatchObject({ back: 4 });
    expect(small.ms).toBeGreaterThanOrEqual(200);
    // 10 KiB at 10 KB/s each way, after a 1 KiB burst: at least 0.9 s up, then as long again down.
    const big = await roundTrip(l.port, Buffer.alloc(10 * 1024, 7));
    expect(big.back).toBe(10 * 1024);
    expect(big.ms).toBeGreaterThanOrEqual(900);
    expect(l.stats).toMatchObject({ connections: 2, bytesUp: 4 + 10 * 1024, bytesDown: 4 + 10 * 1024 });
    expect(l.stats.cutConnections).toBe(0);
  }, 60_000);

  it('cuts a transfer in the middle when loss strikes, and both ends see the reset', async () => {
    const l = await link({ name: 'lossy', delayMs: 0, bitsPerSecond: 10_000_000, cutChance: 1 });
    const r = await roundTrip(l.port, Buffer.alloc(4096, 1));
    expect(r.back).toBe(0);
    expect(r.error).toBeDefined();
    expect(l.stats).toMatchObject({ cutConnections: 1, cutInFlight: 1, bytesUp: 0 });
  }, 60_000);

  it('switched off, cuts what is open and refuses what comes; switched on, carries again', async () => {
    const l = await link({ name: 'switch', delayMs: 0, bitsPerSecond: 10_000_000 });
    const open = net.connect(l.port, '127.0.0.1');
    await new Promise((r) => open.once('connect', r));
    await new Promise((r) => setTimeout(r, 50));
    const ended = new Promise<string>((r) => {
      open.once('error', (e: NodeJS.ErrnoException) => r(e.code ?? 'error'));
      open.once('close', () => r('closed'));
    });
    l.setOff(true);
    expect(await ended).toMatch(/ECONNRESET|closed/);
    expect(l.isUp()).toBe(false);
    const refused = await roundTrip(l.port, Buffer.from('hello'));
    expect(refused.back).toBe(0);
    // An idle connection cut is counted as cut, not as a transfer broken.
    expect(l.stats).toMatchObject({ cutConnections: 1, cutInFlight: 0, refused: 1 });
    l.setOff(false);
    const again = await roundTrip(l.port, Buffer.from('hello'));
    expect(again.back).toBe(5);
    expect(again.error).toBeUndefined();
  }, 60_000);

  it('goes down on its schedule and counts each outage', async () => {
    const l = await link({ name: 'flaky', delayMs: 0, bitsPerSecond: 10_000_000, cut: { everyMs: 400, forMs: 200 } });
    await new Promise((r) => setTimeout(r, 100));
    const until = Date.now() + 20_000;
    while (l.stats.outages < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(l.stats.outages).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
