/**
 * The names the metadata store's index holds (the search index, kept from
 * storage events before each write is answered, on every node). On S3 it is
 * the authority on names for what File Cloud itself writes (CONTRACT
 * "Backends and nodes"): a write asks it whether a file is in the way of its
 * parents and what is at its name, instead of asking the bucket, and leaves
 * the last word on a file at the name to the store's conditional create.
 * Implemented by the store (`MetadataStore.search`); the storage layer sees
 * only this port.
 */
export type IndexedKind = 'file' | 'folder';

/** A file's time in the index (epoch ms) and the ETag of the version it was written with. */
export type IndexedTime = { readonly modified: number; readonly etag: string | null };

export interface NameIndex {
  /**
   * What the index holds at each of `paths` in `user`'s tree (`'a/b.txt'`, no
   * leading slash; the root is never held). A path it does not hold is absent.
   */
  kinds(user: string, paths: readonly string[]): Promise<ReadonlyMap<string, IndexedKind>>;

  /**
   * The time and ETag the index holds for each of `paths` of `user` (those it has): a listing of an
   * object store, which returns no object metadata, takes a client-set time from here.
   */
  times(user: string, paths: readonly string[]): Promise<ReadonlyMap<string, IndexedTime>>;
}
