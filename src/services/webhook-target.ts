import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AppError } from '../domain/errors.js';
import { describeRange, specialRange } from '../lib/special-addresses.js';

/**
 * True when `address` (an IP literal) is one a webhook may not reach unless --webhooks-allow-private:
 * any special-purpose range (src/lib/special-addresses.ts; docs/security.md "Webhooks").
 */
export function isPrivateAddress(address: string): boolean {
  return specialRange(address) !== undefined;
}

/** The host of a URL without IPv6 brackets. */
const bareHost = (u: URL) => u.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Checks a target URL as the admin gives it: http or https only, no credentials in it, and (unless
 * private targets are allowed) no IP literal in a blocked range. A host name is checked at each
 * delivery, on the address it then resolves to.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('bad_request', 'url must be an absolute http:// or https:// URL.');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AppError('bad_request', 'url must use http or https.');
  if (u.username || u.password) throw new AppError('bad_request', 'url must not carry a user name or password.');
  if (raw.length > 2048) throw new AppError('bad_request', 'url is too long (2048 characters at most).');
  const host = bareHost(u);
  const special = allowPrivate || isIP(host) === 0 ? undefined : specialRange(host);
  if (special) {
    throw new AppError('bad_request', `url points to ${host} (${describeRange(special)}), not a public address; start the server with --webhooks-allow-private to allow private targets.`);
  }
  return u;
}

export class TargetRefused extends Error {}

/**
 * Resolves the target's host once for one delivery and picks the address to connect to. The
 * connection is then made to exactly that address (webhook-http.ts pins it), so a DNS answer that
 * changes between this check and the connection (rebinding) cannot redirect it. Every address the
 * name has must be allowed: a name with one public and one private address is refused.
 */
export async function resolveTarget(u: URL, allowPrivate: boolean): Promise<{ address: string; family: 4 | 6 }> {
  const host = bareHost(u);
  const found = isIP(host) !== 0 ? [{ address: host, family: isIP(host) as 4 | 6 }] : ((await lookup(host, { all: true, verbatim: true })) as { address: string; family: 4 | 6 }[]);
  if (found.length === 0) throw new TargetRefused(`${host} does not resolve`);
  if (!allowPrivate) {
    for (const a of found) {
      const special = specialRange(a.address);
      if (special) throw new TargetRefused(`${host} resolves to ${a.address} (${describeRange(special)}), not a public address (--webhooks-allow-private allows private targets)`);
    }
  }
  return found[0]!;
}
