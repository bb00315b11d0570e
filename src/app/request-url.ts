/** The raw (still percent-encoded) path of a request URL, without the query string. */
export function rawPath(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export const STORAGE_PREFIX = '/storage/';

/** The raw path below `/storage/`, or undefined when the URL is not under it. */
export function rawStoragePath(url: string): string | undefined {
  const p = rawPath(url);
  return p.startsWith(STORAGE_PREFIX) ? p.slice(STORAGE_PREFIX.length) : undefined;
}

/** The URL with the value of every `token` query parameter replaced, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}
