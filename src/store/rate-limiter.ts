import type { RateRepo } from './rate.js';

/**
 * The login throttle's seam: counts attempts per client address, shared by
 * every process and node (CONTRACT "Backends and nodes"). Implementations:
 * the metadata store (default) and Redis (src/cluster/redis.ts).
 */
export interface RateLimiter {
  /** Records an attempt; resolves 0 when allowed, else the seconds until the next one is. */
  hit(key: string, now: number): Promise<number>;
  /**
   * Takes back one attempt recorded for `key` at `at`: for counts of failures, where an attempt is
   * recorded before its outcome is known (so concurrent attempts cannot pass the limit) and given
   * back when it succeeds.
   */
  release(key: string, at: number): Promise<void>;
}

export const LOGIN_WINDOW_MS = 60_000;

/** Login attempts counted in the metadata store: exact across workers and nodes that share it. */
export function storeRateLimiter(rates: RateRepo, limit: number, windowMs = LOGIN_WINDOW_MS): RateLimiter {
  return { hit: (key, now) => rates.hit(`login:${key}`, now, windowMs, limit), release: (key, at) => rates.release(`login:${key}`, at) };
}
