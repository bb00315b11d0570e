import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

type Req = { method: string; path: string; body?: string; type?: string };
const ROUTES: Req[] = [
  { method: 'GET', path: '/storage/bob/' },
  { method: 'GET', path: '/storage/bob/secret.txt' },
  { method: 'HEAD', path: '/storage/bob/secret.txt' },
  { method: 'PUT', path: '/storage/bob/new.txt', body: 'x', type: 'text/plain' },
  { method: 'PUT', path: '/storage/bob/secret.txt', body: 'overwritten', type: 'text/plain' },
  { method: 'POST', path: '/storage/bob/secret.txt', body: '{"action":"MakePathToken"}', type: 'application/json' },
  { method: 'POST', path: '/storage/bob/folder', body: '{"action":"CreateFolder"}', type: 'application/json' },
  { method: 'POST', path: '/storage/bob/secret.txt', body: '{"action":"Move","new_path":"/bob/moved.txt"}', type: 'application/json' },
  { method: 'DELETE', path: '/storage/bob/secret.txt' },
];

for (const [storage, skip] of BACKENDS) {
  describe(`storage authorization on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: string;
    let bob: string;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      alice = (await t.login('alice')).access_token;
      bob = (await t.login('bob')).access_token;
      const put = await fetch(`${t.url}/storage/bob/secret.txt`, { method: 'PUT', headers: bearer(bob), body: 'bob only' });
      assert.equal(put.status, 201);
      assert.equal((await fetch(`${t.url}/storage/alice/mine.txt`, { method: 'PUT', headers: bearer(alice), body: 'alice' })).status, 201);
    });
    after(() => t.close());

    async function send(r: Req, headers: Record<string, string>): Promise<Response> {
      return fetch(`${t.url}${r.path}`, { method: r.method, headers: { ...headers, ...(r.type ? { 'content-type': r.type } : {}) }, body: r.body });
    }

    async function bobUntouched() {
      assert.deepEqual(await t.fs.names('', 'bob'), ['secret.txt']);
      assert.equal(await t.fs.text('secret.txt', 'bob'), 'bob only');
    }

    test('every storage route refuses a missing token, an invalid token and another user\'s token with 401', async () => {
      const credentials: [string, Record<string, string>][] = [
        ['missing', {}],
        ['invalid', bearer('fca_not-a-real-token')],
        ['garbage scheme', { authorization: 'Basic YWxpY2U6cGFzc3dvcmQ=' }],
        ["another user's", bearer(alice)],
      ];
      for (const r of ROUTES) {
        for (const [name, headers] of credentials) {
          const res = await send(r, headers);
          assert.equal(res.status, 401, `${r.method} ${r.path} with ${name} token`);
          if (r.method !== 'HEAD') assert.equal(((await res.json()) as { error: string }).error, 'unauthorized');
        }
      }
      await bobUntouched();
    });

    test("another user's existing path, missing path and an unknown user's path look the same", async () => {
      const answers = [];
      for (const path of ['/storage/bob/secret.txt', '/storage/bob/missing.txt', '/storage/nobody/x.txt', '/storage/nobody/', '/storage/bob/']) {
        const res = await fetch(`${t.url}${path}`, { headers: bearer(alice) });
        answers.push({ status: res.status, body: await res.text() });
      }
      for (const a of answers) assert.deepEqual(a, answers[0]);
      assert.equal(answers[0]?.status, 401);
    });

    test('a path token opens exactly its path, for GET and HEAD only', async () => {
      const made = await postJson(`${t.url}/storage/alice/mine.txt`, { action: 'MakePathToken' }, bearer(alice));
      assert.equal(made.status, 200);
      const body = (await made.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['token']);
      const token = encodeURIComponent(body.token as string);
      assert.equal(await (await fetch(`${t.url}/storage/alice/mine.txt?token=${token}`)).text(), 'alice');
      assert.equal((await fetch(`${t.url}/storage/alice/mine.txt?token=${token}`, { method: 'HEAD' })).status, 200);
      assert.equal((await fetch(`${t.url}/storage/alice/%6Dine.txt?token=${token}`)).status, 200, 'percent-encoding does not matter');
      assert.equal((await fetch(`${t.url}/storage/alice/mine.txt?download=1&token=${token}`)).status, 200);
      const refused: [string, string][] = [
        ['GET', '/storage/alice/'],
        ['GET', '/storage/alice/other.txt'],
        ['GET', '/storage/bob/secret.txt'],
        ['PUT', '/storage/alice/mine.txt'],
        ['DELETE', '/storage/alice/mine.txt'],
        ['POST', '/storage/alice/mine.txt'],
        ['GET', '/api/stats'],
      ];
      for (const [method, path] of refused) {
        const res = await fetch(`${t.url}${path}?token=${token}`, { method, body: method === 'PUT' || method === 'POST' ? '{"action":"CreateFolder"}' : undefined, headers: method === 'POST' ? { 'content-type': 'application/json' } : {} });
        assert.equal(res.status, 401, `${method} ${path}`);
      }
      assert.equal(await t.fs.text('mine.txt'), 'alice');
    });

    test('a path token for a folder lists that folder only', async () => {
      await postJson(`${t.url}/storage/alice/shared`, { action: 'CreateFolder' }, bearer(alice));
      const { token } = (await (await postJson(`${t.url}/storage/alice/shared/`, { action: 'MakePathToken' }, bearer(alice))).json()) as { token: string };
      const res = await fetch(`${t.url}/storage/alice/shared?token=${token}`);
      assert.equal(res.status, 200, 'trailing slash does not matter');
      assert.deepEqual(await res.json(), { entries: [] });
      assert.equal((await fetch(`${t.url}/storage/alice/?token=${token}`)).status, 401);
    });

    test('an access token passed as ?token= is refused', async () => {
      assert.equal((await fetch(`${t.url}/storage/alice/mine.txt?token=${alice}`)).status, 401);
    });

    test('an invalid Authorization header is not rescued by a valid path token', async () => {
      const { token } = (await (await postJson(`${t.url}/storage/alice/mine.txt`, { action: 'MakePathToken' }, bearer(alice))).json()) as { token: string };
      assert.equal((await fetch(`${t.url}/storage/alice/mine.txt?token=${token}`, { headers: bearer('fca_wrong') })).status, 401);
    });

    test('path tokens expire', async () => {
      const { token } = (await (await postJson(`${t.url}/storage/alice/mine.txt`, { action: 'MakePathToken', valid_for_seconds: 1 }, bearer(alice))).json()) as { token: string };
      assert.equal((await fetch(`${t.url}/storage/alice/mine.txt?token=${token}`)).status, 200);
      await new Promise((r) => setTimeout(r, 2100));
      assert.equal((await fetch(`${t.url}/storage/alice/mine.txt?token=${token}`)).status, 401);
    });

    test('MakePathToken validates valid_for_seconds and needs an existing path', async () => {
      for (const v of [0, -5, 86401, 1.5, '60']) {
        const res = await postJson(`${t.url}/storage/alice/mine.txt`, { action: 'MakePathToken', valid_for_seconds: v }, bearer(alice));
        assert.equal(res.status, 400, `valid_for_seconds ${JSON.stringify(v)}`);
      }
      const missing = await postJson(`${t.url}/storage/alice/nothing-here.txt`, { action: 'MakePathToken' }, bearer(alice));
      assert.equal(missing.status, 404);
    });
  });
}
