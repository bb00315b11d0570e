import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookUrl, isPrivateAddress, resolveTarget, TargetRefused } from './webhook-target.js';
import { postWebhook } from './webhook-http.js';

/**
 * Addresses a webhook may not reach, by the range that holds them (the IANA IPv4 and IPv6
 * Special-Purpose Address Registries, multicast, and IPv6 outside 2000::/3), each in several
 * spellings: compressed, expanded, with leading zeros, mixed case, IPv4 dotted inside IPv6.
 */
const REFUSED: readonly (readonly [range: string, spellings: readonly string[]])[] = [
  ['0.0.0.0/8', ['0.0.0.0', '0.1.2.3']],
  ['10.0.0.0/8', ['10.0.0.1', '10.255.255.255']],
  ['100.64.0.0/10', ['100.64.0.1', '100.127.255.254']],
  ['127.0.0.0/8', ['127.0.0.1', '127.255.0.9']],
  ['169.254.0.0/16', ['169.254.169.254', '169.254.0.1']],
  ['172.16.0.0/12', ['172.16.0.1', '172.31.255.255']],
  ['192.0.0.0/24', ['192.0.0.1', '192.0.0.170']],
  ['192.0.2.0/24', ['192.0.2.1']],
  ['192.88.99.0/24', ['192.88.99.1', '192.88.99.255']],
  ['192.168.0.0/16', ['192.168.1.1']],
  ['198.18.0.0/15', ['198.18.0.1', '198.19.255.255']],
  ['198.51.100.0/24', ['198.51.100.7']],
  ['203.0.113.0/24', ['203.0.113.7']],
  ['224.0.0.0/4', ['224.0.0.1', '239.255.255.250']],
  ['240.0.0.0/4', ['240.0.0.1', '255.255.255.254']],
  ['255.255.255.255/32', ['255.255.255.255']],
  ['::/128', ['::', '0:0:0:0:0:0:0:0', '0000:0000:0000:0000:0000:0000:0000:0000']],
  ['::1/128', ['::1', '0:0:0:0:0:0:0:1', '0000:0000:0000:0000:0000:0000:0000:0001', '::0001']],
  ['::/96 (IPv4-compatible)', ['::127.0.0.1', '::7f00:1', '::10.0.0.1', '::8.8.8.8', '::0808:0808', '0:0:0:0:0:0:a00:1', '0000:0000:0000:0000:0000:0000:0A00:0001']],
  ['::ffff:0:0/96 (IPv4-mapped) of a refused IPv4', ['::ffff:127.0.0.1', '::FFFF:7F00:1', '::ffff:7f00:0001', '0:0:0:0:0:ffff:7f00:1', '0000:0000:0000:0000:0000:FFFF:A9FE:A9FE', '0:0:0:0:0:ffff:169.254.169.254', '::ffff:0:0', '::ffff:10.0.0.1', '::ffff:192.88.99.1', '::ffff:7f00:1%lo']],
  ['64:ff9b::/96 (NAT64) of a refused IPv4', ['64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '64:FF9B:0:0:0:0:7F00:1', '0064:ff9b:0000:0000:0000:0000:0a00:0001', '64:ff9b::192.168.0.1']],
  ['64:ff9b:1::/48 (local-use NAT64)', ['64:ff9b:1::8.8.8.8', '64:ff9b:1::808:808', '64:ff9b:1::a00:1', '64:FF9B:0001::1', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff']],
  ['100::/64 (discard-only)', ['100::1', '100:0:0:0:ffff::1']],
  ['2001::/23 (IETF protocol assignments, Teredo 2001::/32)', ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0000:4136:E378:8000:63BF:3FFF:FDD2', '2001:2::1', '2001:1ff:ffff::1']],
  ['2001:db8::/32 (documentation)', ['2001:db8::1', '2001:DB8:0:0:0:0:0:1']],
  ['2002::/16 (6to4)', ['2002::1', '2002:7f00:1::1', '2002:c0a8:0101::1', '2002:0808:0808::1', '2002:FFFF:FFFF::']],
  ['fc00::/7 (unique local)', ['fc00::1', 'fd12:3456::1', 'FDFF:FFFF::1']],
  ['fe80::/10 (link-local)', ['fe80::1', 'FEBF::1', 'fe80::1%eth0', 'fe80:0000:0000:0000:0000:0000:0000:0001']],
  ['fec0::/10 (site-local)', ['fec0::1']],
  ['ff00::/8 (multicast)', ['ff02::1', 'FF05::1:3']],
  ['outside 2000::/3 (no global unicast)', ['1::1', '4000::1', 'e000::1', '::ffff:0:7f00:1', '::1:0:0:1']],
  ['not an IP address at all (fail closed)', ['127.000.000.001', '0127.0.0.1', 'localhost', '', '::ffff:1.2.3.04']],
];

/** Public addresses, also near the edges of refused ranges and wrapped in IPv4-mapped or NAT64 form. */
const ALLOWED: readonly string[] = [
  '8.8.8.8', '93.184.216.34', '1.1.1.1', '172.32.0.1', '172.15.255.255', '192.169.0.1', '100.128.0.1', '100.63.255.255', '198.20.0.1', '192.0.3.1', '192.88.98.255', '223.255.255.255', '1.0.0.0',
  '2606:4700::1111', '2001:4860:4860::8888', '2A00:1450:4001:0829::200E', '2001:200::1', '2001:db9::1', '2003::1', '2001:0db7:ffff::1',
  '::ffff:8.8.8.8', '::FFFF:808:808', '0:0:0:0:0:ffff:0808:0808', '64:ff9b::8.8.8.8', '64:FF9B::808:808', '0064:ff9b:0000:0000:0000:0000:0808:0808',
];

for (const [range, spellings] of REFUSED) {
  test(`refused: ${range}`, () => {
    for (const a of spellings) assert.equal(isPrivateAddress(a), true, a);
  });
}

test('public addresses are allowed, also mapped into IPv6 or through the well-known NAT64 prefix', () => {
  for (const a of ALLOWED) assert.equal(isPrivateAddress(a), false, a);
});

test('a URL must be http(s), without credentials; literal private addresses are refused in every spelling unless allowed', () => {
  for (const u of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'https://u:p@example.com/', 'nope'])
    assert.throws(() => checkWebhookUrl(u, true), /url/, u);
  const refused = [
    'http://127.0.0.1:8080/x', 'http://[::1]/', 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/', 'http://[::ffff:127.0.0.1]/', 'http://2130706433/', 'http://0x7f.1/',
    'http://0177.0.0.1/', 'http://127.000.000.001/', 'http://0x7F000001/', 'http://[0:0:0:0:0:FFFF:7F00:0001]/', 'http://[::127.0.0.1]/', 'http://[::a9fe:a9fe]/',
    'http://[64:ff9b:1::a00:1]/', 'http://[64:FF9B::A9FE:A9FE]/', 'http://[2002:7f00:1::]/', 'http://[2001::1]/', 'http://[fe80::1]/', 'http://192.88.99.1/',
  ];
  for (const u of refused) assert.throws(() => checkWebhookUrl(u, false), /private/, u);
  for (const u of refused) assert.equal(checkWebhookUrl(u, true).href, new URL(u).href, `${u} with --webhooks-allow-private`);
  assert.equal(checkWebhookUrl('http://127.0.0.1:8080/x', true).port, '8080');
  assert.equal(checkWebhookUrl('https://hooks.example.com/in', false).hostname, 'hooks.example.com');
  assert.equal(checkWebhookUrl('http://[2606:4700::1111]/in', false).hostname, '[2606:4700::1111]');
  assert.equal(checkWebhookUrl('http://[::ffff:8.8.8.8]/in', false).hostname, '[::ffff:808:808]');
});

test('an IP literal target is checked as it would be resolved: refused in a special range, allowed with allowPrivate', async () => {
  for (const host of ['127.0.0.1', '[::7f00:1]', '[64:ff9b:1::a00:1]', '[2002:a9fe:a9fe::]', '[::ffff:169.254.169.254]']) {
    const u = new URL(`http://${host}:9/`);
    await assert.rejects(resolveTarget(u, false), (e: unknown) => e instanceof TargetRefused && /private/.test((e as Error).message), host);
    assert.ok((await resolveTarget(u, true)).address, `${host} with allowPrivate`);
  }
  assert.deepEqual(await resolveTarget(new URL('http://[2606:4700::1111]/'), false), { address: '2606:4700::1111', family: 6 });
});

test('a host name is checked on what it resolves to: localhost is refused, allowed only with allowPrivate', async () => {
  await assert.rejects(resolveTarget(new URL('http://localhost:9/'), false), (e: unknown) => e instanceof TargetRefused && /resolves to (127\.0\.0\.1|::1)/.test((e as Error).message));
  const ok = await resolveTarget(new URL('http://localhost:9/'), true);
  assert.ok(['127.0.0.1', '::1'].includes(ok.address));
});

test('the connection goes to the address resolved for the delivery, never to a second lookup of the name (no DNS rebinding)', async () => {
  let host: string | undefined;
  const server = createServer((req, res) => {
    host = req.headers.host;
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as AddressInfo).port;
    // The name does not resolve at all (.invalid, RFC 6761): reaching the server proves only the pinned address was used.
    const r = await postWebhook(new URL(`http://rebind.invalid:${port}/hook`), { address: '127.0.0.1', family: 4 }, {}, '{}', { timeoutMs: 5000, maxResponseBytes: 1024 });
    assert.equal(r.status, 204);
    assert.equal(host, `rebind.invalid:${port}`, 'the Host header stays the URL\'s');
  } finally {
    server.close();
  }
});

test('an answer is read up to the cap only, and a silent endpoint is given up at the deadline', async () => {
  const server = createServer((req, res) => {
    if (req.url === '/big') {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 1);
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
      res.on('error', () => undefined);
    }
    // /silent: never answers
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as AddressInfo).port;
    const big = await postWebhook(new URL(`http://127.0.0.1:${port}/big`), { address: '127.0.0.1', family: 4 }, {}, '{}', { timeoutMs: 5000, maxResponseBytes: 100_000 });
    assert.equal(big.status, 200, 'an endless answer is cut at the cap');
    const t0 = Date.now();
    await assert.rejects(postWebhook(new URL(`http://127.0.0.1:${port}/silent`), { address: '127.0.0.1', family: 4 }, {}, '{}', { timeoutMs: 500, maxResponseBytes: 1024 }), /no answer within/);
    assert.ok(Date.now() - t0 < 3000);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
