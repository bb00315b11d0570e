import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer } from '../helpers/client.js';
import { checkUploadsAfterKill, crashRound, faultSeed, prng, restart, selfChecking } from './crash-helpers.js';

/**
 * Issue 30: SIGKILL during a burst of small uploads, 8 in flight at once
 * (raw PUTs of new names, which claim the name by link(2) with no lease, and
 * replaces of acknowledged files, which hold the edit lock), as the
 * small-upload benchmark sends them; then a restart: every acknowledged
 * file is there and whole (its last acknowledged contents, or those of a
 * replace in flight), nothing else is visible, and staging is empty.
 */

const ROUNDS = 4;
const IN_FLIGHT = 8;

test('SIGKILL during a burst of small uploads (8 in flight): every acknowledged file is whole after a restart, nothing else is there', async (t) => {
  const seed = faultSeed();
  t.diagnostic(`FC_FAULT_SEED=${seed}`);
  const rand = prng(seed);
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-kill-small-'));
  /** What the server acknowledged: path below storage/admin → contents. */
  const acked = new Map<string, Buffer>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      /** The requests in flight when the kill came (one at most per path, so acknowledgements come in commit order). */
      const inflight = new Map<string, Buffer>();
      const killAfter = 300 + Math.floor(rand() * 900);
      await crashRound(dataDir, killAfter, async (url, token) => {
        const lane = async (l: number) => {
          for (let i = 0; ; i++) {
            const existing = [...acked.keys()].filter((p) => !inflight.has(p));
            const replace = existing.length > 0 && rand() < 0.3;
            const path = replace ? (existing[Math.floor(rand() * existing.length)] as string) : `burst/r${round}-${l}-${i}.bin`;
            const body = selfChecking(1024 + Math.floor(rand() * 6 * 1024));
            inflight.set(path, body);
            const res = await fetch(`${url}/storage/admin/${path}`, { method: 'PUT', headers: bearer(token), body });
            assert.equal(res.status, 201);
            acked.set(path, body);
            inflight.delete(path);
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, (_, l) => lane(l)));
      });

      const server = await restart(dataDir);
      try {
        await checkUploadsAfterKill(dataDir, round, acked, inflight);
      } finally {
        await server.stop();
      }
    }
    t.diagnostic(`${acked.size} files survived ${ROUNDS} kills`);
    assert.ok(acked.size > ROUNDS * IN_FLIGHT, 'the bursts acknowledged uploads before the kills');
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
