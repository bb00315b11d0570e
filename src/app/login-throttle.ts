/**
 * Sliding-window limiter for login attempts per client address: at most
 * `limit` attempts in any `windowMs`. Memory is bounded: at most `maxKeys`
 * addresses are tracked, the longest-idle dropped first (Map keeps insertion
 * order and every hit re-inserts its key).
 */
export class LoginThrottle {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly maxKeys = 100_000,
  ) {}

  /** Records an attempt; returns 0 when allowed, else the seconds until the next one is. */
  hit(key: string, now: number): number {
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
    this.hits.delete(key);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return Math.max(1, Math.ceil(((recent[0] as number) + this.windowMs - now) / 1000));
    }
    recent.push(now);
    this.hits.set(key, recent);
    if (this.hits.size > this.maxKeys) {
      const oldest = this.hits.keys().next().value;
      if (oldest !== undefined) this.hits.delete(oldest);
    }
    return 0;
  }
}
