// The trash (issue 34, --trash-days; docs/api.md "Trash") on every backend: a delete through any front end
// (API, WebDAV, a grant's writer) moves the item into its owner's trash, outside every user's tree, where
// no reader sees it (GET, listing, search, WebDAV, zip); restore (also with a collision suffix and with its
// folders gone), delete forever and empty; the bytes stay counted against the owner until then. With the
// flag off (the default) a delete is permanent and the trash routes answer 404, as the interface document says.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { behindTheBack } from '../helpers/behind-the-back.js';
import { bearer, usersApi } from '../helpers/client.js';

type Item = { id: string; path: string; name: string; is_file: boolean; size: number; sha256: string | null; deleted_at: string; expires_at: string };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function client(t: () => TestApp, tokens: Record<string, string>) {
  const { req, json } = usersApi(() => t().url, tokens);
  const trash = async (who: string) => (await json<{ items: Item[] }>(await req(who, 'GET', '/api/trash'), 200)).items;
  const used = async (who: string) => (await json<{ used: number }>(await req(who, 'GET', '/api/usage'), 200)).used;
  /** An upload through the API, so usage counts it as it counts every upload. */
  const put = async (who: string, path: string, body: string) => assert.equal((await req(who, 'PUT', `/storage/${path}`, body, { 'content-type': 'application/octet-stream' })).status, 201);
  return { req, json, trash, used, put };
}

