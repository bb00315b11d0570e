import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

let t: TestApp;
let token: string;
before(async () => {
  t = await startApp({ users: ['alice'] });
  token = (await t.login('alice')).access_token;
});
after(() => t.close());

test('meta routes refuse a missing or invalid token', async () => {
  const credentials: [string, Record<string, string>][] = [
    ['none', {}],
    ['garbage', bearer('garbage')],
    ['well-formed unknown', bearer('fca_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')],
    ['empty', { authorization: '' }],
  ];
  for (const [name, headers] of credentials) {
    const get = await fetch(`${t.url}/api/stats`, { headers });
    assert.equal(get.status, 401, `GET ${name}`);
    assert.deepEqual(Object.keys((await get.json()) as object).sort(), ['error', 'message']);
    const head = await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers });
    assert.equal(head.status, 401, `HEAD ${name}`);
  }
});

test('GET /api/stats returns only the uptime as an ISO 8601 duration', async () => {
  const res = await fetch(`${t.url}/api/stats`, { headers: bearer(token) });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { uptime: string };
  assert.deepEqual(Object.keys(body), ['uptime']);
  assert.match(body.uptime, /^PT\d+(\.\d+)?S$/);
});

test('uptime grows', async () => {
  const read = async () => Number(((await (await fetch(`${t.url}/api/stats`, { headers: bearer(token) })).json()) as { uptime: string }).uptime.slice(2, -1));
  const a = await read();
  await new Promise((r) => setTimeout(r, 50));
  assert.ok((await read()) > a);
});

test('HEAD /api/stats is 200 with a valid token and has no body', async () => {
  const res = await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: bearer(token) });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '');
});

test('HEAD /is_file_cloud is 200 without any token, and GET too', async () => {
  const head = await fetch(`${t.url}/is_file_cloud`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');
  assert.equal((await fetch(`${t.url}/is_file_cloud`)).status, 200);
  assert.equal((await fetch(`${t.url}/is_file_cloud`, { method: 'HEAD', headers: bearer('garbage') })).status, 200);
});

test('a path token is not accepted under /api', async () => {
  await fetch(`${t.url}/storage/alice/`, { headers: bearer(token) });
  const made = await fetch(`${t.url}/storage/alice/`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ action: 'MakePathToken' }) });
  const { token: pathToken } = (await made.json()) as { token: string };
  assert.equal((await fetch(`${t.url}/api/stats?token=${encodeURIComponent(pathToken)}`)).status, 401);
  assert.equal((await fetch(`${t.url}/api/stats?token=${encodeURIComponent(pathToken)}`, { method: 'HEAD' })).status, 401);
});

// A known path's missing method (DELETE /auth/login) is 405 with Allow: test/routes/unknown-paths.test.ts.
test('unknown routes get a JSON 404 for every method', async () => {
  for (const [method, path] of [['GET', '/api/nothing'], ['POST', '/nothing'], ['PUT', '/api/nothing'], ['GET', '/auth/nothing']] as const) {
    const res = await fetch(`${t.url}${path}`, { method, headers: bearer(token) });
    assert.equal(res.status, 404, `${method} ${path}`);
    const body = (await res.json()) as { error: string };
    assert.equal(body.error, 'not_found');
  }
});

test('responses carry nosniff and no-referrer', async () => {
  const res = await fetch(`${t.url}/is_file_cloud`);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
});

for (const [storage, skip] of BACKENDS) {
  test(`GET /api/health answers 200 without a token when the database and storage (${storage}) answer`, { skip }, async () => {
    const app = await startApp({ storage });
    try {
      const res = await fetch(`${app.url}/api/health`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'ok' });
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal((await fetch(`${app.url}/api/health`, { method: 'HEAD' })).status, 200);
    } finally {
      await app.close();
    }
  });
}

test('GET /api/health answers 503 naming the storage while it is gone (readiness; liveness stays 200), and 200 again when it is back', async () => {
  const app = await startApp();
  try {
    await rm(app.paths.storage, { recursive: true, force: true });
    for (const query of ['', '?ready']) {
      const res = await fetch(`${app.url}/api/health${query}`);
      assert.equal(res.status, 503);
      assert.ok(Number(res.headers.get('retry-after')) > 0);
      const body = (await res.json()) as { status: string; error: string; message: string; down: string[] };
      assert.equal(body.status, 'unavailable');
      assert.equal(body.error, 'storage_unavailable');
      assert.deepEqual(body.down, ['storage']);
      assert.equal(typeof body.message, 'string');
    }
    assert.equal((await fetch(`${app.url}/api/health`, { method: 'HEAD' })).status, 503);
    const live = await fetch(`${app.url}/api/health?live`);
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: 'ok' });
    await mkdir(app.paths.storage);
    assert.equal((await fetch(`${app.url}/api/health`)).status, 200);
    assert.equal((await fetch(`${app.url}/api/health?ready`)).status, 200);
  } finally {
    await app.close();
  }
});
