import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookUrl, isPrivateAddress, resolveTarget, TargetRefused } from './webhook-target.js';
import { postWebhook } from './webhook-http.js';

test('private, loopback, link-local and reserved addresses are refused; public ones are not', () => {
  const refused = ['127.0.0.1', '127.255.0.9', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.9.9', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254'];
  for (const a of refused) assert.equal(isPrivateAddress(a), true, a);
  for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
});

test('a URL must be http(s), without credentials; literal private addresses are refused unless allowed', () => {
  for (const u of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'https://u:p@example.com/', 'nope'])
    assert.throws(() => checkWebhookUrl(u, true), /url/, u);
  for (const u of ['http://127.0.0.1:8080/x', 'http://[::1]/', 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/', 'http://[::ffff:127.0.0.1]/', 'http://2130706433/', 'http://0x7f.1/'])
    assert.throws(() => checkWebhookUrl(u, false), /private/, u);
  assert.equal(checkWebhookUrl('http://127.0.0.1:8080/x', true).port, '8080');
  assert.equal(checkWebhookUrl('https://hooks.example.com/in', false).hostname, 'hooks.example.com');
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
