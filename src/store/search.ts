import type { NameIndex } from '../storage/name-index.js';

/**
 * One file or folder in the search index (CONTRACT "Search, thumbnails,
 * usage"). `path` is its path in `user`'s tree ('a/b.txt'; never '', the root
 * is not indexed); `modified` is epoch ms.
 */
export type IndexedEntry = {
  readonly user: string;
  readonly path: string;
  readonly isFile: boolean;
  readonly size: number;
  readonly modified: number;
  /** The backend's ETag, when the writer knows it (the change journal carries it). */
  readonly etag?: string | undefined;
  /**
   * Storage reported the write as a creation (nothing was at the name): journaled as created
   * without reading what the index held there (an entry of a file other tools removed, not swept yet).
   */
  readonly created?: boolean;
  /**
   * Found by a rescan's walk of storage, not reported by a write (the journal's rule:
   * src/store/index-change.ts). A sighting can be older than a write made after the walk passed the
   * path: it does not overwrite a row written since the rescan's mark, nor bring back a path a
   * writer deleted or moved away since the rescan began (the journal says so after `since`).
   */
  readonly walked?: RescanMark;
  /**
   * SHA-256 (hex) of the file's bytes when the writer knows it. Absent: the row keeps the hash it
   * has while its ETag is the same (the same bytes), else it has none (docs/sync.md).
   */
  readonly sha256?: string | undefined;
  /** The File-Cloud-Origin of the request that made the change, for its journal entry. */
  readonly origin?: string | undefined;
};

/** A running rescan: its mark (markAll) and the journal's latest cursor just before it marked. */
export type RescanMark = { readonly scan: string; readonly since: number };

/** What the index knows of an entry for sync: its stable id, a file's SHA-256 (null until known), its ETag then. */
export type EntryIdentity = { readonly id: string | null; readonly isFile: boolean; readonly size: number; readonly modified: number; readonly sha256: string | null; readonly etag: string | null };

export type SearchQuery = {
  readonly user: string;
  /** The query normalized (src/domain/search-text.ts normalizeName); not empty. */
  readonly text: string;
  /** Only entries strictly below this folder ('' = the user's whole tree). */
  readonly within: string;
  readonly type: 'file' | 'folder' | undefined;
  readonly limit: number;
};

/**
 * `tree`: a batch of a walk over a whole tree (a rescan's, a copied folder's), not an upload's
 * entries. On SQLite it is written on the main connection instead of the index writer's thread
 * (store/sqlite-writer.ts): a walk waits for nobody's answer, and its large batches would only
 * grow the thread's heap (docs/performance.md, "The upload's transaction in a thread").
 */
export type PutOptions = { readonly tree?: boolean };

/**
 * The search index of names, shared by every node. Names match by substring
 * of their normalized form; results come best first: exact name, prefix,
 * substring, then shallower paths, then by normalized name and path.
 * Prefix conditions are path ranges, never LIKE (a name may hold % or _).
 */
export interface SearchRepo extends NameIndex {
  /**
   * Inserts or updates entries by (user, path); each one written counts as seen by a running rescan.
   * Resolves to the identities written, by `${user}\0${path}` (an entry a rescan's stale sighting
   * skipped is not among them).
   */
  put(entries: readonly IndexedEntry[], opts?: PutOptions): Promise<ReadonlyMap<string, EntryIdentity>>;
  /**
   * Removes `path` and everything below it ('' removes all of `user`'s entries); returns how many went.
   * `isFile`: storage deleted it (an event), so the journal says so even if the index never had it.
   */
  deleteWithin(user: string, path: string, isFile?: boolean, origin?: string): Promise<number>;
  /** The id, hash and ETag the index holds for each of `paths` of `user` (those it has). */
  identities(user: string, paths: readonly string[]): Promise<Map<string, EntryIdentity>>;
  /** The hash, size and ETag of every file below folder `path` whose hash the index holds, by its path below it ('x/y.txt'). */
  hashesBelow(user: string, path: string): Promise<Map<string, { readonly sha256: string; readonly size: number; readonly etag: string | null }>>;
  /**
   * `from` and everything below it move to `to`; what was at `to` and below goes first. Returns how many moved.
   * `current` is the moved entry as storage has it now (an object store's copy has a new time): its row takes it.
   */
  moveWithin(user: string, from: string, to: string, current?: IndexedEntry, origin?: string): Promise<number>;
  /** At most `limit` entries, best first; `truncated` when more match. */
  search(q: SearchQuery): Promise<{ entries: IndexedEntry[]; truncated: boolean }>;
  /** Rescan start: marks all of `user`'s entries with `scan`; put() clears the mark. */
  markAll(user: string, scan: string): Promise<void>;
  /** A rescan's mark taken off `user`'s entries at and below `paths` ('' for all): its walk left them to a change in progress, and its sweep keeps them. */
  unmarkWithin(user: string, paths: readonly string[], scan: string): Promise<void>;
  /** Rescan end: removes `user`'s entries still marked with `scan` (neither seen by the walk nor written since). */
  sweepMarked(user: string, scan: string): Promise<number>;
  /** Every user name that has entries. */
  users(): Promise<string[]>;
  /**
   * Runs a pass over every entry (a rescan) with the database's own caches at their smallest: such a
   * pass writes every row once, and a cache would fill with pages read once (SQLite: its page cache).
   */
  sweeping<T>(run: () => Promise<T>): Promise<T>;
}
