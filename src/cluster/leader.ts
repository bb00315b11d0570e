import { randomUUID } from 'node:crypto';
import type { LeaseRepo } from '../store/types.js';

const TTL_MS = 30_000;

/**
 * Background work (sweeps, reconciliation) runs on exactly one process at a
 * time: whoever holds the `leader` lease. The holder renews it every 10 s;
 * when it dies, its lease expires within 30 s and another process takes
 * over at its next try.
 */
export function startLeaderElection(
  leases: LeaseRepo,
  opts: { now?: () => number; intervalMs?: number; ttlMs?: number; onError?: (e: unknown) => void } = {},
): { isLeader(): boolean; stop(opts?: { release?: boolean }): Promise<void> } {
  const now = opts.now ?? Date.now;
  const ttl = opts.ttlMs ?? TTL_MS;
  const owner = randomUUID();
  let leader = false;
  let stopped = false;
  const tick = async () => {
    try {
      leader = leader ? await leases.renew('leader', owner, now() + ttl) : await leases.acquire('leader', owner, now(), now() + ttl);
    } catch (e) {
      // Cannot tell: step back rather than risk two leaders.
      leader = false;
      opts.onError?.(e);
    }
  };
  let running = tick();
  const timer = setInterval(() => {
    if (!stopped) running = running.then(tick);
  }, opts.intervalMs ?? 10_000);
  timer.unref();
  return {
    isLeader: () => leader && !stopped,
    /** Stops taking part; `release: false` leaves the lease to expire, as a crash would. */
    async stop(o = {}) {
      stopped = true;
      clearInterval(timer);
      await running;
      if (leader && o.release !== false) await leases.release('leader', owner).catch(() => undefined);
      leader = false;
    },
  };
}
