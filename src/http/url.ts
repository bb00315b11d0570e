/** The raw (still percent-encoded) path of a request URL, without the query string. */
export function rawPath(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export const STORAGE_PREFIX = '/storage/';

/**
 * The raw path below `<basePath>/storage/`, or undefined when the URL is not
 * under it. `basePath` is the --base-path prefix ("" or e.g. "/files").
 */
export function rawStoragePath(url: string, basePath = ''): string | undefined {
  const p = rawPath(url);
  const prefix = basePath + STORAGE_PREFIX;
  return p.startsWith(prefix) ? p.slice(prefix.length) : undefined;
}

/**
 * The URL with the value of every `token` query parameter replaced, and
 * share-link ids cut to their first 6 characters (enough to tell links apart
 * in the owner's list, far too few to open one), for logs.
 */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:token|csrf)=)[^&#]*/gi, '$1[redacted]').replace(/(\/(?:s|share|api\/shares)\/[A-Za-z0-9_-]{6})[A-Za-z0-9_-]{26}(?=[/?#]|$)/g, '$1[redacted]');
}
