/**
 * Where the app is served. The server tells the shell through meta tags:
 * `file-cloud-base` is the --base-path prefix ("" or e.g. "/files"), and
 * `file-cloud-public-url` the external address of that prefix when the
 * operator set --public-url (share links use it). App paths (`/login`,
 * `/browse/…`) are written without the prefix; these helpers add or strip it.
 */
function meta(name: string): string {
  return document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
}

export const BASE = meta('file-cloud-base').replace(/\/+$/, '');

/** The base path plus an app or API path: `/auth/login` → `/files/auth/login`. */
export const withBase = (path: string): string => `${BASE}${path}`;

/** The app path of a browser pathname: `/files/browse/a/` → `/browse/a/`. */
export function stripBase(pathname: string): string {
  if (!BASE) return pathname;
  if (pathname === BASE) return '/';
  return pathname.startsWith(`${BASE}/`) ? pathname.slice(BASE.length) : pathname;
}

/** Absolute URL of a server path (already including the base), for links shared outside the app. */
export function publicUrlOf(pathWithBase: string): string {
  const pub = meta('file-cloud-public-url').replace(/\/+$/, '');
  return pub ? `${pub}${pathWithBase.slice(BASE.length)}` : `${location.origin}${pathWithBase}`;
}
