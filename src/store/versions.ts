/** An earlier content of a file (src/services/versions.ts). `path` is the file's, below the owner ('a/b'). */
export type FileVersion = { readonly id: string; readonly owner: string; readonly path: string; readonly size: number; readonly createdAt: number };

export interface VersionRepo {
  add(v: FileVersion): Promise<void>;
  get(id: string): Promise<FileVersion | undefined>;
  /** The versions of one file, newest first. */
  list(owner: string, path: string): Promise<FileVersion[]>;
  /** The owner's versions, oldest first (room for an upload). */
  oldest(owner: string, limit: number): Promise<FileVersion[]>;
  /** Deletes the row; false when it was gone already. */
  delete(id: string): Promise<boolean>;
  /** Bytes of all the owner's versions: what they add to the owner's usage (a recount). */
  bytesOf(owner: string): Promise<number>;
  /** Deletes every row of the owner (the account was removed). */
  deleteOwner(owner: string): Promise<void>;
  /** The owner's versions of files at or below `path` (a deleted file or folder). */
  listWithin(owner: string, path: string): Promise<FileVersion[]>;
  /** Carries the owner's versions at or below `from` over to `to` (a file or folder renamed or moved). */
  moveWithin(owner: string, from: string, to: string): Promise<void>;
}
