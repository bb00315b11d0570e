/**
 * One entry of the change journal (migration 0018). Every write of the search index that changes
 * what a tree holds appends one in the same transaction (src/store/search-repo.ts), so the journal
 * and the index never disagree. Paths are in the owner's tree, without a leading slash.
 */
export type ChangeRecord = {
  readonly cursor: number;
  readonly owner: string;
  readonly type: 'created' | 'modified' | 'deleted' | 'moved';
  readonly path: string;
  readonly from?: string | undefined;
  readonly isFile: boolean;
  readonly size?: number | undefined;
  readonly modified?: number | undefined;
  readonly etag?: string | undefined;
  readonly at: number;
  /** 0026_sync_fields: the item's stable id, a file's SHA-256, the writer's File-Cloud-Origin. */
  readonly id?: string | undefined;
  readonly sha256?: string | undefined;
  readonly origin?: string | undefined;
};

export interface ChangeRepo {
  /** The highest cursor written (or purged): what `cursor=now` answers. */
  latest(): Promise<number>;
  /** The highest cursor purged by retention; a cursor below it has lost entries. */
  horizon(): Promise<number>;
  /** Entries after `cursor` (up to and including `upTo`), oldest first, every owner's: for consumers that are not a user (webhooks). */
  changesSince(cursor: number, limit: number, upTo?: number): Promise<ChangeRecord[]>;
  /** As changesSince, only entries of the given owners' trees. */
  changesSinceFor(owners: readonly string[], cursor: number, limit: number, upTo?: number): Promise<ChangeRecord[]>;
  /** Entries of the given owners' trees before `cursor` (all: undefined), newest first, none at or below the horizon. */
  changesBeforeFor(owners: readonly string[], cursor: number | undefined, limit: number): Promise<ChangeRecord[]>;
  /** The owners of the trees that entries after `cursor`, up to and including `upTo`, changed (each once). */
  ownersBetween(cursor: number, upTo: number): Promise<string[]>;
  /**
   * Of the given folders of `owner` ('' = the root), the cursor of the latest entry at or below each (none:
   * not indexed yet). Folder ETags derive from it.
   */
  treeCursors(owner: string, paths: readonly string[]): Promise<Map<string, number>>;
  /** Removes entries written before `time` (ms); returns how many went. */
  purgeBefore(time: number): Promise<number>;
}
