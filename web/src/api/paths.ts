import { withBase } from '../lib/base';
import { t } from '../lib/i18n';

/**
 * Paths inside a user's storage are arrays of decoded segments; URLs are
 * built by percent-encoding each segment on its own, so names with `/`-free
 * oddities (`#`, `?`, `%`, spaces, unicode) survive the trip.
 */
export type Segments = readonly string[];

export const encodeSegments = (segments: Segments): string => segments.map(encodeURIComponent).join('/');

/** `<base>/storage/<user>/<path>` for a file, with a trailing slash for a folder (the root always has one). */
export function storageUrl(user: string, segments: Segments, folder: boolean): string {
  const path = encodeSegments(segments);
  if (segments.length === 0) return withBase(`/storage/${encodeURIComponent(user)}/`);
  return withBase(`/storage/${encodeURIComponent(user)}/${path}${folder ? '/' : ''}`);
}

/** The `new_path` of a Move: `/<user>/<path>` (no /storage prefix), decoded. */
export const movePath = (user: string, segments: Segments): string => `/${[user, ...segments].join('/')}`;

/** The web UI's own address of a folder: `/browse/<encoded path>/`. */
export function browseUrl(segments: Segments): string {
  return segments.length === 0 ? '/browse/' : `/browse/${encodeSegments(segments)}/`;
}

/** Segments from a `/browse/...` pathname, or undefined when it is not one. */
export function segmentsFromBrowsePath(pathname: string): string[] | undefined {
  if (pathname === '/browse' || pathname === '/browse/') return [];
  if (!pathname.startsWith('/browse/')) return undefined;
  const parts = pathname.slice('/browse/'.length).split('/').filter((s) => s !== '');
  try {
    return parts.map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
}

export const join = (segments: Segments, name: string): string[] => [...segments, name];

export const sameSegments = (a: Segments, b: Segments): boolean => a.length === b.length && a.every((s, i) => s === b[i]);

/** True when `inner` is `outer` or lies inside it. */
export const isInside = (inner: Segments, outer: Segments): boolean => inner.length >= outer.length && outer.every((s, i) => s === inner[i]);

/** A name the server will accept as one path segment (CONTRACT "Storage paths"). */
export function nameProblem(name: string): string | undefined {
  if (name.trim() === '') return t('name.missing');
  if (name === '.' || name === '..') return t('name.dots');
  if (name.includes('/')) return t('name.contains', { char: '/' });
  if (name.includes('\\')) return t('name.contains', { char: '\\' });
  if (name.includes('\0')) return t('name.nul');
  if (new TextEncoder().encode(name).length > 255) return t('name.tooLong');
  return undefined;
}
