// Groups (issue 29, docs/api.md "Groups") on every backend: the admin API with the CLI's rules, 403 for
// others, all-or-nothing member changes, GET /api/me's `groups`, and a removed user leaving every group.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { jsonApi } from '../helpers/client.js';

type GroupView = { name: string; members: string[]; created_at: string };

for (const [storage, skip] of BACKENDS) {
  describe(`groups (admin API, /api/me) on ${storage}`, { skip }, () => {
    let t: TestApp;
    let root: string;
    let alice: string;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob', 'carol'] });
      await t.addUser('root', { admin: true });
      root = (await t.login('root')).access_token;
      alice = (await t.login('alice')).access_token;
    });
    after(() => t?.close());

    const { req, json, errorOf } = jsonApi(() => t.url);
    const groups = async () => (await json<{ groups: GroupView[] }>(await req('GET', '/api/admin/groups', root), 200)).groups;
    const me = async (token: string) => json<{ username: string; groups: string[] }>(await req('GET', '/api/me', token), 200);

    test('no token → 401, a user who is not an administrator → 403, and nothing changes', async () => {
      const routes: [string, string, unknown?][] = [
        ['GET', '/api/admin/groups'],
        ['POST', '/api/admin/groups', { name: 'sneaky' }],
        ['PATCH', '/api/admin/groups/sneaky', { add: ['alice'] }],
        ['DELETE', '/api/admin/groups/sneaky'],
      ];
      for (const [method, path, body] of routes) {
        assert.equal(await errorOf(await req(method, path, undefined, body), 401), 'unauthorized', `${method} ${path}`);
        assert.equal(await errorOf(await req(method, path, alice, body), 403), 'forbidden', `${method} ${path}`);
      }
      assert.deepEqual(await groups(), []);
    });

    test('create, add and remove members, list, and /api/me shows the caller\'s groups', async () => {
      const made = await json<GroupView>(await req('POST', '/api/admin/groups', root, { name: 'team', members: ['bob', 'alice'] }), 201);
      assert.deepEqual([made.name, made.members], ['team', ['alice', 'bob']]);
      assert.ok(!Number.isNaN(Date.parse(made.created_at)));
      await json(await req('POST', '/api/admin/groups', root, { name: 'family' }), 201);
      assert.equal(await errorOf(await req('POST', '/api/admin/groups', root, { name: 'team' }), 409), 'already_exists');
      assert.equal(await errorOf(await req('POST', '/api/admin/groups', root, { name: '../x' }), 400), 'bad_request');
      assert.equal(await errorOf(await req('POST', '/api/admin/groups', root, { name: 7 }), 400), 'bad_request');
      const changed = await json<GroupView>(await req('PATCH', '/api/admin/groups/family', root, { add: ['alice', 'carol'] }), 200);
      assert.deepEqual(changed.members, ['alice', 'carol']);
      assert.deepEqual((await me(alice)).groups, ['family', 'team']);
      await json(await req('PATCH', '/api/admin/groups/team', root, { remove: ['alice'] }), 200);
      assert.deepEqual((await me(alice)).groups, ['family']);
      assert.deepEqual((await groups()).map((g) => [g.name, g.members]), [['family', ['alice', 'carol']], ['team', ['bob']]]);
    });

    test('an unknown member changes nothing (400), an unknown group is 404, and a made group with a refused member does not stay', async () => {
      assert.equal(await errorOf(await req('PATCH', '/api/admin/groups/family', root, { add: ['bob', 'nobody'] }), 400), 'bad_request');
      assert.deepEqual((await groups()).find((g) => g.name === 'family')?.members, ['alice', 'carol']);
      assert.equal(await errorOf(await req('PATCH', '/api/admin/groups/ghosts', root, { add: ['bob'] }), 404), 'not_found');
      assert.equal(await errorOf(await req('DELETE', '/api/admin/groups/ghosts', root), 404), 'not_found');
      assert.equal(await errorOf(await req('POST', '/api/admin/groups', root, { name: 'half', members: ['bob', 'nobody'] }), 400), 'bad_request');
      assert.equal((await groups()).some((g) => g.name === 'half'), false);
    });

    test('a removed user leaves every group; a removed group is gone from /api/me', async () => {
      await json(await req('PATCH', '/api/admin/groups/team', root, { add: ['carol'] }), 200);
      await json(await req('DELETE', '/api/admin/users/carol', root), 204);
      for (const g of await groups()) assert.equal(g.members.includes('carol'), false, g.name);
      await json(await req('DELETE', '/api/admin/groups/family', root), 204);
      assert.deepEqual((await me(alice)).groups, []);
      assert.deepEqual((await groups()).map((g) => g.name), ['team']);
    });
  });
}
