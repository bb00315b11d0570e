import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, withServer, type ServerProcess } from '../helpers/server.js';
import { bearer, login } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

async function waitFor(cond: () => Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a raw PUT that sends `sendBytes` of a declared `totalBytes` body, then calls `then`. */
function partialUpload(server: ServerProcess, token: string, path: string, totalBytes: number, sendBytes: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const url = new URL(`${server.url}${path}`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...bearer(token), 'content-length': String(totalBytes) } });
    req.on('error', () => {});
    const chunk = Buffer.alloc(MiB, 7);
    let sent = 0;
    const pump = () => {
      while (sent < sendBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      resolve();
    };
    pump();
  }).then(() => new Promise((r) => setTimeout(r, 300)));
}

const tmpEntries = (server: ServerProcess) => readdir(join(server.dataDir, 'tmp'));
const exists = (p: string) => stat(p).then(() => true, () => false);

test('aborting a 100 MB upload halfway leaves no file and an empty data/tmp', async () => {
  await withServer(async (server, access_token) => {
      const url = new URL(`${server.url}/storage/admin/big.bin`);
      await new Promise<void>((resolve) => {
        const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...bearer(access_token), 'content-length': String(100 * MiB) } });
        req.on('error', () => resolve());
        const chunk = Buffer.alloc(MiB, 1);
        let sent = 0;
        const pump = () => {
          while (sent < 50 * MiB) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.destroy();
          resolve();
        };
        pump();
      });
      await waitFor(async () => (await tmpEntries(server)).length === 0, 5000, 'data/tmp to be empty');
      assert.equal(await exists(join(server.dataDir, 'storage', 'admin', 'big.bin')), false);
      // The server keeps serving.
      assert.equal((await fetch(`${server.url}/storage/admin/`, { headers: bearer(access_token) })).status, 200);
  });
});

test('SIGKILL during an upload, then a restart, leaves no partial file and a clean data/tmp', async () => {
  await withServer(async (server, access_token) => {
      await partialUpload(server, access_token, '/storage/admin/killed.bin', 100 * MiB, 30 * MiB);
      assert.ok((await tmpEntries(server)).length > 0, 'the upload was staged in data/tmp');
      await server.stop('SIGKILL');
      const again = await startServer({ dataDir: server.dataDir });
      try {
        assert.deepEqual(await tmpEntries(again), []);
        assert.equal(await exists(join(server.dataDir, 'storage', 'admin', 'killed.bin')), false);
        const { access_token: t2 } = await login(again.url, 'admin', again.adminPassword);
        assert.equal((await fetch(`${again.url}/storage/admin/killed.bin`, { headers: bearer(t2) })).status, 404);
      } finally {
        await again.stop();
      }
  });
});

test('20 concurrent uploads under one name give 20 distinct files, each equal to one upload', async () => {
  await withServer(async (server, access_token) => {
      const contents = Array.from({ length: 20 }, () => randomBytes(256 * 1024 + Math.floor(Math.random() * 1000)));
      const results = await Promise.all(
        contents.map(async (content) => {
          const { body, contentType } = multipartBody([{ filename: 'same.bin', content }]);
          const res = await fetch(`${server.url}/storage/admin/race/`, { method: 'PUT', headers: { ...bearer(access_token), 'content-type': contentType }, body });
          assert.equal(res.status, 201);
          return ((await res.json()) as { files_written: string[] }).files_written[0] as string;
        }),
      );
      assert.equal(new Set(results).size, 20, 'distinct final names');
      const files = await readdir(join(server.dataDir, 'storage', 'admin', 'race'));
      assert.equal(files.length, 20);
      const expected = new Set(contents.map(sha));
      const seen = new Set<string>();
      for (const name of files) {
        const h = sha(await readFile(join(server.dataDir, 'storage', 'admin', 'race', name)));
        assert.ok(expected.has(h), `${name} matches one upload`);
        seen.add(h);
      }
      assert.equal(seen.size, 20, 'every upload survived');
      assert.deepEqual(await tmpEntries(server), []);
  });
});

