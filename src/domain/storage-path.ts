import { AppError } from './errors.js';
import { isValidUsername, nameProblem } from './names.js';
import { sentence } from '../lib/i18n/sentences.js';

/**
 * A validated address of a file or folder in one user's storage. Only
 * parseStoragePath (and keyChild/keyParent below) make keys, so a backend can
 * trust every segment to be a valid name.
 */
export type StorageKey = {
  readonly user: string;
  readonly segments: readonly string[];
  /**
   * A key reached through a share link: how many leading segments name the shared folder. Below it,
   * symbolic links are followed only while their real target stays inside that folder (the shared
   * folder is the root of the visitor's access, as the user root is the owner's; docs/security.md
   * "Symbolic links"). Backends without links ignore it. Kept by keyChild and keyParent.
   */
  readonly within?: number;
};

export type ParsedStoragePath = {
  readonly key: StorageKey;
  /** The request path ended in `/` (the root always does). */
  readonly trailingSlash: boolean;
};

/** Longest accepted path below the user, in UTF-8 bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

/**
 * Turns the raw, still percent-encoded URL path below `/storage/` (no query
 * string) into a key. As CONTRACT.md says: the path is percent-decoded first,
 * then checked segment by segment, so `a%2Fb` addresses `a/b` and `..%2F`
 * yields a `..` segment (refused). Decoding is strict UTF-8: overlong forms
 * such as `%C0%AE` and malformed escapes are refused, never guessed at.
 *
 * Throws AppError: `not_found` for `<user>` without the trailing slash the
 * root requires; `invalid_path` for every other malformed path.
 */
export function parseStoragePath(rawBelowStorage: string): ParsedStoragePath {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawBelowStorage);
  } catch {
    throw new AppError('invalid_path', sentence('apiDetail.pathNotUtf8'));
  }
  return parseDecodedStoragePath(decoded);
}

/**
 * The same rules for a path that is already plain text, such as Move's
 * `new_path` in a JSON body (`<user>/<...path>`, no `/storage` prefix, no
 * percent-decoding: a `%` there is part of a name).
 */
export function parseDecodedStoragePath(decoded: string): ParsedStoragePath {
  const parts = decoded.split('/');
  const user = parts[0] ?? '';
  if (parts.length === 1) {
    // `/storage/<user>` without a slash: the root needs one (seed §2.5).
    throw new AppError('not_found', 'Nothing exists at this path; a storage root ends with "/".');
  }
  if (user === '' || user === '.' || user === '..' || user.includes('\0') || user.includes('\\')) {
    throw new AppError('invalid_path', sentence('apiDetail.pathBadUser'));
  }
  let rest = parts.slice(1);
  const trailingSlash = rest[rest.length - 1] === '';
  if (trailingSlash) rest = rest.slice(0, -1);
  if (Buffer.byteLength(rest.join('/'), 'utf8') > MAX_PATH_BYTES) {
    throw new AppError('invalid_path', sentence('apiDetail.pathTooLong', { max: MAX_PATH_BYTES }));
  }
  for (const segment of rest) {
    if (segment === '') throw new AppError('invalid_path', sentence('apiDetail.pathEmptySegment'));
    const problem = nameProblem(segment);
    if (problem) throw new AppError('invalid_path', sentence('apiDetail.pathInvalid', { problem }));
  }
  return { key: { user, segments: rest }, trailingSlash };
}

/** True when the user segment can name a user at all (else it is certainly nobody's). */
export function keyUserLooksValid(key: StorageKey): boolean {
  return isValidUsername(key.user);
}

/** `<user>/<seg>/<seg>`: the canonical form path tokens are bound to. */
export function keyId(key: StorageKey): string {
  return [key.user, ...key.segments].join('/');
}

export function keyName(key: StorageKey): string {
  return key.segments[key.segments.length - 1] ?? '';
}

export function isRoot(key: StorageKey): boolean {
  return key.segments.length === 0;
}

export function keyParent(key: StorageKey): StorageKey {
  return withinOf(key, { user: key.user, segments: key.segments.slice(0, -1) });
}

/**
 * The folders a key lies in, outermost first, the user root left out: the
 * names whose delete or move takes the key's entry along (their edit leases
 * are what a move holds against that, docs/storage.md "Usage and quotas").
 */
export function keyFolders(key: StorageKey): StorageKey[] {
  return key.segments.slice(0, -1).map((_, i) => withinOf(key, { user: key.user, segments: key.segments.slice(0, i + 1) }));
}

/** `next` with `key`'s share bound (StorageKey.within), when it has one. */
const withinOf = (key: StorageKey, next: StorageKey): StorageKey => (key.within === undefined ? next : { ...next, within: key.within });

/** A child key; `name` must already be a valid name (checked here again). */
export function keyChild(key: StorageKey, name: string): StorageKey {
  const problem = nameProblem(name);
  if (problem) throw new AppError('invalid_name', sentence('apiDetail.nameInvalid', { problem }));
  return withinOf(key, { user: key.user, segments: [...key.segments, name] });
}

/** `a` is `b` or lies below it. */
export function isSameOrInside(a: StorageKey, b: StorageKey): boolean {
  return a.user === b.user && b.segments.length <= a.segments.length && b.segments.every((s, i) => a.segments[i] === s);
}
