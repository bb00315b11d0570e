import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { redisService, skipReason } from '../../test/helpers/services.js';
import { openSqliteStore } from '../store/sqlite.js';
import type { LeaseRepo } from '../store/leases.js';
import { checkLeaseSets, checkReleaseHeldBy } from '../store/conformance/lease-sets.test-suite.js';
import { randomUUID } from 'node:crypto';
import { startLeaderElection } from './leader.js';
import { openRedis, redisLeaseRepo } from './redis.js';

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function electionOf(leases: LeaseRepo): Promise<void> {
  const fast = { intervalMs: 50, ttlMs: 300 };
  const nodes = Array.from({ length: 4 }, () => startLeaderElection(leases, fast));
  try {
    await settle(200);
    assert.equal(nodes.filter((n) => n.isLeader()).length, 1, 'exactly one leader among four');
    // The leader stops renewing without releasing (its process died): another takes over once the lease expires.
    const leader = nodes.findIndex((n) => n.isLeader());
    await nodes.splice(leader, 1)[0]?.stop({ release: false });
    await settle(100);
    assert.equal(nodes.filter((n) => n.isLeader()).length, 0, 'nobody takes a lease that has not expired');
    await settle(600);
    assert.equal(nodes.filter((n) => n.isLeader()).length, 1, 'a survivor leads');
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
  }
}

test('leader election on the metadata store: one leader, and a successor when it goes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-leader-'));
  const store = await openSqliteStore(join(dir, 'db'));
  try {
    await electionOf(store.leases);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// The leader lease is in the database also with --redis (src/main.ts); Redis's leases (the path
// locks) are held to the same rule: one holder, and a successor once the holder's lease runs out.
test('leases on Redis: one holder among four, and a successor when it goes', { skip: skipReason('Redis') }, async () => {
  const redis = openRedis(redisService() as string);
  try {
    await redis.del('fc:lease:leader');
    await electionOf(redisLeaseRepo(redis));
  } finally {
    redis.disconnect();
  }
});

// The path locks of an S3 create are a set (its name and edit leases) taken in one Lua script.
test('lease sets on Redis: all or none, none while a name around is held', { skip: skipReason('Redis') }, async () => {
  const redis = openRedis(redisService() as string);
  try {
    await checkLeaseSets(redisLeaseRepo(redis), `set-${randomUUID()}:`, Date.now());
  } finally {
    redis.disconnect();
  }
});

// The leader frees a dead process's leases before its rescan (src/main.ts): on Redis by a SCAN and a script per page.
// Skipped only outside CI without a test Redis, with the reason skipReason prints (under CI a missing service fails).
test('leases on Redis: releaseHeldBy frees every lease a dead process held, and nobody else\'s', { skip: skipReason('Redis') }, async () => {
  const redis = openRedis(redisService() as string);
  try {
    await checkReleaseHeldBy(redisLeaseRepo(redis), `dead-${randomUUID()}:`, Date.now());
  } finally {
    redis.disconnect();
  }
});
