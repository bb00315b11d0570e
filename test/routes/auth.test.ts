import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

const errorBody = async (res: Response) => {
  const body = (await res.json()) as { error: string; message: string };
  assert.match(body.error, /^[a-z_]+$/);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  return body;
};

// On one process, and on the 2-worker cluster app (PostgreSQL + Redis): every rule must hold whichever worker answers.
for (const [storage, skip] of BACKENDS.filter(([s]) => s !== 's3')) {
  describe(`authentication on ${storage}`, { skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
    });
    after(() => t.close());

    test('login returns the token set of seed §2.1', async () => {
      const res = await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'alice-password' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const body = (await res.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['access_token', 'refresh_token', 'valid_for_seconds']);
      assert.equal(body.valid_for_seconds, 3600);
      assert.equal(typeof body.access_token, 'string');
      // At least 128 bits (access) and 256 bits (refresh) of randomness: 32 bytes base64url = 43 chars after the prefix.
      assert.ok((body.access_token as string).length >= 43);
      assert.ok((body.refresh_token as string).length >= 43);
      assert.notEqual(body.access_token, body.refresh_token);
    });

    test('the access token works in a Bearer header and as a bare header value', async () => {
      const { access_token } = await t.login('alice');
      assert.equal((await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: bearer(access_token) })).status, 200);
      assert.equal((await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: { authorization: access_token } })).status, 200);
      assert.equal((await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: { authorization: `bearer ${access_token}` } })).status, 200);
    });

    test('wrong password and unknown user give the same status and body', async () => {
      const wrong = await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'nope-nope-nope' });
      const unknown = await postJson(`${t.url}/auth/login`, { username: 'nobody', password: 'nope-nope-nope' });
      assert.equal(wrong.status, 401);
      assert.equal(unknown.status, 401);
      assert.deepEqual(await wrong.json(), await unknown.json());
    });

    test('login body errors are 400 with the contract body', async () => {
      const cases: [string, string | object, string?][] = [
        ['not json', '{not json', 'application/json'],
        ['array', [], 'application/json'],
        ['missing password', { username: 'alice' }],
        ['missing username', { password: 'x' }],
        ['number password', { username: 'alice', password: 12345678 }],
        ['null username', { username: null, password: 'x' }],
        ['empty body', '', 'application/json'],
        ['form encoded', 'username=alice&password=x', 'application/x-www-form-urlencoded'],
      ];
      for (const [name, body, type] of cases) {
        const res = await fetch(`${t.url}/auth/login`, { method: 'POST', headers: { 'content-type': type ?? 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
        assert.equal(res.status, 400, name);
        const b = await errorBody(res);
        assert.ok(['bad_request', 'invalid_json'].includes(b.error), `${name}: ${b.error}`);
      }
    });

    test('an oversized login body is refused with 413', async () => {
      const res = await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'x'.repeat(100_000) });
      assert.equal(res.status, 413);
      assert.equal((await errorBody(res)).error, 'too_large');
    });

    test('refresh returns a new access token and the identical refresh token', async () => {
      const first = await t.login('alice');
      const res = await postJson(`${t.url}/auth/refresh`, { username: 'alice', refresh_token: first.refresh_token });
      assert.equal(res.status, 200);
      const second = (await res.json()) as typeof first;
      assert.notEqual(second.access_token, first.access_token);
      assert.equal(second.refresh_token, first.refresh_token);
      assert.equal(second.valid_for_seconds, 3600);
      // The earlier access token stays valid until its own expiry.
      for (const token of [first.access_token, second.access_token]) {
        assert.equal((await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: bearer(token) })).status, 200);
      }
    });

    test('refresh with a wrong token, another user, or an access token is 401', async () => {
      const a = await t.login('alice');
      const cases: [string, object][] = [
        ['garbage', { username: 'alice', refresh_token: 'fcr_garbage' }],
        ['another user', { username: 'bob', refresh_token: a.refresh_token }],
        ['unknown user', { username: 'nobody', refresh_token: a.refresh_token }],
        ['access token', { username: 'alice', refresh_token: a.access_token }],
      ];
      for (const [name, body] of cases) {
        const res = await postJson(`${t.url}/auth/refresh`, body);
        assert.equal(res.status, 401, name);
        assert.equal((await errorBody(res)).error, 'unauthorized', name);
      }
      assert.equal((await postJson(`${t.url}/auth/refresh`, { username: 'alice' })).status, 400);
    });

    test('a refresh token is not accepted as an access token', async () => {
      const a = await t.login('alice');
      assert.equal((await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: bearer(a.refresh_token) })).status, 401);
    });

    test('logout revokes the refresh token and its access tokens at once, and no other session', async () => {
      const a = await t.login('alice');
      const other = await t.login('alice');
      const refreshed = (await (await postJson(`${t.url}/auth/refresh`, { username: 'alice', refresh_token: a.refresh_token })).json()) as typeof a;
      const res = await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: a.refresh_token });
      assert.equal(res.status, 204);
      for (const token of [a.access_token, refreshed.access_token]) {
        assert.equal((await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: bearer(token) })).status, 401);
      }
      assert.equal((await postJson(`${t.url}/auth/refresh`, { username: 'alice', refresh_token: a.refresh_token })).status, 401);
      assert.equal((await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: a.refresh_token })).status, 401);
      assert.equal((await fetch(`${t.url}/api/stats`, { method: 'HEAD', headers: bearer(other.access_token) })).status, 200);
    });

    test('logout with a malformed body is 400', async () => {
      assert.equal((await postJson(`${t.url}/auth/logout`, '[')).status, 400);
      assert.equal((await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: 5 })).status, 400);
    });

    test('login is not answered for GET: 405 with Allow: POST', async () => {
      const res = await fetch(`${t.url}/auth/login`);
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'POST');
      assert.equal((await errorBody(res)).error, 'method_not_allowed');
    });
  });
}
