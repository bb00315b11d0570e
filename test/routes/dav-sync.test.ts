import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';
import { parseXml, type XmlElement } from '../../src/dav/xml.js';

const DAV = 'DAV:';
const kids = (el: XmlElement, local: string) => el.children.filter((c) => c.ns === DAV && c.local === local);
const kid = (el: XmlElement, local: string) => kids(el, local)[0];

/** A sync-collection REPORT body as RFC 6578 §3.8's example sends it (with §3.7's DAV:limit when given). */
const body = (token: string, level: '1' | 'infinite', nresults?: number | string) =>
  `<?xml version="1.0" encoding="utf-8" ?>
<D:sync-collection xmlns:D="DAV:">
  <D:sync-token>${token}</D:sync-token>
  <D:sync-level>${level}</D:sync-level>${nresults === undefined ? '' : `
  <D:limit><D:nresults>${nresults}</D:nresults></D:limit>`}
  <D:prop>
    <D:getetag/>
  </D:prop>
</D:sync-collection>`;

type Answer = { token: string; changed: Map<string, string | undefined>; removed: string[]; truncated: boolean };

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
    const raw = (path: string, token: string, level: '1' | 'infinite', headers: Record<string, string> = {}, nresults?: number | string) =>
      fetch(`${t.url}/dav/alice/${encodePath(path)}`, { method: 'REPORT', headers: { ...alice, 'content-type': 'application/xml; charset="utf-8"', depth: '0', ...headers }, body: body(token, level, nresults) });

    /** Checks the answer has the shape of RFC 6578 §3.8's: a multistatus of responses (propstat 200 or a 404 status) and the sync-token last. */
    const report = async (path: string, token: string, level: '1' | 'infinite', nresults?: number): Promise<Answer> => {
      const res = await raw(path, token, level, {}, nresults);
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
      let truncated = false;
      for (const r of kids(root, 'response')) {
        const href = decodeURIComponent(kid(r, 'href')?.text ?? '');
        const status = kid(r, 'status');
        if (status?.text === 'HTTP/1.1 507 Insufficient Storage') {
          // RFC 6578 §3.6: the request-URI itself, saying the answer was cut short.
          assert.equal(href, `/dav/alice/${path}`);
          assert.ok(kid(r, 'error') && kid(kid(r, 'error') as XmlElement, 'number-of-matches-within-limits'), 'the precondition is named');
          assert.equal(truncated, false, 'one truncation mark');
          truncated = true;
        } else if (status) {
          assert.equal(status.text, 'HTTP/1.1 404 Not Found');
          assert.equal(kids(r, 'propstat').length, 0, 'a removed member has a status and no propstat');
          removed.push(href);
        } else {
          const ps = kid(r, 'propstat') as XmlElement;
          assert.equal(kid(ps, 'status')?.text, 'HTTP/1.1 200 OK');
          changed.set(href, kid(kid(ps, 'prop') as XmlElement, 'getetag')?.text);
        }
      }
      return { token: last.text, changed, removed, truncated };
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

    test('DAV:limit (RFC 6578 §3.7): answers cut at N members, marked 507 on the collection, the token continuing; nothing lost', async () => {
      await put('lim/seed.txt', 'seed');
      const start = await report('lim/', '', 'infinite');
      const names = Array.from({ length: 7 }, (_, i) => `lim/f${i}.txt`);
      for (const n of names) await put(n, n);
      await fetch(`${t.url}/dav/alice/lim/seed.txt`, { method: 'DELETE', headers: alice });
      await put('lim/f0.txt', 'changed again');
      // Without a limit: every change at once.
      const whole = await report('lim/', start.token, 'infinite');
      assert.equal(whole.truncated, false);
      assert.deepEqual([...whole.changed.keys()].sort(), names.map(href).sort());
      assert.deepEqual(whole.removed, [href('lim/seed.txt')]);
      // With nresults 3: pages of at most 3, every one but the last marked truncated, together the same.
      let token = start.token;
      const changed = new Set<string>();
      const removed = new Set<string>();
      let rounds = 0;
      for (;;) {
        const page = await report('lim/', token, 'infinite', 3);
        assert.ok(page.changed.size + page.removed.length <= 3, `at most 3 members, got ${page.changed.size + page.removed.length}`);
        for (const h of page.changed.keys()) changed.add(h);
        for (const h of page.removed) removed.add(h);
        assert.notEqual(page.token, token, 'each page moves the token on');
        token = page.token;
        rounds++;
        assert.ok(rounds <= 10, 'the pages end');
        if (!page.truncated) break;
        assert.ok(page.changed.size + page.removed.length > 0, 'a truncated page reports something');
      }
      assert.ok(rounds >= 3, `${rounds} pages for 8 members in threes`);
      assert.deepEqual([...changed].sort(), names.map(href).sort());
      assert.deepEqual([...removed], [href('lim/seed.txt')]);
      // Caught up: the last token gives nothing more.
      const after = await report('lim/', token, 'infinite', 3);
      assert.equal(after.changed.size + after.removed.length, 0);
      assert.equal(after.truncated, false);
    });

    test('DAV:limit on a first sync over it: 507 number_of_matches_within_limits; a bad DAV:nresults 400', async () => {
      for (const n of ['a', 'b', 'c']) await put(`first/${n}.txt`, n);
      const over = await raw('first/', '', '1', {}, 2);
      assert.equal(over.status, 507);
      assert.equal(((await over.json()) as { error: string }).error, 'number_of_matches_within_limits');
      const fits = await report('first/', '', '1', 3);
      assert.equal(fits.changed.size, 3);
      assert.equal(fits.truncated, false);
      for (const bad of ['0', '-1', 'x', '']) {
        const res = await raw('first/', '', '1', {}, bad);
        assert.equal(res.status, 400, `nresults ${JSON.stringify(bad)}`);
        assert.equal(((await res.json()) as { error: string }).error, 'bad_request');
      }
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
