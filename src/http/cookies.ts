/** Every value of cookie `name` in a Cookie header (a browser sends one per matching Path). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

/** The cookie proving a share link's password was given (set by src/routes/share-links.ts, read by the share authenticator). */
export const SHARE_COOKIE = 'fc_share';
