import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';

const SYNC_COLLECTION = `<?xml version="1.0" encoding="utf-8" ?>
<D:sync-collection xmlns:D="DAV:"><D:sync-token/><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`;

/** --changes off (docs/sync.md "Without the feed"): no journal, and every way of reading it says so plainly. */
for (const [storage, skip] of BACKENDS) {
  describe(`--changes off on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice'], storage, flags: { indexInterval: '0', changes: 'off' } });
      alice = bearer((await t.login('alice')).access_token);
    });
    after(() => t.close());

    const put = async (path: string, body: string) => {
      const res = await fetch(`${t.url}/storage/alice/${encodePath(path)}`, { method: 'PUT', headers: { ...alice, 'content-type': 'application/octet-stream' }, body });
      assert.equal(res.status, 201, await res.text());
    };
    const listingTag = async (dir: string) => {
      const res = await fetch(`${t.url}/storage/alice/${encodePath(dir)}`, { headers: alice });
      assert.equal(res.status, 200);
      return res.headers.get('etag');
    };

    test('writes through every kind of change append nothing to the journal', async () => {
      const before = await t.store.changes.latest();
      await put('docs/a.txt', 'one');
      await put('docs/a.txt', 'two');
      assert.equal((await postJson(`${t.url}/storage/alice/docs/a.txt`, { action: 'Move', new_path: '/alice/docs/b.txt' }, alice)).status, 204);
      assert.equal((await postJson(`${t.url}/storage/alice/made`, { action: 'CreateFolder' }, alice)).status, 201);
      assert.equal((await fetch(`${t.url}/storage/alice/docs/b.txt`, { method: 'DELETE', headers: alice })).status, 204);
      assert.equal(await t.store.changes.latest(), before);
      assert.deepEqual(await t.store.changes.changesSince(0, 10), []);
      // The search index still follows the writes: only the journal is off.
      const found = await fetch(`${t.url}/api/search?q=made`, { headers: alice });
      assert.deepEqual(((await found.json()) as { results: { path: string }[] }).results.map((r) => r.path), ['/alice/made']);
    });

    test('GET /api/changes and its stream answer 404 changes_disabled', async () => {
      for (const path of ['/api/changes', '/api/changes?cursor=0', '/api/changes/stream']) {
        const res = await fetch(`${t.url}${path}`, { headers: { ...alice, accept: 'text/event-stream' } });
        assert.equal(res.status, 404, path);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, path);
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(body.error, 'changes_disabled', path);
        assert.match(body.message, /--changes/);
      }
      // Still a route that needs a token: nothing is said to a stranger.
      assert.equal((await fetch(`${t.url}/api/changes`)).status, 401);
    });

    test('WebDAV REPORT sync-collection answers 403 supported_report (RFC 3253 §3.6, RFC 6578 §3.2)', async () => {
      await put('dav/x.txt', 'x');
      const res = await fetch(`${t.url}/dav/alice/dav/`, { method: 'REPORT', headers: { ...alice, 'content-type': 'application/xml; charset="utf-8"', depth: '0' }, body: SYNC_COLLECTION });
      assert.equal(res.status, 403);
      assert.equal(((await res.json()) as { error: string }).error, 'supported_report');
    });

    test("folder ETags are the backend's own: present, stable while nothing changes, and they change when a member is added", async () => {
      await put('tags/one.txt', '1');
      const t0 = await listingTag('tags/');
      assert.ok(t0, 'a folder listing has an ETag');
      assert.doesNotMatch(t0, /^"t-/, 'not a journal (tree) ETag');
      assert.equal(await listingTag('tags/'), t0, 'stable while nothing changes');
      // A new member: on local disk the directory's mtime moves; on S3 the folder marker's time is the folder's own figure.
      await new Promise((r) => setTimeout(r, 20));
      await put('tags/two.txt', '2');
      if (storage === 'file') assert.notEqual(await listingTag('tags/'), t0, 'a direct member added changes it on local disk');
      const prop = await fetch(`${t.url}/dav/alice/tags/`, { method: 'PROPFIND', headers: { ...alice, depth: '0', 'content-type': 'application/xml' }, body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>' });
      assert.equal(prop.status, 207);
      const tag = /<D:getetag>([^<]*)<\/D:getetag>/.exec(await prop.text())?.[1]?.replaceAll('&quot;', '"');
      assert.equal(tag, await listingTag('tags/'), 'WebDAV and the listing agree');
    });
  });
}
