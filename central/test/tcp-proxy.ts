import net from 'node:net';

/**
 * A TCP relay on a loopback port to a real service (PostgreSQL, Redis, an S3 server), which a test
 * can cut (`down`: every connection dropped and new ones refused, as when the service goes away)
 * and restore (`up`: listening again on the same port), or make swallow requests without answering
 * (`hang`: connections accepted, nothing relayed).
 */
export interface TcpProxy {
  port: number;
  down(): Promise<void>;
  up(): Promise<void>;
  hang(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let mode: 'relay' | 'hang' = 'relay';
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (mode === 'hang') return;
    const upstream = net.connect(target);
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
    });
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    down: stop,
    async up() {
      mode = 'relay';
      if (!server.listening) await listen(port);
    },
    async hang() {
      mode = 'hang';
      for (const s of sockets) s.destroy();
      if (!server.listening) await listen(port);
    },
    close: stop,
  };
}

/** The URL with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}

/** Polls `check` until it returns true, for at most `ms`. */
export async function eventually(check: () => Promise<boolean>, ms = 15_000, every = 100): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, every));
  }
}
