import { randomUUID } from 'node:crypto';
import type { LeaseRepo } from '../store/types.js';

const TTL_MS = 30_000;

/**
 * Background work (sweeps, reconciliation) runs on exactly one process at a
 * time: whoever holds the `leader` lease. The holder renews it every 10 s;
 * when it dies, its lease expires within 30 s and another process takes
 * over at its next try.
 */
export function startLeaderElection(leases: LeaseRepo, opts: { now?: () => number; intervalMs?: number; onError?: (e: unknown) => void } = {}): { isLeader(): boolean; stop(): Promise<void> } {
  const now = opts.now ?? Date.now;
  const owner = randomUUID();
  let leader = false;
  let stopped = false;
  const tick = async () => {
    try {
      leader = leader ? await leases.renew('leader', owner, now() + TTL_MS) : await leases.acquire('leader', owner, now(), now() + TTL_MS);
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
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      if (leader) await leases.release('leader', owner).catch(() => undefined);
      leader = false;
    },
  };
}
