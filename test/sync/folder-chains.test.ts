// A chain of new empty folders (a/b/c/d) crosses over in at most one request per level, in one
// round (no re-planning), both ways; and a removed chain goes on the other side the same way.
// Counted in the server's own access log, run through the real command against a real server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { localDirs, requestsIn, type Run, syncServer, twoDevices, until } from '../helpers/sync-device.js';

const CHAIN = ['a', 'a/b', 'a/b/c', 'a/b/c/d'];


/** The steps a run printed (one line each). */
const steps = (r: Run): string[] => r.stdout.split('\n').filter(Boolean);

for (const [storage, skip] of BACKENDS) {
  describe(`sync: chains of empty folders (${storage})`, { skip }, () => {
    const s = syncServer(storage, { accessLog: true });
    /** The requests the server logged for paths at or below /alice/Sync/a while `run` ran. */
    async function chainRequests(run: () => Promise<Run>): Promise<{ run: Run; requests: string[] }> {
      const from = s.log.length;
      const r = await run();
      // The client has exited: every answer it got was logged; the line is written just after the answer.
      await new Promise((res) => setTimeout(res, 200));
      const requests = requestsIn(s.log.slice(from))
        .filter((q) => q.path === '/storage/alice/Sync/a' || q.path.startsWith('/storage/alice/Sync/a/'))
        .map((q) => `${q.method} ${q.path.slice('/storage/alice/Sync/'.length)}`);
      return { run: r, requests };
    }
    /** The test's own request, once the server has logged it (so that it is not taken for the client's). */
    async function direct(method: string, rel: string, init: RequestInit = {}): Promise<number> {
      const from = s.log.length;
      const res = await fetch(`${s.url}/storage/alice/Sync/${rel}`, { ...init, method, headers: { ...bearer(s.token), ...init.headers } });
      const path = `/storage/alice/Sync/${rel}`;
      await until(async () => requestsIn(s.log.slice(from)).some((q) => q.method === method && q.path === path), 10_000, `the log line of ${method} ${rel}`);
      return res.status;
    }
    const serverChain = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const p of CHAIN) if ((await fetch(`${s.url}/storage/alice/Sync/${p}/`, { headers: bearer(s.token) })).status === 200) out.push(p);
      return out;
    };

    test('made on the server, the chain is made here; removed on the server, it goes here — no request below it but one listing per level', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('keep.txt'), 'so that the folder is never empty');
      await a.onceOk(s.url, s.key);
      assert.equal(await direct('POST', 'a/b/c/d', { body: JSON.stringify({ action: 'CreateFolder' }), headers: { 'content-type': 'application/json' } }), 201);
      const made = await chainRequests(() => a.onceOk(s.url, s.key));
      assert.deepEqual(await localDirs(a), CHAIN);
      assert.ok(made.requests.length <= CHAIN.length, `at most one request per level: ${made.requests.join(', ')}`);
      assert.deepEqual(steps(made.run), ['mkdir-local a/b/c/d'], 'one step, one round');

      assert.equal(await direct('DELETE', 'a/'), 204);
      const removed = await chainRequests(() => a.onceOk(s.url, s.key));
      assert.deepEqual(await localDirs(a), []);
      assert.deepEqual(removed.requests, []);
      const again = await a.onceOk(s.url, s.key);
      assert.deepEqual(steps(again), [], 'nothing left to do');
    });

    test('made here, the chain goes up in one request; removed here, it goes on the server in at most one request per level', async () => {
      const [a, b] = await twoDevices(s);
      await writeFile(a.file('keep.txt'), 'so that the folder is never empty');
      await a.onceOk(s.url, s.key);
      await mkdir(a.file('a/b/c/d'), { recursive: true });
      const made = await chainRequests(() => a.onceOk(s.url, s.key));
      assert.deepEqual(await serverChain(), CHAIN);
      assert.deepEqual(made.requests, ['POST a/b/c/d/']);
      assert.deepEqual(steps(made.run), ['mkdir-remote a/b/c/d'], 'one step, one round');
      await b.onceOk(s.url, s.key);
      assert.deepEqual(await localDirs(b), CHAIN);

      await rm(a.file('a'), { recursive: true });
      const removed = await chainRequests(() => a.onceOk(s.url, s.key));
      assert.deepEqual(await serverChain(), []);
      assert.ok(removed.requests.length <= CHAIN.length, `at most one request per level: ${removed.requests.join(', ')}`);
      assert.equal((await a.onceOk(s.url, s.key)).stdout, '', 'nothing left to do');
      await b.onceOk(s.url, s.key);
      assert.deepEqual(await localDirs(b), []);
    });

    test('a chain removed here while the server put a file deep in it: the file and its folders stay, and come back here', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('keep.txt'), 'so that the folder is never empty');
      await mkdir(a.file('a/b/c/d'), { recursive: true });
      await a.onceOk(s.url, s.key);
      await rm(a.file('a'), { recursive: true });
      assert.equal((await fetch(`${s.url}/storage/alice/Sync/a/b/c/late.txt`, { method: 'PUT', headers: bearer(s.token), body: 'late' })).status, 201);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'a/b/c/late.txt': 'late', 'keep.txt': 'so that the folder is never empty' });
      assert.deepEqual(await serverChain(), ['a', 'a/b', 'a/b/c']);
    });
  });
}
