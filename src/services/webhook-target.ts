import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../domain/errors.js';

/**
 * Addresses a webhook may not reach unless --webhooks-allow-private: loopback, link-local (the
 * cloud metadata service at 169.254.169.254), private, shared (CGNAT), unspecified, multicast and
 * reserved ranges, in both families (docs/security.md "Webhooks").
 */
const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64]] as const) BLOCKED.addSubnet(net, bits, 'ipv6');

/** An IPv6 address that carries an IPv4 one (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96): the IPv4 one. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const a = parseInt(hex[1]!, 16);
  const b = parseInt(hex[2]!, 16);
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}

/** True when `address` (an IP literal) is in a range a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const v4 = isIP(address) === 6 ? embeddedIpv4(address) : address;
  if (v4 !== undefined && isIP(v4) === 4) return BLOCKED.check(v4, 'ipv4');
  return BLOCKED.check(address, 'ipv6');
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
  if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
    throw new AppError('bad_request', `url points to a loopback, link-local or private address (${host}); start the server with --webhooks-allow-private to allow that.`);
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
    const bad = found.find((a) => isPrivateAddress(a.address));
    if (bad) throw new TargetRefused(`${host} resolves to ${bad.address}, a loopback, link-local or private address (--webhooks-allow-private allows it)`);
  }
  return found[0]!;
}
