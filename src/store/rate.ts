/** Attempt counting for rate limits, exact across processes (used when there is no Redis). */
export interface RateRepo {
  /** Records an attempt in `bucket`; 0 when it is within `limit` per `windowMs`, else the seconds until one is allowed (the attempt is then not kept). */
  hit(bucket: string, now: number, windowMs: number, limit: number): Promise<number>;
  /** Takes back one attempt recorded in `bucket` at `at` (one that turned out not to count); nothing if there is none. */
  release(bucket: string, at: number): Promise<void>;
  /** Forgets attempts older than `before` (buckets of addresses that never came back). */
  deleteBefore(before: number): Promise<void>;
}
