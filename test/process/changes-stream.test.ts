import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { bearer, login } from '../helpers/client.js';
import { startCuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js';
import { s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { newDatabase, redisService, skipReason } from '../helpers/services.js';
import { startAll } from '../helpers/start-all.js';

type Change = { cursor: string; type: string; path: string };

/**
 * A real client of GET /api/changes/stream: the `eventsource` package (the
 * WHATWG EventSource for Node), through a proxy that can be pointed at a
 * restarted server or another node, as a load balancer would. It reconnects
 * on its own with Last-Event-ID; the server must resume with nothing lost
 * and nothing doubled.
 */
function follow(url: string, token: string) {
  const got: { change: Change; at: number }[] = [];
  const waiters: (() => void)[] = [];
  let opens = 0;
  const es = new EventSource(`${url}/api/changes/stream`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...bearer(token) } }),
  });
  es.onopen = () => opens++;
  es.onmessage = (e) => {
    got.push({ change: JSON.parse(e.data as string) as Change, at: Date.now() });
    for (const w of waiters.splice(0)) w();
  };
  return {
    got,
    get opens() {
      return opens;
    },
    /** Waits until `n` events arrived, at most `ms`. */
    async until(n: number, ms: number): Promise<void> {
      const deadline = Date.now() + ms;
      while (got.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) assert.fail(`${got.length} of ${n} events within ${ms} ms: ${JSON.stringify(got.map((g) => g.change.path))}`);
        await new Promise<void>((r) => {
          const timer = setTimeout(r, left);
          waiters.push(() => (clearTimeout(timer), r()));
        });
      }
    },
    close: () => es.close(),
  };
}

const put = async (url: string, token: string, path: string) => {
  const res = await fetch(`${url}/storage/admin/${path}`, { method: 'PUT', headers: { ...bearer(token), 'content-type': 'application/octet-stream' }, body: path });
  assert.equal(res.status, 201, await res.text());
  return Date.now();
};

const connected = async (s: { opens: number }, n: number) => {
  const deadline = Date.now() + 10_000;
  while (s.opens < n) {
    assert.ok(Date.now() < deadline, `the stream reconnected ${s.opens - 1} times, wanted ${n - 1}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('change stream with a real EventSource client', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  test('local: reconnecting across a server restart with Last-Event-ID loses and doubles nothing', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fc-changes-stream-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    let server: ServerProcess = await startServer({ dataDir, args: ['--workers', '1'] });
    cleanups.push(() => server.stop());
    const proxy: CuttingProxy = await startCuttingProxy(server.url, []);
    cleanups.push(() => proxy.close());
    const token = (await login(server.url, 'admin', server.adminPassword)).access_token;
    const stream = follow(proxy.url, token);
    cleanups.push(async () => stream.close());
    await connected(stream, 1);
    for (const n of ['a1', 'a2', 'a3']) await put(server.url, token, `${n}.txt`);
    await stream.until(3, 5000);
    await server.stop();
    server = await startServer({ dataDir, args: ['--workers', '1'] });
    proxy.retarget(server.url);
    // Written before the client is back: only Last-Event-ID brings these.
    for (const n of ['b1', 'b2']) await put(server.url, token, `${n}.txt`);
    await connected(stream, 2);
    await put(server.url, token, 'b3.txt');
    await stream.until(6, 5000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(
      stream.got.map((g) => g.change.path),
      ['a1', 'a2', 'a3', 'b1', 'b2', 'b3'].map((n) => `/admin/${n}.txt`),
    );
  });

  const clusterSkip = skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis');
  test('cluster: a change on one node reaches a stream on another within 1 s; a reconnect to the other node resumes exactly', { skip: clusterSkip }, async () => {
    const s3 = await s3ServerOptions();
    const database = await newDatabase('changes');
    // Two nodes of two workers each starting together on a busy machine: the timeout only tells a hung start from a slow one.
    const opts = { args: [...s3.args, '--database', database, '--redis', redisService() as string, '--workers', '2'], env: s3.env, startTimeoutMs: 60_000 };
    const [a, b] = await startAll(startServer(opts), startServer(opts));
    cleanups.push(() => a.dispose(), () => b.dispose());
    const proxy = await startCuttingProxy(a.url, []);
    cleanups.push(() => proxy.close());
    const token = (await login(a.url, 'admin', a.adminPassword)).access_token;
    const stream = follow(proxy.url, token);
    cleanups.push(async () => stream.close());
    await connected(stream, 1);
    const written: number[] = [];
    for (let i = 0; i < 10; i++) {
      written.push(await put(b.url, token, `n${i}.txt`));
      await stream.until(i + 1, 3000);
    }
    const delays = stream.got.map((g, i) => g.at - (written[i] as number));
    assert.ok(Math.max(...delays) <= 1000, `delays ${JSON.stringify(delays)} ms`);
    // The stream's node goes away; the client lands on the other node and resumes there.
    proxy.retarget(b.url);
    await a.stop();
    for (let i = 10; i < 13; i++) await put(b.url, token, `n${i}.txt`);
    await connected(stream, 2);
    await stream.until(13, 5000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(
      stream.got.map((g) => g.change.path),
      Array.from({ length: 13 }, (_, i) => `/admin/n${i}.txt`),
    );
  });
});
