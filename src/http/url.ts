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
  // Most URLs hold neither: looked for first, as the replacements below cost more even when they find nothing.
  if (!url.includes('?') && !url.includes('&') && !url.includes('/s/') && !url.includes('/share/') && !url.includes('/shares/')) return url;
  return url.replace(/([?&](?:token|csrf)=)[^&#]*/gi, '$1[redacted]').replace(/(\/(?:s|share|api\/shares)\/[A-Za-z0-9_-]{6})[A-Za-z0-9_-]{26}(?=[/?#]|$)/g, '$1[redacted]');
}

/**
 * URL prefixes of the machine interfaces (CONTRACT "Web UI"): an unknown path under them is a
 * 404 JSON (405 with Allow for a known path's missing method), never the web UI.
 */
export const API_PREFIXES = ['/auth', '/api', '/storage', '/share', '/tus', '/dav', '/s', '/basic', '/banner', '/metrics', '/is_file_cloud', '/assets'] as const;

/** Whether `path` (below the base path) is one of API_PREFIXES or under it. */
export const isApiPath = (path: string): boolean => API_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));

/**
 * The web UI's own pages (web/src/lib/router.ts): they answer 200; any other page path gets the
 * shell with 404, and the app shows its not-found view (CONTRACT "Web UI"). A new page of the app
 * is added here and in the app's router.
 */
const UI_PAGES: readonly RegExp[] = [/^\/$/, /^\/login$/, /^\/shared$/, /^\/trash$/, /^\/recent$/, /^\/with-me(\/.*)?$/, /^\/browse(\/.*)?$/, /^\/settings(\/.*)?$/, /^\/admin(\/.*)?$/];

/** Whether `path` (raw, below the base path) is one of the web UI's pages. */
export const isUiPage = (path: string): boolean => UI_PAGES.some((p) => p.test(path));

/** A matcher for a Fastify route pattern (`/api/keys/:id`, `/storage/*`) against a raw path. */
export function routePattern(url: string): RegExp {
  const re = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${re}$`);
}

/** `<id>` and the raw rest after `<id>/` (undefined when there is no slash) from a URL under `<base><prefix>` of a share link. */
export function splitShareUrl(url: string, prefix: string): { id: string; rest: string | undefined } {
  const p = rawPath(url).slice(prefix.length);
  const slash = p.indexOf('/');
  return slash === -1 ? { id: p, rest: undefined } : { id: p.slice(0, slash), rest: p.slice(slash + 1) };
}
