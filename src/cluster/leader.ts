import { randomUUID } from 'node:crypto';
import type { LeaseRepo } from '../store/leases.js';

/** How long the leader lease lasts without renewal. */
export const LEADER_TTL_MS = 30_000;
/** How often every process renews (the leader) or tries to take (the others) the lease. */
export const LEADER_TRY_MS = 10_000;
/**
 * The longest a deployment is without a leader once its leader is gone: the
 * lease runs out (TTL), then a survivor's next try takes it. A new
 * deployment (no lease held) has one at its first try, at start-up.
 */
export const LEADER_HANDOVER_MS = LEADER_TTL_MS + LEADER_TRY_MS;

/**
 * Background work (sweeps, reconciliation) runs on exactly one process of a
 * deployment at a time: whoever holds the leader lease (`name`, default
 * `leader`). The holder renews it every 10 s; when it dies, its lease
 * expires within 30 s and another process takes over at its next try.
 */
export function startLeaderElection(
  leases: LeaseRepo,
  opts: {
    name?: string;
    now?: () => number;
    intervalMs?: number;
    ttlMs?: number;
    onError?: (e: unknown) => void;
  } = {},
): { isLeader(): boolean; stop(opts?: { release?: boolean }): Promise<void> } {
  const now = opts.now ?? Date.now;
  const ttl = opts.ttlMs ?? LEADER_TTL_MS;
  const name = opts.name ?? 'leader';
  const owner = randomUUID();
  let leader = false;
  let stopped = false;
  // A leader that died mid-work is noticed by src/cluster/liveness.ts, like any other process.
  const tick = async () => {
    try {
      leader = leader ? await leases.renew(name, owner, now() + ttl) : await leases.acquire(name, owner, now(), now() + ttl);
    } catch (e) {
      // Cannot tell: step back rather than risk two leaders.
      leader = false;
      opts.onError?.(e);
    }
  };
  let running = tick();
  const timer = setInterval(() => {
    if (!stopped) running = running.then(tick);
  }, opts.intervalMs ?? LEADER_TRY_MS);
  timer.unref();
  return {
    isLeader: () => leader && !stopped,
    /** Stops taking part; `release: false` leaves the lease to expire, as a crash would. */
    async stop(o = {}) {
      stopped = true;
      clearInterval(timer);
      await running;
      if (leader && o.release !== false) await leases.release(name, owner).catch(() => undefined);
      leader = false;
    },
  };
}
