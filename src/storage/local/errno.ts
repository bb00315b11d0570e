import { StorageError, type StorageErrorCode } from '../backend.js';

/** The errno code (`ENOENT`, …) of a Node system error, if it is one. */
export function errnoOf(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('E') ? code : undefined;
}

// The one table from file-system failures to the seam's codes. Anything not
// listed (EACCES, EIO, EMFILE, …) is the server's fault, not the caller's:
// it passes through unchanged and becomes a 500 with the cause logged.
const ERRNO: Readonly<Record<string, StorageErrorCode>> = {
  ENOENT: 'not_found',
  EEXIST: 'already_exists',
  // POSIX lets rmdir/rename report a non-empty folder as either of these.
  ENOTEMPTY: 'already_exists',
  ENOTDIR: 'not_a_directory',
  EISDIR: 'is_a_directory',
  ENOSPC: 'no_space',
  EDQUOT: 'no_space',
  EFBIG: 'too_large',
  // A symbolic-link loop or a path the OS cannot hold can never lead to a
  // user's file: treat it as a path we refuse, not as a server failure.
  ELOOP: 'invalid_path',
  ENAMETOOLONG: 'invalid_path',
};

/**
 * Maps a file-system error to a StorageError (keeping it as the cause), or
 * returns it unchanged when it is not one a caller can act on. `what`
 * describes the operation for the message.
 */
export function fromErrno(e: unknown, what: string): unknown {
  if (e instanceof StorageError) return e;
  const errno = errnoOf(e);
  const code = errno === undefined ? undefined : ERRNO[errno];
  return code === undefined ? e : new StorageError(code, `${what}: ${errno}`, { cause: e });
}

/** Runs a file-system call, mapping its errors with fromErrno. */
export async function fsCall<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fromErrno(e, what);
  }
}
