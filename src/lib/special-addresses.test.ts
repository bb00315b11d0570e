import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ipv6Groups, NOT_AN_ADDRESS, SPECIAL_RANGES, specialRange } from './special-addresses.js';

test('the table holds every range of the IANA registries that the webhook check must refuse or unwrap', () => {
  const cidrs = new Set(SPECIAL_RANGES.map((r) => r.cidr));
  for (const c of [
    '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16',
    '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4', '255.255.255.255/32',
    '::/128', '::1/128', '::/96', '::ffff:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/23', '2001:db8::/32', '2002::/16', 'fc00::/7', 'fe80::/10', 'ff00::/8',
  ]) assert.ok(cidrs.has(c), c);
  assert.deepEqual(SPECIAL_RANGES.filter((r) => r.embedsIpv4).map((r) => r.cidr), ['::ffff:0:0/96', '64:ff9b::/96']);
});

test('an address is named by the most specific range that holds it; IPv4 inside IPv6 by its IPv4 range', () => {
  const cases: [string, string | undefined][] = [
    ['169.254.169.254', '169.254.0.0/16'],
    ['0.0.0.0', '0.0.0.0/8'],
    ['::', '::/128'],
    ['::1', '::1/128'],
    ['::7f00:1', '::/96'],
    ['fe80::1', 'fe80::/10'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['ff02::1', 'ff00::/8'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/23'],
    ['2001:db8::1', '2001:db8::/32'],
    ['1::1', '::/3'],
    ['::ffff:0:7f00:1', '::/3'],
    ['::ffff:10.0.0.1', '10.0.0.0/8'],
    ['0:0:0:0:0:FFFF:A9FE:A9FE', '169.254.0.0/16'],
    ['64:ff9b::7f00:1', '127.0.0.0/8'],
    ['64:ff9b::192.168.1.1', '192.168.0.0/16'],
    ['64:ff9b:1::8.8.8.8', '64:ff9b:1::/48'],
    ['2002:808:808::1', '2002::/16'],
    ['::ffff:8.8.8.8', undefined],
    ['64:ff9b::8.8.8.8', undefined],
    ['8.8.8.8', undefined],
    ['2606:4700::1111', undefined],
  ];
  for (const [address, cidr] of cases) assert.equal(specialRange(address)?.cidr, cidr, address);
});

test('a string that is no IP address is refused, never passed as public', () => {
  for (const s of ['', 'localhost', '127.000.000.001', '0127.0.0.1', '1.2.3', '::ffff:1.2.3.04', ':::1', '[::1]']) assert.equal(specialRange(s), NOT_AN_ADDRESS, JSON.stringify(s));
});

test('no row is hidden by an earlier, wider one: the first address of a row is named by it or by a narrower row', () => {
  const bits = (cidr: string) => Number(cidr.split('/')[1]);
  for (const r of SPECIAL_RANGES.filter((x) => !x.embedsIpv4)) {
    const named = specialRange(r.cidr.split('/')[0]!);
    assert.ok(named && bits(named.cidr) >= bits(r.cidr), `${r.cidr} is named ${named?.cidr}`);
  }
});

test('IPv6 groups: compressed, expanded, leading zeros, mixed case and a dotted IPv4 tail', () => {
  const cases: [string, number[]][] = [
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['1::', [1, 0, 0, 0, 0, 0, 0, 0]],
    ['2001:DB8::8:800:200C:417A', [0x2001, 0xdb8, 0, 0, 0x8, 0x800, 0x200c, 0x417a]],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ['::ffff:1.2.3.4', [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]],
    ['64:ff9b::169.254.169.254', [0x64, 0xff9b, 0, 0, 0, 0, 0xa9fe, 0xa9fe]],
    ['1:2:3:4:5:6:7:8', [1, 2, 3, 4, 5, 6, 7, 8]],
  ];
  for (const [a, groups] of cases) assert.deepEqual(ipv6Groups(a), groups, a);
});
