/**
 * The one cookie codec of every front end (the /basic/ session and flash cookies, the share
 * link's password cookie): how a Cookie header is read and a Set-Cookie value is written.
 */

/** The name=value pairs of a Cookie header in order, values unquoted (RFC 6265 §4.1.1). */
function* pairs(header: string | undefined): Generator<[string, string]> {
  if (!header) return;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name) yield [name, value];
  }
}

/** Every value of cookie `name` in a Cookie header (a browser sends one per matching Path). */
export function cookieValues(header: string | undefined, name: string): string[] {
  const out: string[] = [];
  for (const [n, v] of pairs(header)) if (n === name) out.push(v);
  return out;
}

/** The cookies of a request, first value of each name (RFC 6265 §5.4 order: the most specific path first). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const [n, v] of pairs(header)) if (!out.has(n)) out.set(n, v);
  return out;
}

/**
 * A Set-Cookie value. HttpOnly always (no script may read it), SameSite=Lax (a cross-site POST
 * carries no cookie), Path scoped to the front end that reads it, Secure when served over https.
 * Without maxAge it lasts for the browser session; the server-side expiry decides anyway.
 */
export function setCookie(name: string, value: string, opts: { path: string; secure: boolean; maxAge?: number }): string {
  const parts = [`${name}=${value}`, `Path=${opts.path}`, 'HttpOnly', 'SameSite=Lax'];
  if (opts.maxAge !== undefined) parts.push(`Max-Age=${opts.maxAge}`);
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}

export function clearCookie(name: string, opts: { path: string; secure: boolean }): string {
  return setCookie(name, '', { ...opts, maxAge: 0 });
}

/** The cookie proving a share link's password was given (set by src/routes/share-links.ts, read by the share authenticator). */
export const SHARE_COOKIE = 'fc_share';
