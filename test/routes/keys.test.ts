// App passwords / API keys (CONTRACT "Accounts and API") and disabled users, on every backend:
// create/list/revoke, the key as Bearer on the API, storage and tus and as the WebDAV Basic
// password, read-only keys refused on every kind of write, keys that cannot manage keys, and a
// disabled user's every credential stopping at once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

type KeyView = { id: string; name: string; key?: string; read_only: boolean; created: string; expires: string | null; last_used: string | null };
const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const TUS = { 'tus-resumable': '1.0.0' };

for (const [storage, skip] of BACKENDS) {
  describe(`app passwords and disabled users on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: string;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob', 'carol'], storage });
      alice = (await t.login('alice')).access_token;
      await t.fs.put('doc.txt', 'alice doc');
    });
    after(() => t.close());

    const makeKey = async (token: string, body: Record<string, unknown>): Promise<KeyView> => {
      const res = await postJson(`${t.url}/api/keys`, body, bearer(token));
      assert.equal(res.status, 201, await res.clone().text());
      assert.equal(res.headers.get('cache-control'), 'no-store');
      return (await res.json()) as KeyView;
    };

    test('POST /api/keys shows the key once; GET lists without keys; DELETE revokes at once; another user\'s id is 404', async () => {
      const k = await makeKey(alice, { name: 'laptop' });
      assert.deepEqual(Object.keys(k).sort(), ['created', 'expires', 'id', 'key', 'last_used', 'name', 'read_only']);
      assert.match(k.key as string, /^fck_[A-Za-z0-9_-]{43}$/);
      assert.equal(k.read_only, false);
      assert.equal(k.expires, null);
      assert.equal(k.last_used, null);
      const listed = (await (await fetch(`${t.url}/api/keys`, { headers: bearer(alice) })).json()) as { keys: KeyView[] };
      const mine = listed.keys.find((x) => x.id === k.id);
      assert.ok(mine);
      assert.equal(mine.key, undefined, 'never listed');
      assert.ok(!JSON.stringify(listed).includes(k.key as string));
      assert.equal((await fetch(`${t.url}/api/stats`, { headers: bearer(k.key as string) })).status, 200);
      // Another user cannot see or revoke it.
      const bob = (await t.login('bob')).access_token;
      const bobs = (await (await fetch(`${t.url}/api/keys`, { headers: bearer(bob) })).json()) as { keys: KeyView[] };
      assert.equal(bobs.keys.length, 0);
      const foreign = await fetch(`${t.url}/api/keys/${k.id}`, { method: 'DELETE', headers: bearer(bob) });
      assert.equal(foreign.status, 404);
      assert.equal(((await foreign.json()) as { error: string }).error, 'not_found');
      assert.equal((await fetch(`${t.url}/api/keys/${k.id}`, { method: 'DELETE', headers: bearer(alice) })).status, 204);
      assert.equal((await fetch(`${t.url}/api/stats`, { headers: bearer(k.key as string) })).status, 401, 'revoked at once');
      assert.equal((await fetch(`${t.url}/api/keys/${k.id}`, { method: 'DELETE', headers: bearer(alice) })).status, 404);
    });

    test('bad input is 400 with the contract body; an expired key is refused', async () => {
      for (const body of [{}, { name: '' }, { name: 'x', read_only: 'yes' }, { name: 'x', expires_in: 0 }, { name: 'x', expires_in: 'soon' }]) {
        const res = await postJson(`${t.url}/api/keys`, body, bearer(alice));
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(((await res.json()) as { error: string }).error, 'bad_request');
      }
      const short = await makeKey(alice, { name: 'short', expires_in: 1 });
      assert.ok(short.expires && Date.parse(short.expires) - Date.parse(short.created) === 1000);
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal((await fetch(`${t.url}/api/stats`, { headers: bearer(short.key as string) })).status, 401);
    });

    test('a full key works as Bearer on storage, tus and shares and as the WebDAV Basic password; last use is recorded', async () => {
      const k = await makeKey(alice, { name: 'sync' });
      const key = k.key as string;
      assert.equal(await (await fetch(`${t.url}/storage/alice/doc.txt`, { headers: bearer(key) })).text(), 'alice doc');
      assert.equal((await fetch(`${t.url}/storage/alice/by-key.txt`, { method: 'PUT', headers: { ...bearer(key), 'content-type': 'text/plain' }, body: 'k' })).status, 201);
      assert.equal(await t.fs.text('by-key.txt'), 'k');
      const tus = await fetch(`${t.url}/tus/`, { method: 'POST', headers: { ...TUS, ...bearer(key), 'upload-length': '2', 'upload-metadata': `filename ${Buffer.from('t.txt').toString('base64')}` } });
      assert.equal(tus.status, 201);
      const patch = await fetch(`${t.url}${tus.headers.get('location')}`, { method: 'PATCH', headers: { ...TUS, ...bearer(key), 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: 'hi' });
      assert.equal(patch.status, 204);
      assert.equal(await t.fs.text('t.txt'), 'hi');
      assert.equal((await postJson(`${t.url}/api/shares`, { path: '/alice/doc.txt' }, bearer(key))).status, 201);
      // WebDAV: the username with the key as password; the key of another user does not open alice's tree.
      assert.equal((await fetch(`${t.url}/dav/alice/doc.txt`, { headers: basic('alice', key) })).status, 200);
      assert.equal((await fetch(`${t.url}/dav/alice/dav-key.txt`, { method: 'PUT', headers: basic('alice', key), body: 'd' })).status, 201);
      const wrongUser = await fetch(`${t.url}/dav/bob/`, { method: 'PROPFIND', headers: { ...basic('bob', key), depth: '0' } });
      assert.equal(wrongUser.status, 401);
      assert.match(wrongUser.headers.get('www-authenticate') ?? '', /^Basic realm="File Cloud"/);
      assert.equal((await fetch(`${t.url}/dav/alice/doc.txt`, { headers: bearer(key) })).status, 200);
      const listed = (await (await fetch(`${t.url}/api/keys`, { headers: bearer(alice) })).json()) as { keys: KeyView[] };
      let used = listed.keys.find((x) => x.id === k.id)?.last_used;
      for (let i = 0; i < 20 && used === null; i++) {
        await new Promise((r) => setTimeout(r, 50));
        used = ((await (await fetch(`${t.url}/api/keys`, { headers: bearer(alice) })).json()) as { keys: KeyView[] }).keys.find((x) => x.id === k.id)?.last_used;
      }
      assert.ok(used && Date.parse(used) >= Date.parse(k.created), 'last use recorded');
    });

    test('a read-only key reads everything and is refused with 403 on every write (storage, tus, shares, WebDAV)', async () => {
      const k = await makeKey(alice, { name: 'backup', read_only: true });
      const key = k.key as string;
      assert.equal(k.read_only, true);
      assert.equal(await (await fetch(`${t.url}/storage/alice/doc.txt`, { headers: bearer(key) })).text(), 'alice doc');
      assert.equal((await fetch(`${t.url}/storage/alice/`, { headers: bearer(key) })).status, 200);
      assert.equal((await fetch(`${t.url}/api/shares`, { headers: bearer(key) })).status, 200);
      assert.equal((await fetch(`${t.url}/dav/alice/`, { method: 'PROPFIND', headers: { ...basic('alice', key), depth: '1' } })).status, 207);
      const writes: [string, string, Record<string, string>, string | undefined][] = [
        ['PUT', '/storage/alice/doc.txt', { 'content-type': 'text/plain' }, 'overwritten'],
        ['DELETE', '/storage/alice/doc.txt', {}, undefined],
        ['POST', '/storage/alice/doc.txt', { 'content-type': 'application/json' }, '{"action":"Move","new_path":"/alice/moved.txt"}'],
        ['POST', '/storage/alice/new', { 'content-type': 'application/json' }, '{"action":"CreateFolder"}'],
        ['POST', '/tus/', { ...TUS, 'upload-length': '1', 'upload-metadata': `filename ${Buffer.from('x').toString('base64')}` }, undefined],
        ['POST', '/api/shares', { 'content-type': 'application/json' }, '{"path":"/alice/doc.txt"}'],
        ['POST', '/api/keys', { 'content-type': 'application/json' }, '{"name":"more"}'],
      ];
      for (const [method, path, headers, body] of writes) {
        const res = await fetch(`${t.url}${path}`, { method, headers: { ...bearer(key), ...headers }, body });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(((await res.json()) as { error: string }).error, 'forbidden');
      }
      for (const method of ['PUT', 'DELETE', 'MKCOL', 'MOVE', 'COPY', 'PROPPATCH', 'LOCK']) {
        const res = await fetch(`${t.url}/dav/alice/doc.txt`, { method, headers: { ...basic('alice', key), destination: `${t.url}/dav/alice/copy.txt` }, body: method === 'PUT' ? 'x' : undefined });
        assert.equal(res.status, 403, `WebDAV ${method}`);
      }
      assert.equal(await t.fs.text('doc.txt'), 'alice doc');
      assert.deepEqual((await t.fs.names('')).filter((n) => ['moved.txt', 'new', 'copy.txt', 'x'].includes(n)), []);
    });

    test('an app password cannot list, create or revoke app passwords (403); a session can', async () => {
      const k = await makeKey(alice, { name: 'full' });
      for (const [method, path, body] of [['GET', '/api/keys', undefined], ['POST', '/api/keys', '{"name":"x"}'], ['DELETE', `/api/keys/${k.id}`, undefined]] as const) {
        const res = await fetch(`${t.url}${path}`, { method, headers: { ...bearer(k.key as string), ...(body ? { 'content-type': 'application/json' } : {}) }, body });
        assert.equal(res.status, 403, `${method} ${path}`);
      }
      assert.equal((await fetch(`${t.url}/api/stats`, { headers: bearer(k.key as string) })).status, 200, 'still valid');
    });

    test("disabling a user stops their session token, keys, path tokens, WebDAV Basic and share links at once; login answers 401 invalid_credentials; enabling restores keys", async () => {
      await t.fs.put('c.txt', 'carol file', 'carol');
      const tokens = await t.login('carol');
      const carol = tokens.access_token;
      const k = (await makeKey(carol, { name: 'k' })).key as string;
      const made = await postJson(`${t.url}/storage/carol/c.txt`, { action: 'MakePathToken' }, bearer(carol));
      const pathToken = encodeURIComponent(((await made.json()) as { token: string }).token);
      const share = (await (await postJson(`${t.url}/api/shares`, { path: '/carol/c.txt' }, bearer(carol))).json()) as { id: string };
      const checks = async () => [
        (await fetch(`${t.url}/api/stats`, { headers: bearer(carol) })).status,
        (await fetch(`${t.url}/storage/carol/c.txt`, { headers: bearer(k) })).status,
        (await fetch(`${t.url}/storage/carol/c.txt?token=${pathToken}`)).status,
        (await fetch(`${t.url}/dav/carol/c.txt`, { headers: basic('carol', 'carol-password') })).status,
        (await fetch(`${t.url}/dav/carol/c.txt`, { headers: basic('carol', k) })).status,
        (await fetch(`${t.url}/share/${share.id}/`)).status,
        (await fetch(`${t.url}/s/${share.id}/`)).status,
      ];
      assert.deepEqual(await checks(), [200, 200, 200, 200, 200, 200, 200]);
      assert.equal(await t.store.users.setDisabled('carol', true), true);
      assert.deepEqual(await checks(), [401, 401, 401, 401, 401, 404, 404]);
      const deadApi = await fetch(`${t.url}/share/${share.id}/`);
      assert.equal(((await deadApi.json()) as { message: string }).message, 'This link does not exist or is no longer available.');
      const login = await postJson(`${t.url}/auth/login`, { username: 'carol', password: 'carol-password' });
      assert.equal(login.status, 401);
      assert.equal(((await login.json()) as { error: string }).error, 'invalid_credentials');
      assert.equal((await postJson(`${t.url}/auth/refresh`, { username: 'carol', refresh_token: tokens.refresh_token })).status, 401);
      assert.equal(await t.fs.text('c.txt', 'carol'), 'carol file', 'files kept');
      assert.equal(await t.store.users.setDisabled('carol', false), true);
      // Enabled again: what was not revoked works again (keys, path tokens, shares, the session).
      assert.deepEqual(await checks(), [200, 200, 200, 200, 200, 200, 200]);
    });
  });
}
