import { AppError } from '../domain/errors.js';
import { parseStoragePath, type StorageKey } from '../domain/storage-path.js';
import { rawPath } from '../http/url.js';

export const DAV_PREFIX = '/dav/';

/**
 * What a /dav/ URL addresses: the listing root `/dav/` (the caller's own
 * root is its only member) or an entry of a user's tree, the same tree as
 * /storage/<user>/ (CONTRACT "WebDAV").
 */
export type DavTarget = { readonly kind: 'top' } | { readonly kind: 'entry'; readonly key: StorageKey; readonly trailingSlash: boolean };

/**
 * The target of a raw (percent-encoded) path below `<base>/dav/`. WebDAV
 * clients often name a collection without its trailing slash, so
 * `/dav/alice` is alice's root as much as `/dav/alice/` is. Every other rule
 * (strict UTF-8, no `..`, no empty segment) is the storage path's.
 */
export function parseDavPath(rawBelowDav: string): DavTarget {
  if (rawBelowDav === '') return { kind: 'top' };
  const raw = rawBelowDav.includes('/') || rawBelowDav.includes('%2F') || rawBelowDav.includes('%2f') ? rawBelowDav : `${rawBelowDav}/`;
  const { key, trailingSlash } = parseStoragePath(raw);
  return { kind: 'entry', key, trailingSlash };
}

/** The raw path below `<basePath>/dav/`, or undefined when the URL is elsewhere; `<base>/dav` itself is the top. */
export function rawDavPath(url: string, basePath = ''): string | undefined {
  const p = rawPath(url);
  const prefix = basePath + DAV_PREFIX;
  if (p === prefix.slice(0, -1)) return '';
  return p.startsWith(prefix) ? p.slice(prefix.length) : undefined;
}

/**
 * The path of a Destination header (RFC 4918 §10.3: an absolute URI or, as
 * some clients send, an absolute path). The authority is not compared with
 * Host, since a reverse proxy may rewrite one and not the other; the path
 * must lie under this server's /dav/ and parses with the same rules as a
 * request path (so `..` and `%2e%2e` are refused, never resolved). The path
 * is taken verbatim, not through `new URL`, which would resolve dot segments.
 */
export function parseDestination(header: string | undefined, basePath = ''): DavTarget {
  if (header === undefined || header.trim() === '') throw new AppError('bad_request', 'COPY and MOVE need a Destination header.');
  const value = header.trim();
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)?(?:[?#].*)?$/i.exec(value);
  const path = m ? (m[1] ?? '/') : value.startsWith('/') ? value.replace(/[?#].*$/, '') : undefined;
  if (path === undefined) throw new AppError('bad_request', 'The Destination header must be an absolute URL or path.');
  const raw = rawDavPath(path, basePath);
  if (raw === undefined) throw new AppError('forbidden', `The Destination must lie inside ${basePath}${DAV_PREFIX} on this server.`);
  return parseDavPath(raw);
}

/** Percent-encodes one name for an href: spaces, `#`, `%`, `?` and non-ASCII as UTF-8 escapes. */
export const encodeSegment = (name: string): string => encodeURIComponent(name);

/** The href of an entry; collections end with `/`, as clients expect. */
export function hrefFor(basePath: string, key: StorageKey, isCollection: boolean): string {
  const path = [key.user, ...key.segments].map(encodeSegment).join('/');
  return `${basePath}${DAV_PREFIX}${path}${isCollection || key.segments.length === 0 ? '/' : ''}`;
}

/** `a/b` for a key's segments ('' for the root): the path convention of locks and dead properties. */
