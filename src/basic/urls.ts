/**
 * A URL path for an href or a form action: each segment percent-encoded, so a
 * name can neither end the path (`?`, `#`) nor start a scheme (`javascript:`
 * cannot appear: the result always starts with `prefix`, which is ours).
 */
export function pathUrl(prefix: string, segments: readonly string[], trailingSlash: boolean): string {
  const encoded = segments.map((s) => encodeURIComponent(s)).join('/');
  return prefix + encoded + (trailingSlash && segments.length > 0 ? '/' : '');
}
