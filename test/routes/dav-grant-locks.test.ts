// WebDAV locks held against a tree's owner (issue 49, finding 2), on every backend (the cluster: two
// workers on S3 + PostgreSQL + Redis). A write grantee locked the shared folder itself (Depth: infinity,
// Timeout: Second-604800); the lock outlived the grant, the owner's writes got 423 and the owner's
// UNLOCK 403. Now: a recipient cannot lock the granted item itself; each way a grant ends ends its
// recipient's locks in the owner's tree (the rows leave the shared store, so no worker honours them);
// the owner may UNLOCK any lock in their tree; a lock lasts a day at most.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { usersApi } from '../helpers/client.js';

const LOCKINFO = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>tests</D:owner></D:lockinfo>';
const WEEK = 'Second-604800';
const DAY = 86_400;
const SW = '/dav/Shared%20with%20me';

for (const [storage, skip] of BACKENDS) {
  describe(`WebDAV locks through grants on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob', 'carol'] });
      await t.addUser('root', { admin: true });
      for (const u of ['alice', 'bob', 'carol', 'root']) tokens[u] = (await t.login(u)).access_token;
    });
    after(() => t?.close());

    const { req, json } = usersApi(() => t.url, tokens);
    const status = async (res: Response) => {
      await res.arrayBuffer();
      return res.status;
    };
    const lock = async (who: string, path: string, headers: Record<string, string> = {}) => {
      const res = await req(who, 'LOCK', path, LOCKINFO, { 'content-type': 'application/xml', depth: 'infinity', timeout: WEEK, ...headers });
      const text = await res.text();
      return { status: res.status, text, token: /<([^>]+)>/.exec(res.headers.get('lock-token') ?? '')?.[1] ?? '' };
    };
    const grant = async (path: string, to: string, permission: 'read' | 'write' = 'write') => (await json<{ id: string }>(await req('alice', 'POST', '/api/grants', { path, to, permission }), 201)).id;
    const revoke = async (id: string) => assert.equal(await status(await req('alice', 'DELETE', `/api/grants/${id}`)), 204);
    /** alice's WebDAV PUTs of one of her files, four in a row, so that each worker of the cluster answers some. */
    const ownerPuts = async (path: string) => {
      const seen: number[] = [];
      for (let i = 0; i < 4; i++) seen.push(await status(await req('alice', 'PUT', `/dav/alice/${path}`, `v${i}`)));
      return seen;
    };
    const stored = (token: string) => t.store.davLocks.get(token, Date.now());

    test('a recipient cannot LOCK the shared item itself (403 forbidden), at the owner\'s path or in Shared with me/; inside it they can', async () => {
      await t.fs.put('item/doc.txt', 'doc', 'alice');
      await t.fs.put('item-file.txt', 'file', 'alice');
      const ids = [await grant('/alice/item', 'user:bob'), await grant('/alice/item-file.txt', 'user:bob')];
      try {
        for (const path of ['/dav/alice/item/', '/dav/alice/item', `${SW}/item%20(alice)/`, '/dav/alice/item-file.txt', `${SW}/item-file.txt%20(alice)`]) {
          const refused = await lock('bob', path);
          assert.equal(refused.status, 403, path);
          assert.equal((JSON.parse(refused.text) as { error: string }).error, 'forbidden', path);
        }
        assert.deepEqual(await t.store.davLocks.within('alice', '', Date.now()), [], 'no lock was taken');
        assert.deepEqual(await ownerPuts('item/doc.txt'), [204, 204, 204, 204]);
        const inside = await lock('bob', `${SW}/item%20(alice)/doc.txt`);
        assert.equal(inside.status, 200);
        assert.equal(await status(await req('bob', 'UNLOCK', '/dav/alice/item/doc.txt', undefined, { 'lock-token': `<${inside.token}>` })), 204);
      } finally {
        for (const id of ids) await revoke(id);
      }
    });

    test('a LOCK asking for Infinite or more than a day gets a day, and its answer\'s Timeout says so; a refresh too', async () => {
      await t.fs.put('cap/a.txt', 'a', 'alice');
      for (const [asked, got] of [[WEEK, DAY], ['Infinite', DAY], ['Infinite, Second-600', DAY], ['Second-86401', DAY], ['Second-600', 600]] as const) {
        const l = await lock('alice', '/dav/alice/cap/a.txt', { timeout: asked });
        assert.equal(l.status, 200, asked);
        assert.match(l.text, new RegExp(`<D:timeout>Second-${got}</D:timeout>`), asked);
        assert.equal((await stored(l.token))?.timeoutSeconds, got, asked);
        if (asked === 'Second-600') {
          const refreshed = await req('alice', 'LOCK', '/dav/alice/cap/a.txt', undefined, { if: `(<${l.token}>)`, timeout: WEEK });
          assert.equal(refreshed.status, 200);
          assert.match(await refreshed.text(), new RegExp(`<D:timeout>Second-${DAY}</D:timeout>`));
        }
        assert.equal(await status(await req('alice', 'UNLOCK', '/dav/alice/cap/a.txt', undefined, { 'lock-token': `<${l.token}>` })), 204);
      }
    });

    test('the owner UNLOCKs a recipient\'s lock anywhere in their tree (204); another recipient cannot (403)', async () => {
      await t.fs.put('breakable/sub/doc.txt', 'doc', 'alice');
      const ids = [await grant('/alice/breakable', 'user:bob'), await grant('/alice/breakable', 'user:carol')];
      try {
        const l = await lock('bob', '/dav/alice/breakable/sub/');
        assert.equal(l.status, 200);
        assert.deepEqual(await ownerPuts('breakable/sub/doc.txt'), [423, 423, 423, 423]);
        assert.equal(await status(await req('carol', 'UNLOCK', '/dav/alice/breakable/sub/', undefined, { 'lock-token': `<${l.token}>` })), 403);
        assert.equal(await status(await req('alice', 'UNLOCK', '/dav/alice/breakable/sub/doc.txt', undefined, { 'lock-token': `<${l.token}>` })), 204);
        assert.equal(await stored(l.token), undefined);
        assert.deepEqual(await ownerPuts('breakable/sub/doc.txt'), [204, 204, 204, 204]);
      } finally {
        for (const id of ids) await revoke(id);
      }
    });

    // Each way a grant ends: what sets it up for a holder, and what ends it.
    type Ending = { name: string; holder: string; start(folder: string, group: string): Promise<() => Promise<void>> };
    const patchGroup = async (group: string, body: unknown) => assert.equal(await status(await req('root', 'PATCH', `/api/admin/groups/${group}`, body)), 200);
    const makeGroup = async (group: string, members: string[]) => assert.equal(await status(await req('root', 'POST', '/api/admin/groups', { name: group, members })), 201);
    const endings: Ending[] = [
      { name: 'the owner revokes a user grant', holder: 'bob', start: async (f) => { const id = await grant(f, 'user:bob'); return () => revoke(id); } },
      {
        name: 'the recipient gives a user grant back', holder: 'bob',
        start: async (f) => { const id = await grant(f, 'user:bob'); return async () => assert.equal(await status(await req('bob', 'DELETE', `/api/grants/${id}`)), 204); },
      },
      {
        name: 'the owner makes the grant read-only', holder: 'bob',
        start: async (f) => {
          const id = await grant(f, 'user:bob');
          return async () => assert.equal(await status(await req('alice', 'PATCH', `/api/grants/${id}`, { permission: 'read' })), 200);
        },
      },
      { name: 'the owner revokes a group grant', holder: 'carol', start: async (f, g) => { await makeGroup(g, ['carol']); const id = await grant(f, `group:${g}`); return () => revoke(id); } },
      { name: 'the recipient leaves the group', holder: 'carol', start: async (f, g) => { await makeGroup(g, ['carol']); await grant(f, `group:${g}`); return () => patchGroup(g, { remove: ['carol'] }); } },
      {
        name: 'the group is removed', holder: 'carol',
        start: async (f, g) => { await makeGroup(g, ['carol']); await grant(f, `group:${g}`); return async () => assert.equal(await status(await req('root', 'DELETE', `/api/admin/groups/${g}`)), 204); },
      },
      {
        name: 'the recipient is removed', holder: 'dave',
        start: async (f) => {
          await t.addUser('dave');
          tokens.dave = (await t.login('dave')).access_token;
          await grant(f, 'user:dave');
          return async () => assert.equal(await status(await req('root', 'DELETE', '/api/admin/users/dave')), 204);
        },
      },
    ];
    for (const [i, ending] of endings.entries()) {
      test(`${ending.name}: the holder's locks in the owner's tree end, on every worker`, async () => {
        const folder = `ending-${i}`;
        await t.fs.put(`${folder}/sub/doc.txt`, 'doc', 'alice');
        const end = await ending.start(`/alice/${folder}`, `crew-${i}`);
        // By the owner's path and through Shared with me/: the same lock in the owner's tree.
        const viaShared = i % 2 === 1;
        const l = await lock(ending.holder, viaShared ? `${SW}/${folder}%20(alice)/sub/` : `/dav/alice/${folder}/sub/`);
        assert.equal(l.status, 200, l.text);
        assert.deepEqual(await ownerPuts(`${folder}/sub/doc.txt`), [423, 423, 423, 423], 'the lock holds while the grant does');
        await end();
        assert.equal(await stored(l.token), undefined, 'the lock is gone from the store every worker reads');
        assert.deepEqual(await ownerPuts(`${folder}/sub/doc.txt`), [204, 204, 204, 204]);
      });
    }

    test('a lock held through another grant that still lets its holder lock stays; it ends with the last one; the owner\'s own lock is untouched', async () => {
      await t.fs.put('twice/sub/doc.txt', 'doc', 'alice');
      await t.fs.put('twice/own.txt', 'own', 'alice');
      await makeGroup('twice-crew', ['bob']);
      const byUser = await grant('/alice/twice', 'user:bob');
      const byGroup = await grant('/alice/twice', 'group:twice-crew');
      try {
        const l = await lock('bob', '/dav/alice/twice/sub/');
        const own = await lock('alice', '/dav/alice/twice/own.txt');
        assert.deepEqual([l.status, own.status], [200, 200]);
        await revoke(byUser);
        assert.notEqual(await stored(l.token), undefined, 'the group\'s write grant still lets bob lock there');
        assert.deepEqual(await ownerPuts('twice/sub/doc.txt'), [423, 423, 423, 423]);
        // A read grant is no route to a lock: made read-only, the last grant no longer keeps it.
        assert.equal(await status(await req('alice', 'PATCH', `/api/grants/${byGroup}`, { permission: 'read' })), 200);
        assert.equal(await stored(l.token), undefined);
        assert.deepEqual(await ownerPuts('twice/sub/doc.txt'), [204, 204, 204, 204]);
        assert.notEqual(await stored(own.token), undefined, 'alice\'s own lock is hers');
        assert.equal(await status(await req('alice', 'UNLOCK', '/dav/alice/twice/own.txt', undefined, { 'lock-token': `<${own.token}>` })), 204);
      } finally {
        await revoke(byGroup);
        assert.equal(await status(await req('root', 'DELETE', '/api/admin/groups/twice-crew')), 204);
      }
    });
  });
}
