/**
 * Requests per client address in fixed one-minute windows, counted in this
 * process's memory: a share visitor's request must stay as cheap as an
 * authenticated one, so it pays no database or Redis round trip. With N
 * processes a client can get up to N × limit (docs/security.md); the share
 * password is throttled by the shared, exact login limiter instead.
 */
export type VisitorLimiter = {
  /** Counts a request; 0 when allowed, else the seconds until the window ends. */
  hit(address: string, now: number): number;
};

export function createVisitorLimiter(limit: number, windowMs = 60_000, maxAddresses = 100_000): VisitorLimiter {
  let windowStart = 0;
  let counts = new Map<string, number>();
  return {
    hit(address, now) {
      if (now - windowStart >= windowMs || now < windowStart) {
        windowStart = now - (now % windowMs);
        counts = new Map();
      }
      const n = (counts.get(address) ?? 0) + 1;
      // A flood of distinct addresses must not grow memory without bound: past the cap, new ones are refused.
      if (n === 1 && counts.size >= maxAddresses) return Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
      counts.set(address, n);
      return n > limit ? Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) : 0;
    },
  };
}
