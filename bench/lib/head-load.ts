/** HEAD load from Node, where wrk cannot time the answers. */
import net from 'node:net';
import { BenchError } from './paths.js';
import type { Server } from './server.js';
import { percentiles, type WrkResult } from './wrk.js';

/**
 * HEAD load from Node: wrk cannot time HEAD answers that carry a
 * Content-Length (its parser then waits for a body that never comes), so
 * this keeps `connections` keep-alive sockets busy, one request at a time
 * each, and ends a response at its blank line (a HEAD answer has no body).
 * The requests cycle through `paths` (as wrk's Lua script does for GETs),
 * each connection starting at its own place in the list.
 */
export async function headLoad(server: Server, paths: readonly string[], connections: number, seconds: number): Promise<WrkResult> {
  if (paths.length === 0) throw new BenchError(`${server.name}: HEAD load with no path`);
  const url = new URL(server.base);
  const headerLines = Object.entries(server.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  // Every request built once: the client's own cost stays out of the figures as much as it can.
  const reqs = paths.map((path) => Buffer.from(`HEAD ${path} HTTP/1.1\r\nHost: ${url.host}\r\n${headerLines}\r\n`));
  const latencies: number[] = [];
  let bad = 0;
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const sockets: net.Socket[] = [];
  const hardStop = setTimeout(() => sockets.forEach((s) => s.destroy()), (seconds + 15) * 1000);
  await Promise.all(
    Array.from({ length: connections }, (_, conn) =>
      new Promise<void>((res) => {
        let next = Math.floor((conn * reqs.length) / connections);
        const sock = net.connect(Number(url.port), url.hostname);
        sockets.push(sock);
        let buf = '';
        let sentAt = 0;
        const send = () => {
          if (performance.now() >= end) return void sock.end();
          sentAt = performance.now();
          sock.write(reqs[next] as Buffer);
          next = (next + 1) % reqs.length;
        };
        sock.on('connect', send);
        sock.on('data', (d: Buffer) => {
          buf += d.toString('latin1');
          for (let i = buf.indexOf('\r\n\r\n'); i >= 0; i = buf.indexOf('\r\n\r\n')) {
            const status = Number(buf.slice(9, 12));
            if (!(status >= 200 && status < 400)) bad++;
            buf = buf.slice(i + 4);
            if (latencies.length < 10_000_000) latencies.push(performance.now() - sentAt);
            send();
          }
        });
        sock.on('error', () => errors++);
        sock.on('close', () => res());
      }),
    ),
  );
  clearTimeout(hardStop);
  const elapsed = (performance.now() - t0) / 1000;
  if (bad > 0 || errors > 0) throw new BenchError(`${server.name}: HEAD ${paths.length === 1 ? paths[0] : `${paths.length} paths`}: ${bad} non-2xx answers, ${errors} socket errors`);
  return { rps: latencies.length / elapsed, ...percentiles(latencies), requests: latencies.length };
}
