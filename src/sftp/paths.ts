import { AppError } from '../domain/errors.js';
import { parseDecodedStoragePath, type StorageKey } from '../domain/storage-path.js';

/** The folder at the top of every SFTP tree that holds what others share with the user (as /dav/Shared with me/). */
export const SHARED_WITH_ME = 'Shared with me';

/**
 * Where an SFTP path leads: the user's own tree (`/` is its root), `Shared with me` itself, or a
 * received item (its name there) and the segments below it.
 */
export type SftpPlace =
  | { readonly kind: 'own'; readonly key: StorageKey }
  | { readonly kind: 'shared-top' }
  | { readonly kind: 'shared'; readonly entry: string; readonly rest: readonly string[] };

/**
 * The segments an SFTP path names, `.` and `..` resolved against `/` (a relative path starts at the
 * home, which is `/`; `..` at the top stays there, as on any file system). The tree is the user's
 * own: nothing lies above `/`, so resolving lexically cannot leave it.
 */
export function sftpSegments(raw: string): string[] {
  if (raw.includes('\0')) throw new AppError('invalid_path', 'The path contains a NUL character.');
  const out: string[] = [];
  for (const s of raw.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  return out;
}

/** The canonical absolute form of segments (`/a/b`, `/` for none): what realpath answers. */
export const sftpPath = (segments: readonly string[]): string => `/${segments.join('/')}`;

/**
 * Parses an SFTP path for `username`: each segment is checked as any storage path's is
 * (parseDecodedStoragePath), so the rules on names are the storage API's.
 */
export function sftpPlace(username: string, raw: string): SftpPlace {
  const segments = sftpSegments(raw);
  if (segments[0] === SHARED_WITH_ME) {
    if (segments.length === 1) return { kind: 'shared-top' };
    return { kind: 'shared', entry: segments[1] as string, rest: segments.slice(2) };
  }
  return { kind: 'own', key: parseDecodedStoragePath(`${username}/${segments.join('/')}`).key };
}

/** The key below a received item's root, checked like any storage path. */
export function keyBelow(root: StorageKey, rest: readonly string[]): StorageKey {
  const path = [root.user, ...root.segments, ...rest].join('/');
  return parseDecodedStoragePath(root.segments.length + rest.length === 0 ? `${path}/` : path).key;
}