for (const [storage, skip] of BACKENDS) {
  describe(`trash on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    const { req, json, trash, used, put } = client(() => t, tokens);
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: { trashDays: '7' } });
      for (const u of ['alice', 'bob']) tokens[u] = (await t.login(u)).access_token;
    });
    after(() => t?.close());

    test('an API delete moves a file to the owner\'s trash: gone for every reader, kept outside the tree, still counted', async () => {
      await put('alice', 'alice/docs/report.txt', 'quarterly');
      await t.fs.put('docs/keep.txt', 'k', 'alice');
      const before = await used('alice');
      assert.equal((await req('alice', 'DELETE', '/storage/alice/docs/report.txt')).status, 204);
      assert.equal((await req('alice', 'GET', '/storage/alice/docs/report.txt')).status, 404);
      const listing = await json<{ entries: { name: string }[] }>(await req('alice', 'GET', '/storage/alice/docs/'), 200);
      assert.deepEqual(listing.entries.map((e) => e.name), ['keep.txt']);
      const found = await json<{ results: { path: string }[] }>(await req('alice', 'GET', '/api/search?q=report'), 200);
      assert.deepEqual(found.results, []);
      assert.equal((await req('alice', 'PROPFIND', '/dav/alice/docs/report.txt', undefined, { depth: '0' })).status, 404);
      const zip = Buffer.from(await (await req('alice', 'GET', '/storage/alice/docs/?zip=1')).arrayBuffer());
      assert.ok(!zip.includes('report.txt'), 'the zip leaves the trashed file out');
      assert.equal(await t.fs.kind('docs/report.txt', 'alice'), undefined);
      const items = await trash('alice');
      assert.equal(items.length, 1);
      const [item] = items as [Item];
      assert.deepEqual([item.path, item.name, item.is_file, item.size, item.sha256], ['/alice/docs/report.txt', 'report.txt', true, 9, sha('quarterly')]);
      assert.equal(Date.parse(item.expires_at) - Date.parse(item.deleted_at), 7 * 86_400_000);
      assert.deepEqual(await t.backend.trash.find('alice', item.id), { isFile: true, size: 9 });
      if (storage === 'file') {
        // data/trash/<owner>/<id>/<name>: beside storage/, never inside it.
        assert.ok(existsSync(join(t.paths.root, 'trash', 'alice', item.id, 'report.txt')));
        assert.deepEqual(readdirSync(join(t.paths.storage)).sort(), ['alice', 'bob']);
      }
      // The trash counts against the owner: deleting freed nothing yet.
      assert.equal(await used('alice'), before);
      assert.deepEqual(await trash('bob'), []);
    });

    test('a trashed file carries the sha256 of exactly the bytes it holds; a folder, or a file the index had no hash of for those bytes, has null', async () => {
      await put('alice', 'alice/sums/known.txt', 'known bytes');
      await put('alice', 'alice/sums/stale.txt', 'as uploaded');
      await put('alice', 'alice/sums/dir/in.txt', 'inside');
      await put('alice', 'alice/sums/dir/deeper/stale in.txt', 'stale inside');
      // Rewritten by another tool: the index's hash is of the upload's bytes, no longer the file's. The
      // same size, so the owner's usage (counted from the upload) stays exact for the tests after this.
      await behindTheBack(t, 'sums/stale.txt', 'AS UPLOADED');
      await behindTheBack(t, 'sums/dir/deeper/stale in.txt', 'STALE INSIDE');
      for (const p of ['known.txt', 'stale.txt', 'dir']) assert.equal((await req('alice', 'DELETE', `/storage/alice/sums/${p}`)).status, 204);
      const items = new Map((await trash('alice')).filter((i) => i.path.startsWith('/alice/sums/')).map((i) => [i.name, i]));
      assert.equal(items.get('known.txt')?.sha256, sha('known bytes'));
      const stale = items.get('stale.txt')?.sha256;
      assert.notEqual(stale, sha('as uploaded'), 'never the hash of bytes the item does not hold');
      // null, unless a rescan hashed the new bytes before the delete.
      assert.ok(stale === null || stale === sha('AS UPLOADED'), String(stale));
      assert.equal(items.get('dir')?.sha256, null);
      // What the trash holds, the files of a trashed folder too: only hashes of exactly the bytes trashed.
      const held = (await json<{ files: { sha256: string; size: number }[] }>(await req('alice', 'GET', '/api/trash/hashes'), 200)).files.map((f) => `${f.sha256}:${f.size}`);
      assert.ok(held.includes(`${sha('known bytes')}:11`), 'a trashed file');
      assert.ok(held.includes(`${sha('inside')}:6`), 'a file of a trashed folder');
      assert.ok(!held.includes(`${sha('as uploaded')}:11`) && !held.includes(`${sha('stale inside')}:12`), 'never bytes the trash does not hold');
      assert.equal(new Set(held).size, held.length, 'each once');
      assert.deepEqual((await json<{ files: unknown[] }>(await req('bob', 'GET', '/api/trash/hashes'), 200)).files, [], "only the caller's own trash");
      // A restore takes the folder's files out of it.
      const dir = (await trash('alice')).find((i) => i.path === '/alice/sums/dir') as Item;
      await json(await req('alice', 'POST', `/api/trash/${dir.id}/restore`), 200);
      const after = (await json<{ files: { sha256: string; size: number }[] }>(await req('alice', 'GET', '/api/trash/hashes'), 200)).files.map((f) => `${f.sha256}:${f.size}`);
      assert.ok(!after.includes(`${sha('inside')}:6`) && after.includes(`${sha('known bytes')}:11`));
    });

    test('restore puts a file back at its path, or as "name (1).ext" when the name is taken now', async () => {
      await t.fs.put('a/photo.jpg', 'old photo', 'alice');
      assert.equal((await req('alice', 'DELETE', '/storage/alice/a/photo.jpg')).status, 204);
      await t.fs.put('a/photo.jpg', 'new photo', 'alice');
      const item = (await trash('alice')).find((i) => i.name === 'photo.jpg') as Item;
      const restored = await json<{ path: string }>(await req('alice', 'POST', `/api/trash/${item.id}/restore`), 200);
      assert.equal(restored.path, '/alice/a/photo (1).jpg');
      assert.equal(await t.fs.text('a/photo (1).jpg', 'alice'), 'old photo');
      assert.equal(await t.fs.text('a/photo.jpg', 'alice'), 'new photo');
      assert.ok(!(await trash('alice')).some((i) => i.id === item.id));
      // Gone from the trash: a second restore is 404.
      await json(await req('alice', 'POST', `/api/trash/${item.id}/restore`), 404);
      const found = await json<{ results: { path: string }[] }>(await req('alice', 'GET', `/api/search?q=${encodeURIComponent('photo (1)')}`), 200);
      assert.deepEqual(found.results.map((r) => r.path), ['/alice/a/photo (1).jpg']);
    });

    test('the change feed reports a move into the trash as deleted and a restore as created', async () => {
      await put('alice', 'alice/feed/note.txt', 'n');
      const { cursor } = await json<{ cursor: string }>(await req('alice', 'GET', '/api/changes?cursor=now'), 200);
      assert.equal((await req('alice', 'DELETE', '/storage/alice/feed/note.txt')).status, 204);
      const item = (await trash('alice')).find((i) => i.path === '/alice/feed/note.txt') as Item;
      await json(await req('alice', 'POST', `/api/trash/${item.id}/restore`), 200);
      const feed = await json<{ changes: { type: string; path: string; is_file: boolean }[] }>(await req('alice', 'GET', `/api/changes?cursor=${cursor}`), 200);
      assert.deepEqual(feed.changes.map((c) => [c.type, c.path, c.is_file]), [
        ['deleted', '/alice/feed/note.txt', true],
        ['created', '/alice/feed/note.txt', true],
      ]);
    });

    test('a folder goes to the trash whole and comes back whole, its parents made again when they are gone', async () => {
      await t.fs.put('outer/inner/one.txt', '111', 'alice');
      await t.fs.put('outer/inner/sub/two.txt', '22', 'alice');
      await t.fs.mkdir('outer/inner/empty', 'alice');
      assert.equal((await req('alice', 'DELETE', '/storage/alice/outer/inner')).status, 204);
      assert.equal(await t.fs.kind('outer/inner', 'alice'), undefined);
      assert.equal(await t.fs.kind('outer', 'alice'), 'folder');
      const item = (await trash('alice')).find((i) => i.name === 'inner') as Item;
      assert.deepEqual([item.is_file, item.size], [false, 5]);
      assert.equal((await req('alice', 'DELETE', '/storage/alice/outer')).status, 204);
      const outer = (await trash('alice')).find((i) => i.name === 'outer') as Item;
      assert.equal((await req('alice', 'DELETE', `/api/trash/${outer.id}`)).status, 204);
      const restored = await json<{ path: string }>(await req('alice', 'POST', `/api/trash/${item.id}/restore`), 200);
      assert.equal(restored.path, '/alice/outer/inner');
      assert.deepEqual(await t.fs.names('outer/inner', 'alice'), ['empty', 'one.txt', 'sub']);
      assert.equal(await t.fs.text('outer/inner/sub/two.txt', 'alice'), '22');
    });

    test('delete forever and empty free the owner\'s bytes; nobody else can see or touch the items', async () => {
      await put('alice', 'alice/big.bin', 'x'.repeat(1000));
      await put('alice', 'alice/small.bin', 'y'.repeat(10));
      const start = await used('alice');
      const trashedBefore = (await trash('alice')).reduce((n, i) => n + i.size, 0);
      for (const name of ['big.bin', 'small.bin']) assert.equal((await req('alice', 'DELETE', `/storage/alice/${name}`)).status, 204);
      assert.equal(await used('alice'), start);
      const big = (await trash('alice')).find((i) => i.name === 'big.bin') as Item;
      // Another user's id answers as an unknown one; no token is 401.
      await json(await req('bob', 'POST', `/api/trash/${big.id}/restore`), 404);
      await json(await req('bob', 'DELETE', `/api/trash/${big.id}`), 404);
      await json(await req(undefined, 'GET', '/api/trash'), 401);
      await json(await req('alice', 'DELETE', '/api/trash/no-such-id'), 404);
      assert.equal((await req('alice', 'DELETE', `/api/trash/${big.id}`)).status, 204);
      assert.equal(await used('alice'), start - 1000);
      assert.equal(await t.backend.trash.find('alice', big.id), undefined);
      assert.equal((await req('alice', 'DELETE', '/api/trash')).status, 204);
      assert.deepEqual(await trash('alice'), []);
      assert.equal(await used('alice'), start - 1010 - trashedBefore);
    });

    test('WebDAV DELETE and a grant\'s writer put the item in the owner\'s trash', async () => {
      await t.fs.put('dav/file.txt', 'via dav', 'alice');
      await t.fs.put('team/shared.txt', 'shared', 'alice');
      assert.equal((await req('alice', 'DELETE', '/dav/alice/dav/file.txt')).status, 204);
      assert.equal(await t.fs.kind('dav/file.txt', 'alice'), undefined);
      assert.ok((await trash('alice')).some((i) => i.path === '/alice/dav/file.txt'));
      await json(await req('alice', 'POST', '/api/grants', { path: '/alice/team', to: 'user:bob', permission: 'write' }), 201);
      assert.equal((await req('bob', 'DELETE', '/storage/alice/team/shared.txt')).status, 204);
      assert.equal(await t.fs.kind('team/shared.txt', 'alice'), undefined);
      assert.ok((await trash('alice')).some((i) => i.path === '/alice/team/shared.txt'));
      assert.deepEqual(await trash('bob'), []);
    });

    test('a read-only app password cannot restore or delete from the trash (403)', async () => {
      await t.fs.put('ro.txt', 'r', 'alice');
      assert.equal((await req('alice', 'DELETE', '/storage/alice/ro.txt')).status, 204);
      const item = (await trash('alice')).find((i) => i.name === 'ro.txt') as Item;
      const session = (await t.login('alice')).access_token;
      const key = await json<{ key: string }>(await fetch(`${t.url}/api/keys`, { method: 'POST', headers: { ...bearer(session), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ro', read_only: true }) }), 201);
      const asKey = (method: string, path: string) => fetch(`${t.url}${path}`, { method, headers: bearer(key.key) });
      assert.equal((await asKey('GET', '/api/trash')).status, 200);
      for (const [method, path] of [['POST', `/api/trash/${item.id}/restore`], ['DELETE', `/api/trash/${item.id}`], ['DELETE', '/api/trash']] as const) {
        const res = await asKey(method, path);
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(((await res.json()) as { error: string }).error, 'forbidden');
      }
    });
  });
}

for (const [storage, skip] of BACKENDS) {
  describe(`trash off (the default) on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    const { req, json, used, put } = client(() => t, tokens);
    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      tokens.alice = (await t.login('alice')).access_token;
    });
    after(() => t?.close());

    test('a delete is permanent (the interface document\'s rule) and the trash routes answer 404', async () => {
      await put('alice', 'alice/gone.txt', 'bye');
      const start = await used('alice');
      assert.equal((await req('alice', 'DELETE', '/storage/alice/gone.txt')).status, 204);
      assert.equal(await used('alice'), start - 3);
      const res = await json<{ error: string }>(await req('alice', 'GET', '/api/trash'), 404);
      assert.equal(res.error, 'not_found');
      await json(await req('alice', 'DELETE', '/api/trash'), 404);
      if (storage === 'file') assert.ok(!existsSync(join(t.paths.root, 'trash')), 'nothing is kept');
    });
  });
}

