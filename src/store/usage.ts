/** A user's storage usage and quota, in bytes. */
/**
 * `used`: bytes of the user's files; `reserved`: bytes of uploads under way
 * (one request each); `staged`: bytes held by unfinished resumable uploads
 * (their length, or what they staged while it is deferred) until they finish,
 * are terminated or expire. Uploads fit while used + reserved + staged <= quota.
 */
export type Usage = { readonly used: number; readonly reserved: number; readonly staged: number; readonly quota: number | undefined };

/**
 * Usage and quotas (0011_usage_quota). Every change is one atomic UPDATE of
 * the user's row (`used = used + delta`), never read-modify-write, so
 * concurrent writers on any node lose no update.
 */
export interface UsageRepo {
  /** undefined when no such user. */
  get(username: string): Promise<Usage | undefined>;
  /** Adds delta (may be negative) to the user's used bytes; no-op for an unknown user. */
  add(username: string, delta: number): Promise<void>;
  /**
   * Sets used bytes outright (a recount by `file-cloud index`), clears
   * reservations, and sets staged bytes from the unfinished resumable uploads.
   */
  setUsed(username: string, used: number): Promise<boolean>;
  /**
   * Reserves bytes for an upload under way when they fit: `used + reserved +
   * staged + bytes <= quota`, checked and applied in one statement. 'unlimited' (nothing
   * reserved) when the user has no quota; 'refused' when it does not fit.
   */
  reserve(username: string, bytes: number): Promise<'reserved' | 'unlimited' | 'refused'>;
  /** Gives back bytes reserved earlier. */
  release(username: string, bytes: number): Promise<void>;
  /** Sets (bytes) or removes (null) the user's quota. False if no such user. */
  setQuota(username: string, quota: number | null): Promise<boolean>;
}
