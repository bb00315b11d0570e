import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server that cuts connections mid-stream, as a
 * flaky network does: after `cutAfter[i]` bytes have gone from clients to
 * the server in total, the connection carrying the byte that crosses it is
 * destroyed on both sides (each threshold once). Counts every byte of
 * requests, headers included.
 */
export type CuttingProxy = {
  readonly url: string;
  readonly cuts: number;
  readonly forwarded: number;
  /** New connections go to this server from now on (a restarted server on another port; same base path). */
  retarget(target: string): void;
  close(): Promise<void>;
};

export async function startCuttingProxy(target: string, cutAfter: readonly number[]): Promise<CuttingProxy> {
  let upstreamAt = new URL(target);
  const pending = [...cutAfter].sort((a, b) => a - b);
  let forwarded = 0;
  let cuts = 0;
  const proxy = await startRelay(target, () => upstreamAt, ({ client, upstream, cut }) => {
    client.on('data', (chunk: Buffer) => {
      const next = pending[0];
      if (next !== undefined && forwarded + chunk.length >= next) {
        // Forward the part before the threshold, then drop the connection.
        const keep = next - forwarded;
        pending.shift();
        forwarded = next;
        upstream.write(chunk.subarray(0, keep), () => setTimeout(() => (cuts++, cut()), 50));
        client.pause();
        return;
      }
      forwarded += chunk.length;
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
  });
  return {
    url: proxy.url,
    get cuts() {
      return cuts;
    },
    get forwarded() {
      return forwarded;
    },
    retarget(next: string) {
      upstreamAt = new URL(next);
    },
    close: proxy.close,
  };
}

/**
 * A TCP proxy that cuts the first connection's answer: after `cutAfter` bytes
 * have come back from the server (headers included) the connection is
 * destroyed on both sides, as a download dropped mid-way; later connections
 * pass untouched (the resume).
 */
export async function startDownloadCutter(target: string, cutAfter: number): Promise<{ readonly url: string; readonly cuts: number; close(): Promise<void> }> {
  const at = new URL(target);
  let cuts = 0;
  let first = true;
  const proxy = await startRelay(target, () => at, ({ client, upstream, cut }) => {
    let left = first ? cutAfter : Infinity;
    first = false;
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (chunk.length < left) {
        left -= chunk.length;
        client.write(chunk);
        return;
      }
      cuts++;
      client.write(chunk.subarray(0, left), cut);
      left = 0;
      upstream.pause();
    });
  });
  return {
    url: proxy.url,
    get cuts() {
      return cuts;
    },
    close: proxy.close,
  };
}

/**
 * A network between clients and a server that can go away and come back:
 * `offline()` cuts every open connection at once (a request in flight fails
 * mid-way, as on a dropped link) and drops each new one as it arrives until
 * `online()`. It works below the client, so whether a request in flight
 * fails does not depend on a browser's network emulation (Chromium's
 * `Network.emulateNetworkConditions` stopped failing requests already in
 * flight in version 156).
 */
export type NetworkSwitch = {
  readonly url: string;
  /** Connections cut by offline() or dropped while offline. */
  readonly dropped: number;
  offline(): void;
  online(): void;
  close(): Promise<void>;
};

export async function startNetworkSwitch(target: string): Promise<NetworkSwitch> {
  const at = new URL(target);
  const open = new Set<() => void>();
  let down = false;
  let dropped = 0;
  const proxy = await startRelay(target, () => at, ({ client, upstream, cut }) => {
    if (down) {
      dropped++;
      return cut();
    }
    open.add(cut);
    client.on('close', () => open.delete(cut));
    // Backpressure both ways: an upload throttled at the client stays throttled end to end.
    client.pipe(upstream, { end: false });
    upstream.pipe(client, { end: false });
  });
  return {
    url: proxy.url,
    get dropped() {
      return dropped;
    },
    offline() {
      down = true;
      for (const cut of open) {
        dropped++;
        cut();
      }
      open.clear();
    },
    online() {
      down = false;
    },
    close: proxy.close,
  };
}

/**
 * The TCP plumbing the proxies share: a listener on 127.0.0.1 that connects
 * each client to the current upstream, ends and errors passed both ways, and
 * every socket destroyed on close. `wire` moves the bytes (and decides cuts).
 */
export async function startRelay(
  target: string,
  upstreamAt: () => URL,
  wire: (pair: { client: Socket; upstream: Socket; cut(): void }) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const { hostname, port } = upstreamAt();
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const cut = () => (client.destroy(), upstream.destroy());
    wire({ client, upstream, cut });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    for (const s of [client, upstream]) {
      s.on('error', cut);
      s.on('close', () => sockets.delete(s));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const listenPort = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${listenPort}${new URL(target).pathname.replace(/\/$/, '')}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
