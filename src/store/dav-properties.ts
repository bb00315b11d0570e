/** A dead property (RFC 4918 §4): namespace, local name, and the whole element serialized as XML. */
export type DeadProperty = { readonly ns: string; readonly name: string; readonly xml: string };

export type DeadPropertyChange = { readonly op: 'set'; readonly prop: DeadProperty } | { readonly op: 'remove'; readonly ns: string; readonly name: string };

/** What dead properties take: how many, and the characters of their stored XML. */
export type DeadPropertyTotals = { readonly count: number; readonly size: number };

/** WebDAV dead properties per resource (same `path` convention as DavLock). */
export interface DavPropertyRepo {
  /** The user's properties in all, or only those at or below `path`. */
  totals(user: string, path?: string): Promise<DeadPropertyTotals>;
  list(user: string, path: string): Promise<DeadProperty[]>;
  /** The properties of the direct members of collection `path` (for PROPFIND with Depth 1), each with its member's path. */
  listChildren(user: string, path: string): Promise<(DeadProperty & { readonly path: string })[]>;
  /**
   * Applies every change in order, all or nothing (PROPPATCH is atomic).
   * With `limit`: false, and nothing changed, when the user's totals would
   * then pass it and grow (a change that shrinks them is always allowed).
   * Checked in the change's transaction: exact on SQLite; on PostgreSQL two
   * patches at once may each miss the other, so a user can pass the limit by
   * at most what their concurrent requests add.
   */
  patch(user: string, path: string, changes: readonly DeadPropertyChange[], limit?: DeadPropertyTotals): Promise<boolean>;
  /** COPY: the properties of `from` and below, copied to the same relative paths under `to` (replacing theirs). */
  copyTree(user: string, from: string, to: string): Promise<void>;
  /** MOVE: the properties of `from` and below now belong to `to` (replacing theirs). */
  moveTree(user: string, from: string, to: string): Promise<void>;
  /** DELETE: the properties of `path` and below are gone. */
  deleteTree(user: string, path: string): Promise<void>;
}
