import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer, login } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { checkUploadsAfterKill, crashRound, faultSeed, prng, restart, selfChecking } from './crash-helpers.js';

/**
 * SIGKILL at random points of a stream of uploads (raw, multipart, and
 * replacing existing files), then a restart: no partial file, no
 * acknowledged upload lost, a replaced file is the old or the new version
 * whole, and data/tmp is empty.
 */

const ROUNDS = 5;

test('SIGKILL at random points of uploads: after a restart no partial or lost file, and staging is clean', async (t) => {
  const seed = faultSeed();
  t.diagnostic(`FC_FAULT_SEED=${seed}`);
  const rand = prng(seed);
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-kill-up-'));
  /** What the server acknowledged: path below storage/admin → contents. */
  const acked = new Map<string, Buffer>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      /** The one request in flight when the kill came: each of its paths may hold its new contents. */
      let inflight = new Map<string, Buffer>();
      const killAfter = 150 + Math.floor(rand() * 1200);
      await crashRound(dataDir, killAfter, async (url, token) => {
        for (let i = 0; ; i++) {
          const size = Math.floor(rand() ** 2 * 4 * 1024 * 1024) + 1;
          const kind = rand();
          if (kind < 0.4 || acked.size === 0) {
            const path = `up/r${round}-${i}.bin`;
            const body = selfChecking(size);
            inflight = new Map([[path, body]]);
            const res = await fetch(`${url}/storage/admin/${path}`, { method: 'PUT', headers: bearer(token), body });
            assert.equal(res.status, 201);
          } else if (kind < 0.7) {
            const files = [0, 1, 2].map((k) => ({ filename: `r${round}-${i}-${k}.bin`, content: selfChecking(Math.floor(size / 3) + 1) }));
            inflight = new Map(files.map((f) => [`mp/${f.filename}`, f.content]));
            const { body, contentType } = multipartBody(files);
            const res = await fetch(`${url}/storage/admin/mp/`, { method: 'PUT', headers: { ...bearer(token), 'content-type': contentType }, body });
            assert.equal(res.status, 201);
            assert.deepEqual(((await res.json()) as { files_written: string[] }).files_written, files.map((f) => f.filename));
          } else {
            const existing = [...acked.keys()];
            const path = existing[Math.floor(rand() * existing.length)] as string;
            const body = selfChecking(size);
            inflight = new Map([[path, body]]);
            const res = await fetch(`${url}/storage/admin/${path}`, { method: 'PUT', headers: bearer(token), body });
            assert.equal(res.status, 201);
          }
          for (const [p, b] of inflight) acked.set(p, b);
          inflight = new Map();
        }
      });

      const server = await restart(dataDir);
      try {
        // Whatever the kill left is what the server now holds and serves.
        await checkUploadsAfterKill(dataDir, round, acked, inflight);
        const sample = [...acked.keys()][0];
        if (sample) {
          const { access_token } = await login(server.url, 'admin', server.adminPassword);
          const res = await fetch(`${server.url}/storage/admin/${sample}`, { headers: bearer(access_token) });
          assert.ok(Buffer.from(await res.arrayBuffer()).equals(acked.get(sample) as Buffer), 'served after restart');
        }
      } finally {
        await server.stop();
      }
    }
    t.diagnostic(`${acked.size} files survived ${ROUNDS} kills`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
