/** A path of a URL from raw segments: each percent-encoded, so a name never changes the URL's structure. */
export function urlPath(base: string, segments: readonly string[], trailingSlash = false): string {
  const tail = segments.map((s) => encodeURIComponent(s)).join('/');
  return `${base}${tail === '' ? '' : `/${tail}`}${trailingSlash ? '/' : ''}`;
}
