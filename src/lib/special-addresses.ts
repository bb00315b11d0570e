import { BlockList, isIP } from 'node:net';

/** A range of addresses that is not an ordinary public host: what it is for and where that is defined. */
export type SpecialRange = {
  readonly cidr: string;
  readonly name: string;
  readonly source: string;
  /** IPv6 that carries an IPv4 address in its last 32 bits: that address is judged instead. */
  readonly embedsIpv4?: true;
};

type Row = SpecialRange & { readonly family: 'ipv4' | 'ipv6'; readonly list: BlockList };

const NO_UNICAST = 'outside 2000::/3, the only IPv6 block allocated for global unicast';

/**
 * The one table of special-purpose addresses: every entry of the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (the globally reachable ones too: no service we would call lives there),
 * multicast, the deprecated IPv4-compatible and site-local IPv6 ranges, and all IPv6 outside
 * 2000::/3. The first row that holds an address names it, so specific rows come before the wide
 * ones that hold them. The IPv4-mapped and the well-known NAT64 prefix reach the IPv4 address they
 * carry (a public one is public); the local-use NAT64 prefix and 6to4 are refused whole, because
 * where they lead depends on a translator or relay we cannot see.
 */
const TABLE: readonly SpecialRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network"', source: 'RFC 791' },
  { cidr: '10.0.0.0/8', name: 'private use', source: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)', source: 'RFC 6598' },
  { cidr: '127.0.0.0/8', name: 'loopback', source: 'RFC 1122' },
  { cidr: '169.254.0.0/16', name: 'link-local (cloud metadata services)', source: 'RFC 3927' },
  { cidr: '172.16.0.0/12', name: 'private use', source: 'RFC 1918' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments', source: 'RFC 6890' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', source: 'RFC 5737' },
  { cidr: '192.31.196.0/24', name: 'AS112-v4', source: 'RFC 7535' },
  { cidr: '192.52.193.0/24', name: 'AMT', source: 'RFC 7450' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (deprecated)', source: 'RFC 7526' },
  { cidr: '192.168.0.0/16', name: 'private use', source: 'RFC 1918' },
  { cidr: '192.175.48.0/24', name: 'AS112 direct delegation', source: 'RFC 7534' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', source: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', source: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', source: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'multicast', source: 'RFC 5771' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast', source: 'RFC 919' },
  { cidr: '240.0.0.0/4', name: 'reserved', source: 'RFC 1112' },

  { cidr: '::/128', name: 'unspecified', source: 'RFC 4291' },
  { cidr: '::1/128', name: 'loopback', source: 'RFC 4291' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', source: 'RFC 4291' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped', source: 'RFC 4291', embedsIpv4: true },
  { cidr: '64:ff9b::/96', name: 'IPv4/IPv6 translation (NAT64)', source: 'RFC 6052', embedsIpv4: true },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation', source: 'RFC 8215' },
  { cidr: '100::/64', name: 'discard-only', source: 'RFC 6666' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (Teredo: 2001::/32)', source: 'RFC 2928, RFC 4380' },
  { cidr: '2001:db8::/32', name: 'documentation', source: 'RFC 3849' },
  { cidr: '2002::/16', name: '6to4', source: 'RFC 3056' },
  { cidr: '2620:4f:8000::/48', name: 'AS112 direct delegation', source: 'RFC 7534' },
  { cidr: '3fff::/20', name: 'documentation', source: 'RFC 9637' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs', source: 'RFC 9602' },
  { cidr: 'fc00::/7', name: 'unique local', source: 'RFC 4193' },
  { cidr: 'fe80::/10', name: 'link-local', source: 'RFC 4291' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)', source: 'RFC 3879' },
  { cidr: 'ff00::/8', name: 'multicast', source: 'RFC 4291' },
  { cidr: '::/3', name: NO_UNICAST, source: 'IANA IPv6 Address Space' },
  { cidr: '4000::/2', name: NO_UNICAST, source: 'IANA IPv6 Address Space' },
  { cidr: '8000::/1', name: NO_UNICAST, source: 'IANA IPv6 Address Space' },
];

/** What a string that is no IP address is taken for: refused, so a caller cannot fail open. */
export const NOT_AN_ADDRESS: SpecialRange = { cidr: '', name: 'not an IP address', source: '' };

// One BlockList per row, each asked only about addresses of its own family: BlockList also matches
// an IPv4 address against IPv6 rules through its mapped form (::/3 would hold every IPv4 address).
const ROWS: readonly Row[] = TABLE.map((r) => {
  const [prefix, bits] = r.cidr.split('/') as [string, string];
  const family = isIP(prefix) === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(prefix, Number(bits), family);
  return { ...r, family, list };
});

/** The table (for documentation and tests). */
export const SPECIAL_RANGES: readonly SpecialRange[] = TABLE;

/**
 * The range that holds `address` (an IP literal as a resolver gives it, IPv6 possibly with a
 * `%zone`), or undefined for an ordinary public address; a string that is no IP address gives
 * NOT_AN_ADDRESS.
 */
export function specialRange(address: string): SpecialRange | undefined {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return NOT_AN_ADDRESS;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const row = ROWS.find((r) => r.family === type && r.list.check(bare, type));
  if (!row?.embedsIpv4) return row;
  const groups = ipv6Groups(bare);
  return specialRange([groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join('.'));
}

/** The eight 16-bit groups of a valid IPv6 address without zone (`::` expanded, a dotted IPv4 tail as two groups). */
export function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const before = head ? head.split(':') : [];
  const after = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - before.length - after.length }, () => '0');
  return [...before, ...zeros, ...after].map((g) => parseInt(g, 16));
}

/** "127.0.0.0/8, loopback" for a message; "not an IP address" for a string that is none. */
export function describeRange(r: SpecialRange): string {
  return r === NOT_AN_ADDRESS ? r.name : `${r.cidr}, ${r.name}`;
}
