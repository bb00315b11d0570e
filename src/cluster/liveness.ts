import { randomUUID } from 'node:crypto';
import type { StoredLeaseRepo } from '../store/leases.js';
import { LEADER_TRY_MS, LEADER_TTL_MS } from './leader.js';

/** Every serving process holds a lease of this name + its own id while it lives. */
export const ALIVE_PREFIX = 'alive:';

/** A process that died without a word, and when its lease ran out: it wrote nothing after that. */
export type Death = { owner: string; expiredAt: number };

/**
 * Who died without saying goodbye. Each serving process, on any node, keeps
 * a lease `alive:<id>` in the metadata store, renewed on the leader's rhythm
 * (every 10 s, for 30 s) and released when it stops cleanly. A SIGKILL, an
 * OOM kill or a lost machine leaves the lease to run out; the leader takes
 * expired ones (each exactly once, src/store/leases-repo.ts) and reports the
 * deaths, so that the work a dead process left half done is finished: the
 * app rescans storage for the changes it made but did not journal (issue 31).
 *
 * This sees what no single node can: a whole node gone while another leads.
 * The leases live in the database even with Redis, because Redis forgets a
 * key that ran out, and a forgotten death is exactly what must not happen.
 */
export function startLiveness(
  leases: StoredLeaseRepo,
  opts: {
    isLeader: () => boolean;
    onDeaths: (deaths: Death[]) => void;
    onError?: (e: unknown) => void;
    now?: () => number;
    intervalMs?: number;
    ttlMs?: number;
    /** This process's id (src/lib/process-id.ts): the owners of its holds begin with it. A new one when not given. */
    owner?: string;
  },
): { readonly owner: string; stop(opts?: { release?: boolean }): Promise<void> } {
  const now = opts.now ?? Date.now;
  const ttl = opts.ttlMs ?? LEADER_TTL_MS;
  const interval = opts.intervalMs ?? LEADER_TRY_MS;
  const owner = opts.owner ?? randomUUID();
  const name = `${ALIVE_PREFIX}${owner}`;
  let stopped = false;
  const tick = async () => {
    try {
      // acquire, not renew: a process that stalled past its ttl (and was counted dead) is alive again.
      await leases.acquire(name, owner, now(), now() + ttl);
      if (!opts.isLeader() || stopped) return;
      const expired = (await leases.takeExpired(ALIVE_PREFIX, now())).filter((l) => l.owner !== owner);
      if (expired.length > 0) opts.onDeaths(expired.map((l) => ({ owner: l.owner, expiredAt: l.expiresAt })));
    } catch (e) {
      opts.onError?.(e);
    }
  };
  let running = tick();
  const timer = setInterval(() => {
    if (!stopped) running = running.then(tick);
  }, interval);
  timer.unref();
  return {
    owner,
    /** Stops the heartbeat; `release: false` leaves the lease to run out, as a crash would. */
    async stop(o = {}) {
      stopped = true;
      clearInterval(timer);
      await running;
      if (o.release !== false) await leases.release(name, owner).catch(() => undefined);
    },
  };
}
