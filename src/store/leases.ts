/**
 * Named leases: mutual exclusion across processes and nodes that ends by
 * itself when the holder stops renewing (it crashed). Times are epoch ms.
 */
export interface LeaseRepo {
  /** Takes `name` for `owner` until `expiresAt` if it is free or expired (or already `owner`'s); false when another holds it. */
  acquire(name: string, owner: string, now: number, expiresAt: number): Promise<boolean>;
  /** Extends a lease `owner` still holds; false when it was lost (expired and taken). */
  renew(name: string, owner: string, expiresAt: number): Promise<boolean>;
  /** Frees the lease if `owner` holds it. */
  release(name: string, owner: string): Promise<void>;
  /**
   * Takes every one of `names` for `owner` until `expiresAt`, in one turn of the store, only if each is
   * free, expired or already `owner`'s and none of `around` is held (by anyone) at `now`; otherwise
   * takes none and returns false. The names are written before `around` is read, as with an acquire
   * followed by heldOf, so a change that takes one of `around` and then looks for the leases below it
   * never misses these (src/storage/coordination.ts holdInside). `around` holds none of `names`.
   */
  acquireAll(names: readonly string[], owner: string, now: number, expiresAt: number, around: readonly string[]): Promise<boolean>;
  /** Frees those of `names` that `owner` holds, in one turn. */
  releaseAll(names: readonly string[], owner: string): Promise<void>;
  /** Which of `names` are held at `now` (by anyone, not expired): one question for them all (a few hundred names a statement in the database). */
  heldOf(names: readonly string[], now: number): Promise<string[]>;
  /**
   * The names held at `now` that start with `prefix` (any characters: file names go in it). For a
   * change of a whole folder that waits for the changes below it to end (coordination.ts waitFreeWithin).
   */
  heldWithin(prefix: string, now: number): Promise<string[]>;
  /**
   * Frees every lease a process took for its changes (owners `<process>/…`: src/lib/process-id.ts),
   * whoever asks: for the leader, once the process is known dead (its liveness lease ran out), so the
   * rescan that follows walks what the dead process held. Returns how many were freed.
   */
  releaseHeldBy(process: string): Promise<number>;
}

/** Leases in the metadata store, where a lease that ran out stays visible until somebody takes it (Redis forgets it). */
export interface StoredLeaseRepo extends LeaseRepo {
  /**
   * Deletes the leases named `prefix`… that expired at or before `now` and returns them, each to
   * exactly one caller however many ask at once. `prefix` holds no `%`, `_` or backslash.
   */
  takeExpired(prefix: string, now: number): Promise<{ name: string; owner: string; expiresAt: number }[]>;
  /** The names of the leases `prefix`… that are held at `now` (not expired). `prefix` holds no `%`, `_` or backslash. */
  held(prefix: string, now: number): Promise<string[]>;
}
