import type { Readable } from 'node:stream';
import type { StorageKey } from '../domain/storage-path.js';

/**
 * The storage seam: bytes and folders of every user, addressed only by
 * validated StorageKeys. Implementations: local disk (src/storage/local/),
 * later S3. Every implementation must pass src/storage/conformance.ts.
 *
 * Failures a caller can act on are StorageErrors with one of these codes;
 * anything else is an internal error.
 */
export type StorageErrorCode =
  | 'not_found' // the key (or, for writes, a needed parent) does not exist
  | 'already_exists' // the target is taken and the operation must not replace it
  | 'not_a_directory' // a folder was needed but a file is there (also: a file in the middle of the path)
  | 'is_a_directory' // a file was needed but a folder is there
  | 'into_itself' // a folder moved into itself or below itself
  | 'too_large' // the body exceeded maxBytes
  | 'no_space' // the disk or quota is full
  | 'invalid_path' // the key would leave the user's root (e.g. through a symbolic link)
  | 'aborted'; // the caller's AbortSignal fired or the body stream failed

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    opts: { cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StorageError';
  }
}

export const isStorageError = (e: unknown, code?: StorageErrorCode): e is StorageError =>
  e instanceof StorageError && (code === undefined || e.code === code);

export type Entry = {
  readonly name: string;
  readonly isFile: boolean;
  /** Bytes for a file; for a folder, the backend's own figure. */
  readonly size: number;
  readonly modified: Date;
  /** Strong validator of the file's current contents, quoted (`"…"`), for ETag. */
  readonly etag: string;
};

/** Inclusive byte range, already validated against the file's size. */
export type ByteRange = { readonly start: number; readonly end: number };

export type WriteOptions = {
  /**
   * What to do when the key is taken:
   * - `fail`: throw `already_exists`;
   * - `replace`: replace a file atomically (readers see the old or the new bytes, whole);
   *   a folder there still gives `is_a_directory`;
   * - `rename`: keep the existing entry and claim the first free `collisionName(name, n)`,
   *   race-free against concurrent writers.
   */
  readonly ifExists: 'fail' | 'replace' | 'rename';
  /** More bytes than this → `too_large`, and nothing is left behind. */
  readonly maxBytes?: number;
  readonly signal?: AbortSignal;
};

export interface StorageBackend {
  readonly capabilities: {
    /** `write` with `replace` is atomic for concurrent readers. */
    readonly atomicReplace: boolean;
    /** Folders are emulated (object stores) rather than real. */
    readonly emulatedDirs: boolean;
    /** `move` happens without copying bytes. */
    readonly serverSideMove: boolean;
  };

  /** Prepares the backend and removes staging left by a crash. Called once at startup. */
  init(): Promise<void>;

  /** The entry at key, or undefined when nothing is there. The root of a user is a folder. */
  stat(key: StorageKey): Promise<Entry | undefined>;

  /** The entries of a folder, unsorted. `not_found` / `not_a_directory`. */
  list(dir: StorageKey): Promise<Entry[]>;

  /**
   * Opens a file for reading. The entry describes exactly the bytes the stream
   * yields, even if the file is replaced meanwhile. `not_found` / `is_a_directory`.
   */
  read(key: StorageKey, range?: ByteRange): Promise<{ stream: Readable; entry: Entry }>;

  /**
   * Streams body into a file at key, creating missing parent folders. Bytes are
   * staged and committed only when complete: a failure, abort or limit leaves
   * neither a partial file nor staging garbage. Returns the entry written (its
   * name differs from the key's with `rename`).
   */
  write(key: StorageKey, body: Readable, opts: WriteOptions): Promise<Entry>;

  /**
   * Creates a folder. `parents` creates missing parents; `existOk` makes an
   * existing folder a success. A file in the way → `not_a_directory`
   * (or `already_exists` when it is at the key itself).
   */
  mkdir(dir: StorageKey, opts: { parents: boolean; existOk: boolean }): Promise<void>;

  /** Deletes a file, or a folder with everything in it when `recursive`. `not_found`. */
  delete(key: StorageKey, opts: { recursive: boolean }): Promise<void>;

  /**
   * Moves or renames a file or folder (same user; the service checks that).
   * Creates the destination's parents. Taken destination → `already_exists`
   * unless `overwrite`, which replaces it (a folder with all it holds).
   * `into_itself` when `to` is `from` or lies below it; `not_found` for a missing source.
   */
  move(from: StorageKey, to: StorageKey, opts: { overwrite: boolean }): Promise<void>;

  /** Releases resources (open handles, clients). */
  close(): Promise<void>;
}
