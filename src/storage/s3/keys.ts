import { nameProblem } from '../../domain/names.js';
import type { StorageKey } from '../../domain/storage-path.js';

/**
 * The key layout (CONTRACT "Backends and nodes"): a user's file is the plain
 * object `PREFIX<user>/<path>`; a folder is every key below `PREFIX<user>/<path>/`,
 * and an empty one is kept by a zero-byte marker object with exactly that key.
 * Pure functions, so the layout is defined in one place.
 */
export const objectKey = (prefix: string, key: StorageKey): string => `${prefix}${key.user}/${key.segments.join('/')}`;

/** The prefix of everything inside a folder (and its marker's key): `PREFIX<user>/` for the root. */
export const folderPrefix = (prefix: string, key: StorageKey): string =>
  key.segments.length === 0 ? `${prefix}${key.user}/` : `${prefix}${key.user}/${key.segments.join('/')}/`;

/** The names of the folders that hold key, outermost first, as object keys of files that would block them. */
export const parentFileKeys = (prefix: string, key: StorageKey): string[] =>
  key.segments.slice(0, -1).map((_, i) => `${prefix}${key.user}/${key.segments.slice(0, i + 1).join('/')}`);

/**
 * The segments of a key below a folder prefix, or undefined when the key
 * cannot be a File Cloud path: other tools may write `a//b`, `x/../y` or
 * names with a backslash, and those are skipped in listings and never
 * reachable. A trailing `/` (a folder marker) gives `folder: true`.
 */
export function segmentsBelow(prefix: string, objectKeyString: string): { segments: string[]; folder: boolean } | undefined {
  if (!objectKeyString.startsWith(prefix)) return undefined;
  const rest = objectKeyString.slice(prefix.length);
  if (rest === '') return undefined;
  const folder = rest.endsWith('/');
  const segments = (folder ? rest.slice(0, -1) : rest).split('/');
  if (segments.some((s) => nameProblem(s) !== undefined)) return undefined;
  return { segments, folder };
}

/** CopySource names the source as `bucket/key` with the key URL-encoded, slashes kept. */
export const copySource = (bucket: string, key: string): string => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

/**
 * For a key that is no valid path (see segmentsBelow): the valid folders it
 * still implies before its first bad segment (`bad//x` → `bad`), so walk
 * agrees with list, which shows those folders (empty).
 */
export function validFoldersBelow(prefix: string, objectKeyString: string): string[] {
  if (!objectKeyString.startsWith(prefix)) return [];
  const parts = objectKeyString.slice(prefix.length).split('/');
  const out: string[] = [];
  for (let i = 0; i < parts.length - 1 && nameProblem(parts[i] as string) === undefined; i++) out.push(parts[i] as string);
  return out;
}

/**
 * The reserved key area of a resumable upload's staging: `PREFIX.file-cloud/tus/<id>/`.
 * No user name starts with a dot, so it is never inside a user's tree, and
 * listings, walks and moves (all below `PREFIX<user>/`) never see it.
 */
export const resumableRoot = (prefix: string): string => `${prefix}.file-cloud/tus/`;
export const resumableArea = (prefix: string, id: string): string => `${resumableRoot(prefix)}${id}/`;

/**
 * An owner's trashed item: `PREFIX.file-cloud/trash/<owner>/<id>/<name>`, in
 * the same reserved area as resumable staging, so no user's tree holds it.
 */
export const trashArea = (prefix: string, owner: string, id: string): string => `${prefix}.file-cloud/trash/${owner}/${id}/`;

/** A kept version of a file: `PREFIX.file-cloud/versions/<owner>/<id>`, a plain object. */
export const versionKey = (prefix: string, owner: string, id: string): string => `${prefix}.file-cloud/versions/${owner}/${id}`;

/** A staging segment is named by the offset it starts at, zero-padded so keys sort in offset order. */
export const resumableSegmentKey = (area: string, offset: number): string => `${area}${String(offset).padStart(16, '0')}`;

/** A record kept with an upload's staging for an offset (storage/resumable.ts putTail): never a segment name. */
export const resumableTailKey = (area: string, offset: number | ''): string => `${area}tail-${offset}`;

/** The start offset of a segment key in an area, or undefined for any other key. */
export function segmentOffset(area: string, key: string): number | undefined {
  if (!key.startsWith(area)) return undefined;
  const rest = key.slice(area.length);
  return /^\d{16}$/.test(rest) ? Number(rest) : undefined;
}
