/** What the storage seam says about a file or folder (src/storage/backend.ts). */

export type Entry = {
  readonly name: string;
  readonly isFile: boolean;
  /** Bytes for a file; for a folder, the backend's own figure. */
  readonly size: number;
  readonly modified: Date;
  /** Strong validator of the file's current contents, quoted (`"…"`), for ETag. */
  readonly etag: string;
  /** SHA-256 (hex) of a file's bytes, where the one who gives the entry knows it (a write's: src/storage/hashing.ts). */
  readonly sha256?: string;
};

/**
 * An entry as a folder listing shows it: everything but the validator,
 * which a listing never sends and which costs the local disk a BigInt stat
 * per entry. Listings that need it ask for `etags`.
 */
export type ListedEntry = Omit<Entry, 'etag'>;

/** An entry found by walk: `path` is its segments below the folder walked. */
export type WalkEntry = { readonly path: readonly string[]; readonly entry: Entry };
