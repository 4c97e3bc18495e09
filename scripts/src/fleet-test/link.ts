/**
 * A user-space link emulator: a TCP proxy on loopback between a box and central that behaves like a poor
 * link. This machine's kernel has no netem, so the link's faults are made here, per connection:
 *
 * - latency: every slice of bytes is delivered `delayMs` after it arrived, in each direction on its own
 *   (a round trip costs twice `delayMs`);
 * - bandwidth: each direction is a token bucket of `bitsPerSecond`, `burstBytes` deep; a slice (at most 1 KiB)
 *   leaves when the bucket holds its size. While more than 64 KiB wait in a direction, its sender is paused
 *   (TCP's back-pressure), so a sender sees the link's pace, not loopback's;
 * - outages on a schedule: `cut` = `{everyMs, forMs}`: the link is down for `forMs` at the end of each
 *   `everyMs` period. Going down destroys every open connection in the middle of whatever it carried (both
 *   sides see a reset), and a connection attempted while down is accepted and reset at once;
 * - loss: TCP retransmits a lost segment, which a proxy above TCP cannot reproduce; what loss does to a sync
 *   (a request that stalls and fails) is emulated as a cut: each slice relayed has `cutChance` of ending its
 *   connection there, both sides reset. With 1 KiB slices, 0.005 cuts one transfer in about 200 KiB;
 * - off: `setOff(true)` (or `offUntil`, milliseconds from the start) makes the link fully down, as an outage
 *   that does not end, until switched on.
 *
 * Every cut is counted: `outages` (down periods begun), `cutConnections` (open connections destroyed by an
 * outage, by loss or by switching off), `cutInFlight` (those of them with bytes on their way: a transfer
 * broken, not an idle kept-alive connection) and `refused` (connections reset at once because the link was
 * down).
 */
import net from 'node:net';

export interface LinkProfile {
  name: string;
  /** One-way delay, milliseconds. */
  delayMs: number;
  bitsPerSecond: number;
  burstBytes?: number;
  cut?: { everyMs: number; forMs: number };
  /** The chance that a relayed slice (at most 1 KiB) ends its connection. */
  cutChance?: number;
  /** Down from the start for this many milliseconds, then up. */
  offUntilMs?: number;
}

export interface LinkStats {
  connections: number;
  outages: number;
  cutConnections: number;
  /** Of those, the ones cut with bytes on their way in either direction (a transfer broken, not an idle one). */
  cutInFlight: number;
  refused: number;
  /** Bytes delivered towards central, and towards the box. */
  bytesUp: number;
  bytesDown: number;
}

export interface Link {
  port: number;
  profile: LinkProfile;
  stats: LinkStats;
  /** Whether the link carries anything now. */
  isUp(): boolean;
  setOff(off: boolean): void;
  close(): Promise<void>;
}

const SLICE = 1024;
const HIGH_WATER = 64 * 1024;

interface Direction {
  queue: Array<{ at: number; buf: Buffer }>;
  queued: number;
  tokens: number;
  refilledAt: number;
  timer?: NodeJS.Timeout;
}