test('10 concurrent overwrite uploads leave a file equal to exactly one of them', async () => {
  await withServer(async (server, access_token) => {
      const contents = Array.from({ length: 10 }, () => randomBytes(512 * 1024));
      await Promise.all(
        contents.map(async (content, i) => {
          const res = i % 2 === 0
            ? await fetch(`${server.url}/storage/admin/one.bin`, { method: 'PUT', headers: bearer(access_token), body: content })
            : await (async () => {
                const { body, contentType } = multipartBody([{ filename: 'one.bin', content }]);
                return fetch(`${server.url}/storage/admin/?overwrite=true`, { method: 'PUT', headers: { ...bearer(access_token), 'content-type': contentType }, body });
              })();
          assert.equal(res.status, 201);
        }),
      );
      const final = sha(await readFile(join(server.dataDir, 'storage', 'admin', 'one.bin')));
      assert.equal(contents.filter((c) => sha(c) === final).length, 1);
      assert.deepEqual((await readdir(join(server.dataDir, 'storage', 'admin'))).sort(), ['one.bin']);
      assert.deepEqual(await tmpEntries(server), []);
  });
});

test('a download running while the file is overwritten returns the old or the new contents, whole', async () => {
  await withServer(async (server, access_token) => {
      const versions = [Buffer.alloc(8 * MiB, 0x41), Buffer.alloc(6 * MiB, 0x42)];
      await fetch(`${server.url}/storage/admin/v.bin`, { method: 'PUT', headers: bearer(access_token), body: versions[0] });
      for (let round = 0; round < 4; round++) {
        const downloads = Array.from({ length: 3 }, () => fetch(`${server.url}/storage/admin/v.bin`, { headers: bearer(access_token) }).then(async (r) => Buffer.from(await r.arrayBuffer())));
        const next = versions[(round + 1) % 2] as Buffer;
        const put = fetch(`${server.url}/storage/admin/v.bin`, { method: 'PUT', headers: bearer(access_token), body: next });
        for (const got of await Promise.all(downloads)) {
          assert.ok(versions.some((v) => v.equals(got)), `round ${round}: a download got ${got.length} bytes matching neither version`);
        }
        assert.equal((await put).status, 201);
      }
  });
});

test('uploading 200 MB keeps the server\'s memory within 64 MiB of its resting size', async () => {
  await withServer(async (server, access_token) => {
      const rss = async () => {
        const text = await readFile(`/proc/${server.proc.pid}/status`, 'utf8');
        return Number(/VmRSS:\s+(\d+) kB/.exec(text)?.[1]) * 1024;
      };
      // Warm up the upload path so one-time allocations (JIT, buffers) are not counted as growth.
      await fetch(`${server.url}/storage/admin/warm.bin`, { method: 'PUT', headers: bearer(access_token), body: Buffer.alloc(4 * MiB) });
      const before = await rss();
      let peak = before;
      const sampler = setInterval(() => void rss().then((v) => (peak = Math.max(peak, v)), () => {}), 50);
      const total = 200 * MiB;
      const chunk = randomBytes(MiB);
      const hash = createHash('sha256');
      let sent = 0;
      const body = new ReadableStream({
        pull(c) {
          if (sent >= total) return c.close();
          sent += chunk.length;
          hash.update(chunk);
          c.enqueue(new Uint8Array(chunk));
        },
      });
      const res = await fetch(`${server.url}/storage/admin/huge.bin`, { method: 'PUT', headers: { ...bearer(access_token), 'content-length': String(total) }, body, duplex: 'half' } as RequestInit);
      clearInterval(sampler);
      assert.equal(res.status, 201);
      const growth = peak - before;
      console.log(`200 MB upload: resting RSS ${(before / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB, growth ${(growth / MiB).toFixed(1)} MiB`);
      assert.ok(growth < 64 * MiB, `peak RSS grew by ${(growth / MiB).toFixed(1)} MiB`);
      assert.equal((await stat(join(server.dataDir, 'storage', 'admin', 'huge.bin'))).size, total);
      const downloaded = createHash('sha256');
      const dl = await fetch(`${server.url}/storage/admin/huge.bin`, { headers: bearer(access_token) });
      for await (const part of dl.body as unknown as AsyncIterable<Uint8Array>) downloaded.update(part);
      assert.equal(downloaded.digest('hex'), hash.digest('hex'));
  });
});
