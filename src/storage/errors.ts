/**
 * The storage seam's one error type (src/storage/backend.ts).
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
  | 'aborted' // the caller's AbortSignal fired or the body stream failed
  | 'unavailable' // the storage service cannot be reached (connection refused, timeout)
  | 'failed'; // the storage service answered with an error of its own (an S3 5xx)

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

/** A move or copy with overwrite onto a folder that holds its source: removing the destination would take the source along. */
export const holdsSource = (): StorageError => new StorageError('already_exists', 'The destination holds the source and cannot be replaced by it.');
