/** An item in an owner's trash (src/services/trash.ts). `path` is where it was, below the owner ('a/b'). */
export type TrashItem = {
  readonly id: string;
  readonly owner: string;
  readonly path: string;
  readonly name: string;
  readonly isFile: boolean;
  readonly size: number;
  readonly deletedAt: number;
  /** A file's SHA-256 (hex) when the index held it for exactly the bytes that moved in; else undefined. */
  readonly sha256?: string | undefined;
  /** `moving`: written before the move into the trash, until it is known to be done. */
  readonly state: 'moving' | 'trashed';
};

/** A file inside a trashed folder whose SHA-256 was known for exactly the bytes that moved. */
export type TrashedFile = { readonly path: string; readonly sha256: string; readonly size: number };

export interface TrashRepo {
  add(item: TrashItem): Promise<void>;
  /** Marks a `moving` row trashed with the size and kind the move found (and the file's hash, when known). */
  settle(id: string, found: { isFile: boolean; size: number; sha256?: string | undefined }): Promise<void>;
  get(id: string): Promise<TrashItem | undefined>;
  /** The owner's trashed items, newest first. */
  list(owner: string): Promise<TrashItem[]>;
  /** Trashed items deleted before `before`, oldest first (purge by age). */
  trashedBefore(before: number, limit: number): Promise<TrashItem[]>;
  /** `moving` rows written before `before`: moves that may have died. */
  movingBefore(before: number, limit: number): Promise<TrashItem[]>;
  /** The owner's trashed items, oldest first (room for an upload). */
  oldest(owner: string, limit: number): Promise<TrashItem[]>;
  /** Records the hashes of files inside a trashed folder (`path` below it), before the item is settled. */
  addFiles(id: string, files: readonly TrashedFile[]): Promise<void>;
  /** Every distinct hash and size of a file the owner's trash holds (trashed files, and files of trashed folders) whose hash is known. */
  hashes(owner: string): Promise<{ sha256: string; size: number }[]>;
  /** Deletes the row (and its files' hashes); false when it was gone already (someone else took it). */
  delete(id: string): Promise<boolean>;
  /** Bytes of the owner's trashed items (not `moving` ones, whose size is not known yet): what they add to usage (a recount). */
  bytesOf(owner: string): Promise<number>;
  /** Deletes every row of the owner (the account was removed). */
  deleteOwner(owner: string): Promise<void>;
}
