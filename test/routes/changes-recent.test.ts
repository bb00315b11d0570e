import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';

type Recent = { type: 'created' | 'modified' | 'deleted' | 'moved'; path: string; from?: string; is_file: boolean; size?: number; at: string };

/**
 * GET /api/changes/recent: the newest entries of the change feed, newest
 * first — what the web UI's Recent view and an item's details show. It
 * shows exactly what the feed shows the caller (their tree, and what grants
 * show them of others'), optionally only at or below one path.
 */
for (const [storage, skip] of BACKENDS) {
  describe(`recent changes on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    let bob: Record<string, string>;
    let carol: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob', 'carol'], storage, flags: { indexInterval: '0' } });
      alice = bearer((await t.login('alice')).access_token);
      bob = bearer((await t.login('bob')).access_token);
      carol = bearer((await t.login('carol')).access_token);
    });
    after(() => t.close());

    const recent = async (query: Record<string, string>, auth: Record<string, string>): Promise<Recent[]> => {
      const res = await fetch(`${t.url}/api/changes/recent?${new URLSearchParams(query)}`, { headers: auth });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('cache-control'), 'no-store');
      return ((await res.json()) as { changes: Recent[] }).changes;
    };
    const put = async (user: string, path: string, body: string, auth: Record<string, string>) => {
      const res = await fetch(`${t.url}/storage/${user}/${encodePath(path)}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body });
      assert.equal(res.status, 201, await res.text());
    };

    test('newest first, each with when it was recorded; limit keeps the newest', async () => {
      await put('alice', 'r/zero.txt', '0', alice);
      await put('alice', 'r/one.txt', '1', alice);
      await put('alice', 'r/two.txt', '22', alice);
      await put('alice', 'r/one.txt', '111', alice);
      const list = await recent({ limit: '3' }, alice);
      assert.deepEqual(list.map((c) => [c.type, c.path]), [['modified', '/alice/r/one.txt'], ['created', '/alice/r/two.txt'], ['created', '/alice/r/one.txt']]);
      assert.equal(list[0]?.size, 3);
      const times = list.map((c) => Date.parse(c.at));
      assert.ok(times.every((x) => Number.isFinite(x) && Math.abs(Date.now() - x) < 60_000), JSON.stringify(list));
      assert.ok(times[0]! >= times[1]! && times[1]! >= times[2]!);
      assert.equal((await recent({ limit: '1' }, alice)).length, 1);
    });

    test('path: only entries at or below it (a move counts where it went and where it came from)', async () => {
      await put('alice', 'p/a.txt', 'a', alice);
      await put('alice', 'p2/b.txt', 'b', alice);
      await put('alice', 'q/c.txt', 'c', alice);
      assert.equal((await postJson(`${t.url}/storage/alice/q/c.txt`, { action: 'Move', new_path: '/alice/p/c.txt' }, alice)).status, 204);
      const list = await recent({ path: '/alice/p' }, alice);
      // A new file's parent folder is recorded with it, after it.
      assert.deepEqual(list.map((c) => [c.type, c.path]), [['moved', '/alice/p/c.txt'], ['created', '/alice/p'], ['created', '/alice/p/a.txt']]);
      const file = await recent({ path: '/alice/p/a.txt' }, alice);
      assert.deepEqual(file.map((c) => c.path), ['/alice/p/a.txt']);
      const from = await recent({ path: '/alice/q/c.txt' }, alice);
      assert.deepEqual(from.map((c) => [c.type, c.from]), [['moved', '/alice/q/c.txt'], ['created', undefined]]);
    });

    test('another account sees only what a grant shows them; a path outside it is empty, never refused differently', async () => {
      await put('alice', 'team/plan.txt', 'plan', alice);
      await put('alice', 'private/secret.txt', 'secret', alice);
      assert.equal((await postJson(`${t.url}/api/grants`, { path: '/alice/team', to: 'user:bob', permission: 'write' }, alice)).status, 201);
      await put('alice', 'team/later.txt', 'later', bob);
      await put('bob', 'own.txt', 'mine', bob);
      const list = await recent({ limit: '50' }, bob);
      const paths = list.map((c) => c.path);
      assert.deepEqual(paths.slice(0, 2), ['/bob/own.txt', '/alice/team/later.txt']);
      assert.ok(paths.includes('/alice/team/plan.txt'), JSON.stringify(paths));
      assert.ok(paths.every((p) => p.startsWith('/bob/') || p.startsWith('/alice/team/') || p === '/alice/team'), JSON.stringify(paths));
      assert.deepEqual(await recent({ path: '/alice/private' }, bob), []);
      assert.deepEqual(await recent({ path: '/alice/private/secret.txt' }, bob), []);
      assert.deepEqual(await recent({}, carol), [], 'no grant, nothing');
    });

    test('bad input is a 400 of the contract; no token is 401', async () => {
      for (const q of ['limit=0', 'limit=1001', 'limit=x', 'path=relative', 'limit=1&limit=2']) {
        const res = await fetch(`${t.url}/api/changes/recent?${q}`, { headers: alice });
        assert.equal(res.status, 400, q);
        assert.equal(((await res.json()) as { error: string }).error, 'bad_request', q);
      }
      const res = await fetch(`${t.url}/api/changes/recent`);
      assert.equal(res.status, 401);
    });
  });
}
