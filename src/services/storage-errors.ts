import { AppError, isAppError, type ErrorCode } from '../domain/errors.js';
import { isStorageError, type StorageErrorCode } from '../storage/backend.js';
import { RETRY_AFTER_SECONDS } from '../lib/dependency-error.js';
import { sentence } from '../lib/i18n/sentences.js';

/* eslint-disable no-restricted-syntax -- not the wire: the keys are the storage seam's error codes. */
const MAP: Record<StorageErrorCode, [ErrorCode, string]> = {
  not_found: ['not_found', 'No file or folder exists at this path.'],
  already_exists: ['already_exists', 'Something already exists at this path.'],
  not_a_directory: ['not_a_directory', 'A file is in the way where a folder is needed.'],
  is_a_directory: ['is_a_directory', 'A folder is at this path, where a file is needed.'],
  into_itself: ['into_itself', 'A folder cannot be moved into itself.'],
  too_large: ['too_large', 'The upload is larger than this server accepts.'],
  no_space: ['disk_full', 'The server has no space left for this upload.'],
  invalid_path: ['invalid_path', sentence('apiDetail.pathOutside')],
  aborted: ['bad_request', sentence('apiDetail.uploadInterrupted')],
  unavailable: ['storage_unavailable', 'The storage service cannot be reached; try again shortly.'],
  failed: ['storage_failed', 'The storage service failed to carry out the request; try again shortly.'],
};
/* eslint-enable no-restricted-syntax */

/** Storage errors become the contract's errors in this one table; anything else passes through (→ 500). */
export function fromStorageError(e: unknown, messages: Partial<Record<StorageErrorCode, string>> = {}): unknown {
  if (!isStorageError(e)) return e;
  // A body stream that failed with our own error (the multipart adaptor's 400/413) keeps that error.
  if (e.code === 'aborted' && isAppError(e.cause)) return e.cause;
  const [code, message] = MAP[e.code];
  return new AppError(code, messages[e.code] ?? message, { cause: e, headers: e.code === 'unavailable' ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : undefined });
}

/** Runs a backend call, translating its storage errors. */
export async function storageCall<T>(fn: () => Promise<T>, messages?: Partial<Record<StorageErrorCode, string>>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fromStorageError(e, messages);
  }
}
