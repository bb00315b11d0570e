import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { loadConfig } from '../../src/config/load.js';

const preflight = (url: string, origin: string, method = 'PUT', headers = 'authorization, content-type') =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

test('by default there is no cross-origin access: no CORS headers, preflight not answered', async () => {
  const t = await startApp({ users: ['alice'] });
  try {
    const { access_token } = await t.login('alice');
    const res = await fetch(`${t.url}/storage/alice/`, { headers: { ...bearer(access_token), origin: 'https://evil.example' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    const pre = await preflight(`${t.url}/storage/alice/x.txt`, 'https://evil.example');
    // No OPTIONS route there: the 405 of a known path's missing method, without any CORS header.
    assert.equal(pre.status, 405);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    assert.equal(pre.headers.get('access-control-allow-methods'), null);
  } finally {
    await t.close();
  }
});

test('listed origins: preflight allowed with Authorization, responses readable, others never reflected', async () => {
  const t = await startApp({ users: ['alice'], flags: { corsOrigin: 'https://app.example.com, http://localhost:5173' } });
  try {
    const pre = await preflight(`${t.url}/storage/alice/x.txt`, 'https://app.example.com');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
    for (const m of ['GET', 'HEAD', 'PUT', 'POST', 'DELETE']) assert.match(pre.headers.get('access-control-allow-methods') ?? '', new RegExp(`\\b${m}\\b`));
    assert.match(pre.headers.get('vary') ?? '', /Origin/);
    assert.equal(pre.headers.get('access-control-allow-credentials'), null, 'tokens, not cookies: no credentials mode');

    // A preflight for the login endpoint too (the app signs in cross-origin).
    assert.equal((await preflight(`${t.url}/auth/login`, 'http://localhost:5173', 'POST', 'content-type')).headers.get('access-control-allow-origin'), 'http://localhost:5173');

    const { access_token } = await t.login('alice');
    const put = await fetch(`${t.url}/storage/alice/x.txt`, { method: 'PUT', headers: { ...bearer(access_token), origin: 'https://app.example.com' }, body: 'abc' });
    assert.equal(put.status, 201);
    assert.equal(put.headers.get('access-control-allow-origin'), 'https://app.example.com');
    const get = await fetch(`${t.url}/storage/alice/x.txt`, { headers: { ...bearer(access_token), origin: 'https://app.example.com' } });
    const exposed = get.headers.get('access-control-expose-headers') ?? '';
    for (const h of ['ETag', 'Content-Range', 'Content-Disposition', 'X-Expires-At', 'Retry-After']) assert.match(exposed, new RegExp(h));
    const made = await postJson(`${t.url}/storage/alice/x.txt`, { action: 'MakePathToken' }, { ...bearer(access_token), origin: 'https://app.example.com' });
    assert.equal(made.headers.get('access-control-allow-origin'), 'https://app.example.com');

    // Errors are readable cross-origin too (the app must see 401 to refresh).
    const denied = await fetch(`${t.url}/storage/alice/`, { headers: { origin: 'https://app.example.com' } });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), 'https://app.example.com');

    // An unlisted origin is never reflected, on preflight or on a request.
    for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'null', 'http://app.example.com']) {
      const p = await preflight(`${t.url}/storage/alice/x.txt`, origin);
      assert.equal(p.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(p.headers.get('access-control-allow-methods'), null, origin);
      const r = await fetch(`${t.url}/storage/alice/x.txt`, { headers: { ...bearer(access_token), origin } });
      assert.equal(r.headers.get('access-control-allow-origin'), null, origin);
    }
  } finally {
    await t.close();
  }
});

test('"*" allows any origin without echoing it', async () => {
  const t = await startApp({ users: ['alice'], flags: { corsOrigin: '*' } });
  try {
    const pre = await preflight(`${t.url}/api/stats`, 'https://anything.example', 'GET', 'authorization');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    const res = await fetch(`${t.url}/is_file_cloud`, { headers: { origin: 'https://x.example' } });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
  } finally {
    await t.close();
  }
});

test('--cors-origin accepts origins or *, and refuses paths, schemes and mixtures', () => {
  assert.deepEqual(loadConfig({ corsOrigin: 'https://a.example, http://b.example:8080' }, {}).corsOrigin, ['https://a.example', 'http://b.example:8080']);
  assert.deepEqual(loadConfig({}, { FILE_CLOUD_CORS_ORIGIN: '*' }).corsOrigin, ['*']);
  assert.deepEqual(loadConfig({}, {}).corsOrigin, []);
  for (const bad of ['https://a.example/path', 'ftp://a.example', 'a.example', '*, https://a.example']) {
    assert.throws(() => loadConfig({ corsOrigin: bad }, {}), /--cors-origin/, bad);
  }
});
