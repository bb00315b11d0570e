import type { Share } from '../domain/share.js';

/** Share links, seen by every process and node at once. */
export interface ShareRepo {
  /** `downloadUnits` starts at 0 whatever the argument says. */
  create(s: Share): Promise<void>;
  /** The share as stored, also when expired or used up (the caller decides). */
  get(id: string): Promise<Share | undefined>;
  /** The owner's shares, newest first. */
  listByOwner(ownerId: string): Promise<Share[]>;
  /** Deletes the share if `ownerId` owns it; false otherwise (unknown or someone else's). */
  delete(id: string, ownerId: string): Promise<boolean>;
  /**
   * Adds `units` to the download count unless that takes it past the limit
   * (max_downloads × UNITS_PER_DOWNLOAD + ROUNDING_ALLOWANCE): one conditional
   * UPDATE, exact under concurrency across nodes. False when it would, or the link is gone.
   */
  claimUnits(id: string, units: number): Promise<boolean>;
  /** Gives back units claimed for bytes an answer did not send after all (an interrupted download); never below 0. */
  refundUnits(id: string, units: number): Promise<void>;
  /** Adds `units` to the count without a check (links without a limit, counted in batches). */
  addUnits(id: string, units: number): Promise<void>;
  /** Ends every share of `owner` whose target is `path` or below it (deleted or moved away). */
  deleteWithin(owner: string, path: string): Promise<number>;
  /** Removes shares whose expiry is at or before `now`. */
  deleteExpired(now: number): Promise<number>;
}
