import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';
import { parseXml, type XmlElement } from '../../src/dav/xml.js';

const DAV = 'DAV:';
const kids = (el: XmlElement, local: string) => el.children.filter((c) => c.ns === DAV && c.local === local);
const kid = (el: XmlElement, local: string) => kids(el, local)[0];

/** A sync-collection REPORT body as RFC 6578 §3.8's example sends it. */
const body = (token: string, level: '1' | 'infinite') =>
  `<?xml version="1.0" encoding="utf-8" ?>
<D:sync-collection xmlns:D="DAV:">
  <D:sync-token>${token}</D:sync-token>
  <D:sync-level>${level}</D:sync-level>
  <D:prop>
    <D:getetag/>
  </D:prop>
</D:sync-collection>`;

type Answer = { token: string; changed: Map<string, string | undefined>; removed: string[] };

for (const [storage, skip] of BACKENDS) {
  describe(`WebDAV REPORT sync-collection (RFC 6578) on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice'], storage, flags: { indexInterval: '0' } });
      alice = bearer((await t.login('alice')).access_token);
    });
    after(() => t.close());

    const put = async (path: string, content: string) => {
      // The storage API makes the parents (a WebDAV PUT would need them first).
      const res = await fetch(`${t.url}/storage/alice/${encodePath(path)}`, { method: 'PUT', headers: { ...alice, 'content-type': 'application/octet-stream' }, body: content });
      assert.equal(res.status, 201);
    };
    const raw = (path: string, token: string, level: '1' | 'infinite', headers: Record<string, string> = {}) =>
      fetch(`${t.url}/dav/alice/${encodePath(path)}`, { method: 'REPORT', headers: { ...alice, 'content-type': 'application/xml; charset="utf-8"', depth: '0', ...headers }, body: body(token, level) });

    /** Checks the answer has the shape of RFC 6578 §3.8's: a multistatus of responses (propstat 200 or a 404 status) and the sync-token last. */
    const report = async (path: string, token: string, level: '1' | 'infinite'): Promise<Answer> => {
      const res = await raw(path, token, level);
      const text = await res.text();
      assert.equal(res.status, 207, text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/xml/);
      const root = parseXml(text);
      assert.equal(root.ns, DAV);
      assert.equal(root.local, 'multistatus');
      const last = root.children.at(-1) as XmlElement;
      assert.equal(last.local, 'sync-token', 'the sync-token follows the responses');
      assert.match(last.text, /^\S+:\S+$/, 'a URI');
      const changed = new Map<string, string | undefined>();
      const removed: string[] = [];
      for (const r of kids(root, 'response')) {
        const href = decodeURIComponent(kid(r, 'href')?.text ?? '');
        const status = kid(r, 'status');
        if (status) {
          assert.equal(status.text, 'HTTP/1.1 404 Not Found');
          assert.equal(kids(r, 'propstat').length, 0, 'a removed member has a status and no propstat');
          removed.push(href);
        } else {
          const ps = kid(r, 'propstat') as XmlElement;
          assert.equal(kid(ps, 'status')?.text, 'HTTP/1.1 200 OK');
          changed.set(href, kid(kid(ps, 'prop') as XmlElement, 'getetag')?.text);
        }
      }
      return { token: last.text, changed, removed };
    };
    const href = (p: string) => `/dav/alice/${p}`;

    test('initial sync lists the members; a second one gives what changed, removed members as 404; level 1 and infinite', async () => {
      await put('sync/a.txt', 'a');
      await put('sync/b.txt', 'b');
      assert.equal((await fetch(`${t.url}/dav/alice/sync/sub`, { method: 'MKCOL', headers: alice })).status, 201);
      await put('sync/sub/deep.txt', 'deep');
      const first1 = await report('sync/', '', '1');
      assert.deepEqual([...first1.changed.keys()].sort(), [href('sync/a.txt'), href('sync/b.txt'), href('sync/sub/')]);
      assert.deepEqual(first1.removed, []);
      const etagOfA = (await fetch(`${t.url}/dav/alice/sync/a.txt`, { method: 'HEAD', headers: alice })).headers.get('etag');
      assert.equal(first1.changed.get(href('sync/a.txt')), etagOfA);
      const firstInf = await report('sync/', '', 'infinite');
      assert.deepEqual([...firstInf.changed.keys()].sort(), [href('sync/a.txt'), href('sync/b.txt'), href('sync/sub/'), href('sync/sub/deep.txt')]);

      await put('sync/a.txt', 'a changed');
      await fetch(`${t.url}/dav/alice/sync/b.txt`, { method: 'DELETE', headers: alice });
      await put('sync/c.txt', 'new');
      await put('sync/sub/deep.txt', 'deeper change');
      await put('elsewhere.txt', 'not in the collection');

      const next1 = await report('sync/', first1.token, '1');
      assert.deepEqual([...next1.changed.keys()].sort(), [href('sync/a.txt'), href('sync/c.txt')], 'level 1: members only');
      assert.deepEqual(next1.removed, [href('sync/b.txt')]);
      const nextInf = await report('sync/', firstInf.token, 'infinite');
      assert.deepEqual([...nextInf.changed.keys()].sort(), [href('sync/a.txt'), href('sync/c.txt'), href('sync/sub/deep.txt')]);
      assert.deepEqual(nextInf.removed, [href('sync/b.txt')]);
      // Nothing since: an empty multistatus with a token.
      const idle = await report('sync/', nextInf.token, 'infinite');
      assert.equal(idle.changed.size + idle.removed.length, 0);
    });

    test('a folder moved in brings its contents at infinite depth; moved out is removed', async () => {
      await put('box/x.txt', 'x');
      await put('outside/y/z.txt', 'z');
      const start = await report('box/', '', 'infinite');
      const mv = (from: string, to: string) => fetch(`${t.url}/dav/alice/${from}`, { method: 'MOVE', headers: { ...alice, destination: `${t.url}/dav/alice/${to}` } });
      assert.equal((await mv('outside/y', 'box/y')).status, 201);
      assert.equal((await mv('box/x.txt', 'outside/x.txt')).status, 201);
      const next = await report('box/', start.token, 'infinite');
      assert.deepEqual([...next.changed.keys()].sort(), [href('box/y/'), href('box/y/z.txt')]);
      assert.deepEqual(next.removed, [href('box/x.txt')]);
    });

    test('bad requests: an unknown token 403 valid_sync_token, a bad level 400, Depth other than 0 400, a file 403', async () => {
      await put('file.txt', 'f');
      const bad = await raw('', 'urn:someone-else:1', '1');
      assert.equal(bad.status, 403);
      assert.equal(((await bad.json()) as { error: string }).error, 'valid_sync_token');
      assert.equal((await raw('', 'urn:file-cloud:sync:999999999999', '1')).status, 403);
      const level = await fetch(`${t.url}/dav/alice/`, { method: 'REPORT', headers: { ...alice, depth: '0' }, body: body('', '1').replace('<D:sync-level>1', '<D:sync-level>2') });
      assert.equal(level.status, 400);
      assert.equal((await raw('', '', '1', { depth: '1' })).status, 400);
      assert.equal((await raw('file.txt', '', '1')).status, 403);
    });
  });
}
