/**
 * A WebDAV write lock (RFC 4918 §6, §9.10). `path` is the locked resource inside
 * `user`'s tree: '' for the root, otherwise segments joined by '/' ('a/b.txt').
 */
export type DavLock = {
  /** The lock token, `urn:uuid:<uuid>`; unique. */
  readonly token: string;
  /** Whose tree the lock is in. */
  readonly user: string;
  readonly path: string;
  readonly depth: 0 | 'infinity';
  readonly scope: 'exclusive' | 'shared';
  /** The client's `<D:owner>` element, serialized as received ('' when none). */
  readonly owner: string;
  /** Who took the lock (the authenticated user name). */
  readonly principal: string;
  readonly timeoutSeconds: number;
  readonly createdAt: number;
  readonly expiresAt: number;
};

export type DavLockConflict = { readonly created: false; readonly conflict: DavLock };

/** The user already holds as many live locks as they may. */
export type DavLockLimit = { readonly created: false; readonly tooMany: true };

/**
 * WebDAV locks, seen by every process and node. Locks whose expiresAt is at
 * or before `now` are dead: never returned, never in conflict.
 */
export interface DavLockRepo {
  /**
   * Creates `lock` unless a live lock of the same user conflicts: one on the same
   * path, on an ancestor with depth infinity, or (when `lock.depth` is infinity) on
   * a descendant — where either lock is exclusive. Exact across processes: two
   * conflicting creations at once never both succeed (both may fail).
   *
   * With `maxLive`, also refused (tooMany) when the user would then hold more
   * live locks than that: inserted, then counted, as for conflicts, so two
   * creations at once never both pass the count (at worst both give way).
   */
  create(lock: DavLock, now: number, maxLive?: number): Promise<{ readonly created: true } | DavLockConflict | DavLockLimit>;
  /**
   * False only when `user` certainly holds no lock (not even an expired row), known without a query
   * while no lock changed (SQLite's stamp); true otherwise, when the other methods must be asked.
   */
  mayHold(user: string): Promise<boolean>;
  get(token: string, now: number): Promise<DavLock | undefined>;
  /** Live locks that apply to `path`: on it, or on an ancestor with depth infinity. */
  covering(user: string, path: string, now: number): Promise<DavLock[]>;
  /** Live locks on `path` or anywhere below it. */
  within(user: string, path: string, now: number): Promise<DavLock[]>;
  /** New timeout for a live lock; undefined when it is gone or expired. */
  refresh(token: string, timeoutSeconds: number, now: number): Promise<DavLock | undefined>;
  /** False when there was no such lock. */
  delete(token: string): Promise<boolean>;
  /** Removes every lock on `path` and below (after a DELETE or MOVE of it). */
  deleteWithin(user: string, path: string): Promise<number>;
  /** The locks `principal` holds in other users' trees (`owner`: in that one's only), expired ones too. */
  heldElsewhere(principal: string, owner?: string): Promise<DavLock[]>;
  deleteExpired(now: number): Promise<number>;
}