// Purge by age runs on the leader's storage sweep (every second with --stale-upload-after 2) against the
// server's clock, which the test moves: an item is purged once it is more than --trash-days old, not before.
for (const [storage, skip] of BACKENDS.filter(([s]) => s !== 'cluster')) {
  describe(`trash purge by age on ${storage}`, { skip }, () => {
    let t: TestApp;
    let now = Date.parse('2026-01-01T00:00:00Z');
    const tokens: Record<string, string> = {};
    const { req, trash, used, put } = client(() => t, tokens);
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: { trashDays: '1', staleUploadAfter: '2', accessTokenTtl: '864000' }, clock: { now: () => now } });
      tokens.alice = (await t.login('alice')).access_token;
    });
    after(() => t?.close());

    test('an item older than --trash-days is purged by the sweep and its bytes freed; a younger one stays', async () => {
      await put('alice', 'alice/old.txt', 'o'.repeat(100));
      await put('alice', 'alice/young.txt', 'y'.repeat(10));
      const start = await used('alice');
      assert.equal((await req('alice', 'DELETE', '/storage/alice/old.txt')).status, 204);
      now += 12 * 3_600_000;
      assert.equal((await req('alice', 'DELETE', '/storage/alice/young.txt')).status, 204);
      now += 12 * 3_600_000 + 1000;
      // One sweep interval (1 s) and the sweep's run: a bound, not a lucky schedule.
      const deadline = Date.now() + 10_000;
      let names = (await trash('alice')).map((i) => i.name);
      while (names.includes('old.txt') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        names = (await trash('alice')).map((i) => i.name);
      }
      assert.deepEqual(names, ['young.txt']);
      assert.equal(await used('alice'), start - 100);
    });
  });
}
