import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { readdir } from 'node:fs/promises';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { HTTP_LIMITS } from '../../src/http/client-error.js';
import { rawExchange } from './raw-client.js';
import { req } from './corpus.js';

/** Request header and body size limits, timeouts, and the answers at the HTTP parser level. */

let t: TestApp;
let token: string;
before(async () => {
  t = await startApp({ users: ['alice'] });
  token = (await t.login('alice')).access_token;
});
after(() => t.close());

const contractBody = (body: string) => {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed).sort(), ['error', 'message']);
  return parsed.error;
};

test('the HTTP server runs with the pinned header size, header timeout and idle timeout', () => {
  assert.equal((t.app.server as unknown as { maxHeaderSize: number }).maxHeaderSize, HTTP_LIMITS.maxHeaderSize);
  assert.equal(t.app.server.headersTimeout, HTTP_LIMITS.headersTimeoutMs);
  assert.equal(t.app.server.timeout, HTTP_LIMITS.idleTimeoutMs);
  assert.equal(HTTP_LIMITS.maxHeaderSize, 16 * 1024);
});

test('headers just under 16 KiB are served; over it the answer is 431 headers_too_large with the contract body', async () => {
  const under = await rawExchange(t.url, req('GET', '/api/stats', [`Authorization: Bearer ${token}`, `X-Pad: ${'a'.repeat(15 * 1024)}`]));
  assert.equal(under.status, 200);
  const over = await rawExchange(t.url, req('GET', '/api/stats', [`Authorization: Bearer ${token}`, `X-Pad: ${'a'.repeat(17 * 1024)}`]));
  assert.equal(over.status, 431);
  assert.equal(contractBody(over.body), 'headers_too_large');
});

test('requests the HTTP parser refuses get 400 with the contract body, not the framework default (regression)', async () => {
  for (const raw of ['GET /api/stats HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n', 'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n']) {
    const res = await rawExchange(t.url, raw);
    assert.equal(res.status, 400);
    assert.equal(contractBody(res.body), 'bad_request');
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
  }
});

test('an HTTP/1.1 request without Host gets 400 with the contract body (regression)', async () => {
  const res = await rawExchange(t.url, 'GET /is_file_cloud HTTP/1.1\r\nConnection: close\r\n\r\n');
  assert.equal(res.status, 400);
  assert.equal(contractBody(res.body), 'bad_request');
  const http10 = await rawExchange(t.url, 'GET /is_file_cloud HTTP/1.0\r\n\r\n');
  assert.equal(http10.status, 200, 'HTTP/1.0 needs no Host');
});

test('two Authorization headers are refused with 400 even when the first one is valid (regression)', async () => {
  for (const headers of [[`Authorization: Bearer ${token}`, 'Authorization: Bearer fca_other'], ['Authorization: Bearer fca_other', `Authorization: Bearer ${token}`]]) {
    const res = await rawExchange(t.url, req('GET', '/api/stats', headers));
    assert.equal(res.status, 400);
    assert.equal(contractBody(res.body), 'bad_request');
  }
  assert.equal((await fetch(`${t.url}/api/stats`, { headers: bearer(token) })).status, 200);
});

test('JSON bodies: 64 KiB are read, more is 413 too_large', async () => {
  const pad = (n: number) => JSON.stringify({ username: 'alice', password: 'p'.repeat(n) });
  assert.equal((await postJson(`${t.url}/auth/login`, pad(60 * 1024))).status, 401);
  const big = await postJson(`${t.url}/auth/login`, pad(65 * 1024));
  assert.equal(big.status, 413);
  assert.equal(((await big.json()) as { error: string }).error, 'too_large');
  const action = await postJson(`${t.url}/storage/alice/`, JSON.stringify({ action: 'CreateFolder', pad: 'x'.repeat(65 * 1024) }), bearer(token));
  assert.equal(action.status, 413);
});

test('a client that stalls in the middle of an upload is disconnected after the idle timeout, leaving no staging file', async () => {
  const production = t.app.server.timeout;
  t.app.server.timeout = 400; // applies to new connections; production uses HTTP_LIMITS.idleTimeoutMs
  try {
    const { port } = new URL(t.url);
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const s = connect(Number(port), '127.0.0.1', () => {
        s.write(`PUT /storage/alice/stalled.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: 1000000\r\n\r\n`);
        s.write(Buffer.alloc(1000, 1));
      });
      s.on('error', () => {});
      s.on('close', () => resolve(Date.now() - started));
    });
    assert.ok(closedAfter < 5000, `closed after ${closedAfter} ms`);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await readdir(t.paths.tmp), []);
    assert.equal((await fetch(`${t.url}/storage/alice/stalled.bin`, { headers: bearer(token) })).status, 404);
    assert.equal((await fetch(`${t.url}/is_file_cloud`)).status, 200, 'still serving');
  } finally {
    t.app.server.timeout = production;
  }
});
