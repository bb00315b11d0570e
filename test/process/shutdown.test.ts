import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer } from '../helpers/server.js';
import { bearer, login } from '../helpers/client.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const KiB = 1024;

/** A raw PUT that sends `body` in `chunk`-byte pieces every `everyMs`; resolves with the status, or 0 when the exchange failed. */
function slowUpload(url: string, token: string, body: Buffer, chunk: number, everyMs: number): { done: Promise<number> } {
  const u = new URL(url);
  const done = new Promise<number>((resolve) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', headers: { ...bearer(token), 'content-length': String(body.length), 'content-type': 'application/octet-stream' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    let sent = 0;
    const pump = () => {
      if (req.destroyed) return;
      const piece = body.subarray(sent, sent + chunk);
      sent += piece.length;
      if (sent >= body.length) req.end(piece);
      else req.write(piece, () => setTimeout(pump, everyMs));
    };
    pump();
  });
  return { done };
}

async function listFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

test('SIGTERM under load: uploads that finish in the grace period complete, cut ones leave nothing, no 201 is lost', { timeout: 90_000 }, async () => {
  const server = await startServer({ keepDataDir: false });
  try {
    const { access_token } = await login(server.url, 'admin', server.adminPassword);
    type Job = { name: string; body: Buffer; done: Promise<number> };
    const jobs: Job[] = [];
    // Fast uploads finish about a second after the signal; slow ones would need ~30 s, beyond the 10 s grace.
    for (let i = 0; i < 6; i++) {
      const body = randomBytes(3 * 1024 * KiB + i);
      jobs.push({ name: `fast-${i}.bin`, body, ...slowUpload(`${server.url}/storage/admin/load/fast-${i}.bin`, access_token, body, 128 * KiB, 40) });
    }
    for (let i = 0; i < 3; i++) {
      const body = randomBytes(2 * 1024 * KiB);
      jobs.push({ name: `slow-${i}.bin`, body, ...slowUpload(`${server.url}/storage/admin/load/slow-${i}.bin`, access_token, body, 32 * KiB, 500) });
    }
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const exit = server.stop('SIGTERM');

    // New connections are refused once draining has begun.
    await new Promise((r) => setTimeout(r, 200));
    const late = await fetch(`${server.url}/is_file_cloud`).then((r) => r.status, () => 0);
    assert.equal(late, 0, 'no new requests accepted while draining');

    const statuses = await Promise.all(jobs.map((j) => j.done));
    assert.equal(await exit, 0, 'graceful exit');
    assert.ok(Date.now() - started < 20_000, 'the grace period bounds the shutdown');

    const completed = jobs.filter((_, i) => statuses[i] === 201);
    for (const j of jobs.filter((x) => x.name.startsWith('fast-'))) assert.ok(completed.includes(j), `${j.name} finished within the grace period: ${statuses[jobs.indexOf(j)]}`);
    for (const j of jobs.filter((x) => x.name.startsWith('slow-'))) assert.ok(!completed.includes(j), `${j.name} could not finish in the grace period`);

    // Every 201 is on disk whole; nothing else is, no partial file and no staging left behind.
    const storage = join(server.dataDir, 'storage', 'admin');
    assert.deepEqual(await listFiles(storage), completed.map((j) => join('load', j.name)).sort());
    for (const j of completed) assert.equal(sha(await readFile(join(storage, 'load', j.name))), sha(j.body), `${j.name} is complete`);
    assert.deepEqual(await readdir(join(server.dataDir, 'tmp')), [], 'no staging files left');
  } finally {
    await server.dispose();
  }
});
