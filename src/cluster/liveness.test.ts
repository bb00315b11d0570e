import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openSqliteStore } from '../store/sqlite.js';
import { startLiveness, type Death } from './liveness.js';

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('liveness: the leader hears once of a process that died without stopping, never of one that stopped', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-liveness-'));
  const store = await openSqliteStore(join(dir, 'db'));
  const fast = { intervalMs: 50, ttlMs: 300 };
  const heard: Death[][] = [];
  let leads = 0; // which of the three processes holds the leader lease
  const procs = [0, 1, 2].map((i) => startLiveness(store.leases, { ...fast, isLeader: () => leads === i, onDeaths: (d) => heard.push(d) }));
  try {
    await settle(500);
    assert.equal(heard.length, 0, 'all alive: no death');
    const crashed = procs[1]!;
    const crashedAt = Date.now();
    await crashed.stop({ release: false }); // as SIGKILL leaves it
    await procs[2]!.stop(); // a clean stop releases its lease
    // Gone from the leases within ttl + one tick, reported by the leader only, once.
    const deadline = Date.now() + 5_000;
    while (heard.length === 0 && Date.now() < deadline) await settle(20);
    await settle(300);
    assert.equal(heard.length, 1, `one report: ${JSON.stringify(heard)}`);
    assert.deepEqual(heard[0]?.map((d) => d.owner), [crashed.owner]);
    const expiredAt = heard[0]?.[0]?.expiredAt ?? 0;
    assert.ok(expiredAt > crashedAt && expiredAt <= crashedAt + fast.ttlMs + 50, `expired ${expiredAt - crashedAt} ms after the crash`);
    // The leader dies too: the next one hears of it, and of nobody else.
    leads = 3;
    await procs[0]!.stop({ release: false });
    const next = startLiveness(store.leases, { ...fast, isLeader: () => true, onDeaths: (d) => heard.push(d) });
    procs.push(next);
    const deadline2 = Date.now() + 5_000;
    while (heard.length === 1 && Date.now() < deadline2) await settle(20);
    await settle(300);
    assert.deepEqual(heard.slice(1).map((ds) => ds.map((d) => d.owner)), [[procs[0]!.owner]]);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
