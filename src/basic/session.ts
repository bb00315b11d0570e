import { createHmac } from 'node:crypto';
import { isValidUsername } from '../domain/names.js';
import { safeEqual } from '../lib/crypto.js';

/**
 * The cookie session and CSRF rules of the no-JavaScript UI (/basic/), as
 * pure functions. The cookie holds `<username>:<refresh token>`: the session
 * is an ordinary session row (src/services/auth.ts), found by the token's
 * hash, so it works on every node and dies with the user's other sessions.
 */
export const SESSION_COOKIE = 'fc_basic';
export const FLASH_COOKIE = 'fc_basic_msg';

export function sessionCookieValue(username: string, refreshToken: string): string {
  return `${username}:${refreshToken}`;
}

/** The user name and refresh token in a session cookie, or undefined when it cannot be one. */
export function parseSessionCookie(value: string | undefined): { username: string; refreshToken: string } | undefined {
  if (!value || value.length > 300) return undefined;
  const colon = value.indexOf(':');
  if (colon < 0) return undefined;
  const username = value.slice(0, colon);
  const refreshToken = value.slice(colon + 1);
  if (!isValidUsername(username) || !/^[A-Za-z0-9_-]+$/.test(refreshToken)) return undefined;
  return { username, refreshToken };
}

/**
 * The CSRF token of a session: an HMAC of its id with the server key, so it needs no storage, is the same
 * on every node, and is useless without the session cookie (and the cookie without it).
 */
export function csrfToken(secret: Buffer, sessionId: string): string {
  return createHmac('sha256', secret).update(`file-cloud basic csrf\0${sessionId}`).digest('base64url');
}

export function csrfValid(secret: Buffer, sessionId: string, token: unknown): boolean {
  return typeof token === 'string' && token.length > 0 && token.length <= 128 && safeEqual(token, csrfToken(secret, sessionId));
}

/** Why a form looks cross-site; the page says it in the reader's language. */
export type CrossSiteProblem = { readonly why: 'site'; readonly site: string } | { readonly why: 'origin_not_url' } | { readonly why: 'origin' };

/**
 * Why a state-changing request looks cross-site, or undefined. Browsers that send `Sec-Fetch-Site` or
 * `Origin` tell us where the form was; old and text browsers send neither, and then the token alone
 * decides. `allowedHosts` are the host[:port] values this server answers as (the Host header, the public
 * URL). Only host names are compared: a reverse proxy commonly passes `Host: $host` without the port the
 * browser used, and the CSRF token, not this check, is what binds a form to its session.
 */
export function crossSiteProblem(headers: { origin?: string | undefined; 'sec-fetch-site'?: string | undefined }, allowedHosts: readonly string[]): CrossSiteProblem | undefined {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return { why: 'site', site };
  const origin = headers.origin;
  // "null" is what a browser sends when it may not say (a no-referrer policy, a privacy setting):
  // no information, like an absent header; the token decides then.
  if (origin === undefined || origin === 'null') return undefined;
  const name = hostnameOf(origin);
  if (name === undefined) return { why: 'origin_not_url' };
  if (!allowedHosts.some((h) => h !== '' && hostnameOf(`http://${h}`) === name)) return { why: 'origin' };
  return undefined;
}

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}