/** Starts a link to `target` (host, port); resolves once it listens on a loopback port of its own. */
export function startLink(target: { host: string; port: number }, profile: LinkProfile): Promise<Link> {
  const started = Date.now();
  const stats: LinkStats = {
    connections: 0, outages: 0, cutConnections: 0, cutInFlight: 0, refused: 0, bytesUp: 0, bytesDown: 0,
  };
  const open = new Set<{ kill(): void }>();
  let off = false;
  let wasDown = false;
  const burst = profile.burstBytes ?? 4096;
  const bytesPerMs = profile.bitsPerSecond / 8 / 1000;

  const inOutage = () => {
    const t = Date.now() - started;
    if (profile.offUntilMs !== undefined && t < profile.offUntilMs) return true;
    if (!profile.cut) return false;
    return t % profile.cut.everyMs >= profile.cut.everyMs - profile.cut.forMs;
  };
  const isUp = () => !off && !inOutage();

  const cutAll = () => {
    for (const c of [...open]) c.kill();
  };
  // A down period begins: every open connection is cut where it stands.
  const watch = setInterval(() => {
    const down = !isUp();
    if (down && !wasDown) {
      stats.outages += 1;
      cutAll();
    }
    wasDown = down;
  }, 20);

  const server = net.createServer((box) => {
    if (!isUp()) {
      stats.refused += 1;
      box.resetAndDestroy();
      return;
    }
    stats.connections += 1;
    const central = net.connect(target.port, target.host);
    let dead = false;
    let lastByteAt = 0;
    // Bytes wait in a queue, or the last ones were delivered so recently that an answer is still due.
    const inFlightFor = () => dirs.some((d) => d.queued > 0) || Date.now() - lastByteAt < 2 * profile.delayMs + 100;
    const dirs: Direction[] = [0, 1].map(() => ({ queue: [], queued: 0, tokens: burst, refilledAt: Date.now() }));
    const conn = {
      kill() {
        if (dead) return;
        stats.cutConnections += 1;
        if (inFlightFor()) stats.cutInFlight += 1;
        end(true);
      },
    };
    open.add(conn);
    function end(reset: boolean) {
      if (dead) return;
      dead = true;
      open.delete(conn);
      for (const d of dirs) clearTimeout(d.timer);
      if (reset) {
        if (!box.destroyed) box.resetAndDestroy();
        if (!central.destroyed) central.resetAndDestroy();
      } else {
        box.destroy();
        central.destroy();
      }
    }
    // Direction 0: box → central (up); 1: central → box (down).
    const relay = (from: net.Socket, to: net.Socket, d: Direction, up: boolean) => {
      const pump = () => {
        d.timer = undefined;
        if (dead) return;
        const now = Date.now();
        d.tokens = Math.min(burst, d.tokens + (now - d.refilledAt) * bytesPerMs);
        d.refilledAt = now;
        while (d.queue.length) {
          const head = d.queue[0];
          if (head.at > now) {
            d.timer = setTimeout(pump, head.at - now);
            return;
          }
          if (d.tokens < head.buf.length) {
            d.timer = setTimeout(pump, Math.max(1, Math.ceil((head.buf.length - d.tokens) / bytesPerMs)));
            return;
          }
          if (profile.cutChance && Math.random() < profile.cutChance) {
            conn.kill();
            return;
          }
          d.tokens -= head.buf.length;
          d.queue.shift();
          d.queued -= head.buf.length;
          to.write(head.buf);
          lastByteAt = Date.now();
          if (up) stats.bytesUp += head.buf.length;
          else stats.bytesDown += head.buf.length;
          if (d.queued < HIGH_WATER && from.isPaused()) from.resume();
        }
      };
      from.on('data', (chunk: Buffer) => {
        if (dead) return;
        for (let i = 0; i < chunk.length; i += SLICE) {
          const buf = chunk.subarray(i, i + SLICE);
          d.queue.push({ at: Date.now() + profile.delayMs, buf });
          d.queued += buf.length;
        }
        if (d.queued >= HIGH_WATER) from.pause();
        if (!d.timer) pump();
      });
      // A side that ends its half ends the other's once what it sent has been delivered.
      from.on('end', () => {
        const flush = () => {
          if (dead) return;
          if (d.queue.length) setTimeout(flush, 20);
          else to.end();
        };
        flush();
      });
    };
    relay(box, central, dirs[0], true);
    relay(central, box, dirs[1], false);
    const sides: Array<[net.Socket, Direction]> = [[box, dirs[0]], [central, dirs[1]]];
    for (const [s, d] of sides) {
      s.on('error', () => end(false));
      // A side that closed has its last bytes delivered, then the connection is over (not cut).
      s.on('close', () => {
        const flush = () => {
          if (dead) return;
          if (d.queue.length) setTimeout(flush, 20);
          else end(false);
        };
        flush();
      });
    }
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        port,
        profile,
        stats,
        isUp,
        setOff(v: boolean) {
          off = v;
          if (v) cutAll();
        },
        close: () =>
          new Promise<void>((r) => {
            clearInterval(watch);
            cutAll();
            server.close(() => r());
          }),
      });
    });
  });
}
