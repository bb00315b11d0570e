import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { behindTheBack, indexCommand } from '../helpers/behind-the-back.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';

type Result = { path: string; name: string; is_file: boolean; size: number; modified: string };
type Answer = { results: Result[]; truncated: boolean };


for (const [storage, skip] of BACKENDS) {
  describe(`search on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    let bob: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage, flags: { indexInterval: '0' } });
      alice = bearer((await t.login('alice')).access_token);
      bob = bearer((await t.login('bob')).access_token);
    });
    after(() => t.close());

    const search = async (query: Record<string, string>, auth = alice): Promise<Answer> => {
      const res = await fetch(`${t.url}/api/search?${new URLSearchParams(query)}`, { headers: auth });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as Answer;
    };
    const paths = async (q: string, more: Record<string, string> = {}, auth = alice) => (await search({ q, ...more }, auth)).results.map((r) => r.path);
    const put = async (path: string, body: string, auth = alice, user = 'alice') => {
      const res = await fetch(`${t.url}/storage/${user}/${encodePath(path)}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body });
      assert.equal(res.status, 201, await res.clone().text());
    };

    test('correctness table: unicode, accents, case, % and _ literal; best matches first', async () => {
      for (const p of ['Café Crème.txt', 'cafe.md', 'Reports/2024 Übersicht.pdf', '日本語/写真.jpg', '100% sure.txt', '1000 sure.txt', 'a_b.txt', 'axb.txt', 'Reports/deep/report', 'report.txt']) await put(p, 'x');
      const table: [string, string[]][] = [
        ['CAFÉ', ['Café Crème.txt', 'cafe.md']],
        ['creme', ['Café Crème.txt']],
        ['ubersicht', ['Reports/2024 Übersicht.pdf']],
        ['ÜBERSICHT', ['Reports/2024 Übersicht.pdf']],
        ['写真', ['日本語/写真.jpg']],
        ['日本', ['日本語']],
        ['0%', ['100% sure.txt']],
        ['100%', ['100% sure.txt']],
        ['_', ['a_b.txt']],
        ['a_b', ['a_b.txt']],
        ['report', ['Reports/deep/report', 'report.txt', 'Reports']],
        ['nothing-like-this', []],
      ];
      for (const [q, want] of table) assert.deepEqual(await paths(q), want.map((p) => `/alice/${p}`), `q=${q}`);
      const [first] = (await search({ q: 'cafe.md' })).results;
      assert.deepEqual({ ...first, modified: typeof first?.modified }, { path: '/alice/cafe.md', name: 'cafe.md', is_file: true, size: 1, modified: 'string' });
      assert.ok(!Number.isNaN(Date.parse(first!.modified)));
      assert.equal((await search({ q: '日本' })).results[0]?.is_file, false);
    });

    test("another user's files are never returned, whatever the query or path", async () => {
      await put('bob-secret.txt', 'x', bob, 'bob');
      assert.deepEqual(await paths('secret'), []);
      assert.deepEqual(await paths('secret', {}, bob), ['/bob/bob-secret.txt']);
      const other = await fetch(`${t.url}/api/search?q=secret&path=/bob/`, { headers: alice });
      assert.equal(other.status, 401);
      assert.equal(((await other.json()) as { error: string }).error, 'unauthorized');
      assert.equal((await fetch(`${t.url}/api/search?q=secret`)).status, 401, 'no token');
    });

    test('path restricts to a subtree, type to files or folders, limit pages with truncated', async () => {
      await put('scope/in/plan-a.txt', 'x');
      await put('scope/plan-b.txt', 'x');
      await put('scope0/plan-c.txt', 'x');
      await put('plan-d.txt', 'x');
      assert.deepEqual(await paths('plan', { path: '/alice/scope' }), ['/alice/scope/plan-b.txt', '/alice/scope/in/plan-a.txt']);
      assert.deepEqual(await paths('plan', { path: '/alice/scope/in/' }), ['/alice/scope/in/plan-a.txt']);
      assert.deepEqual(await paths('plan', { path: '/alice/' }), ['/alice/plan-d.txt', '/alice/scope/plan-b.txt', '/alice/scope0/plan-c.txt', '/alice/scope/in/plan-a.txt']);
      assert.deepEqual(await paths('scope', { type: 'folder' }), ['/alice/scope', '/alice/scope0']);
      assert.deepEqual(await paths('scope', { type: 'file' }), []);
      const page = await search({ q: 'plan', limit: '2' });
      assert.equal(page.results.length, 2);
      assert.equal(page.truncated, true);
      assert.equal((await search({ q: 'plan', limit: '4' })).truncated, false);
    });

    test('bad input → 400 with the contract body; a missing folder → 404; a file as path → 409', async () => {
      const bad = ['', 'q=', 'q=a&limit=0', 'q=a&limit=1001', 'q=a&limit=x', 'q=a&type=dir', `q=${'x'.repeat(257)}`, 'q=%CC%81', 'q=a&path=/alice/../bob'];
      for (const qs of bad) {
        const res = await fetch(`${t.url}/api/search?${qs}`, { headers: alice });
        assert.equal(res.status, 400, qs);
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(typeof body.error, 'string', qs);
        assert.ok(body.message.length > 0, qs);
      }
      assert.equal((await fetch(`${t.url}/api/search?q=a&path=/alice/missing`, { headers: alice })).status, 404);
      assert.equal((await fetch(`${t.url}/api/search?q=a&path=/alice/cafe.md`, { headers: alice })).status, 409);
      assert.equal((await fetch(`${t.url}/api/search?q=a&limit=1000`, { headers: alice })).status, 200);
    });

    test('renamed, moved and deleted files and folders are reflected at once', async () => {
      await put('mv/inner/needle-one.txt', 'x');
      await put('mv/needle-two.txt', 'x');
      assert.deepEqual(await paths('needle'), ['/alice/mv/needle-two.txt', '/alice/mv/inner/needle-one.txt']);
      assert.equal((await postJson(`${t.url}/storage/alice/mv/needle-two.txt`, { action: 'Move', new_path: '/alice/mv/haystack.txt' }, alice)).status, 204);
      assert.deepEqual(await paths('needle'), ['/alice/mv/inner/needle-one.txt']);
      assert.deepEqual(await paths('haystack'), ['/alice/mv/haystack.txt']);
      assert.equal((await postJson(`${t.url}/storage/alice/mv`, { action: 'Move', new_path: '/alice/elsewhere/moved' }, alice)).status, 204);
      assert.deepEqual(await paths('needle'), ['/alice/elsewhere/moved/inner/needle-one.txt']);
      assert.deepEqual(await paths('elsewhere'), ['/alice/elsewhere'], 'the parent the move created is found');
      assert.deepEqual(await paths('inner'), ['/alice/elsewhere/moved/inner']);
      assert.equal((await fetch(`${t.url}/storage/alice/elsewhere/`, { method: 'DELETE', headers: alice })).status, 204);
      assert.deepEqual(await paths('needle'), []);
      assert.deepEqual(await paths('haystack'), []);
      assert.deepEqual(await paths('elsewhere'), []);
    });

    test('WebDAV writes (PUT, MKCOL, MOVE, COPY, DELETE) are reflected at once', async () => {
      const dav = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
        fetch(`${t.url}/dav/alice/${encodePath(path)}`, { method, headers: { ...alice, ...headers }, body });
      assert.equal((await dav('MKCOL', 'davdir')).status, 201);
      assert.equal((await dav('PUT', 'davdir/Wébdav Note.txt', {}, 'hello')).status, 201);
      assert.deepEqual(await paths('webdav note'), ['/alice/davdir/Wébdav Note.txt']);
      assert.equal((await search({ q: 'webdav note' })).results[0]?.size, 5);
      assert.equal((await dav('COPY', 'davdir', { destination: `${t.url}/dav/alice/davcopy` })).status, 201);
      assert.deepEqual(await paths('webdav note'), ['/alice/davcopy/Wébdav Note.txt', '/alice/davdir/Wébdav Note.txt']);
      assert.equal((await dav('MOVE', 'davdir/Wébdav Note.txt', { destination: `${t.url}/dav/alice/davdir/renamed.txt` })).status, 201);
      assert.deepEqual(await paths('renamed'), ['/alice/davdir/renamed.txt']);
      assert.deepEqual(await paths('webdav note'), ['/alice/davcopy/Wébdav Note.txt']);
      assert.equal((await dav('DELETE', 'davcopy')).status, 204);
      assert.deepEqual(await paths('webdav note'), []);
    });

    test('a tus upload is found as soon as its last byte is answered', async () => {
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      const res = await fetch(`${t.url}/tus/`, {
        method: 'POST',
        headers: {
          ...alice,
          'tus-resumable': '1.0.0',
          'upload-length': '6',
          'upload-metadata': `filename ${b64('Résumable Ünique.bin')},folder ${b64('/alice/tusdir')}`,
          'content-type': 'application/offset+octet-stream',
        },
        body: 'abcdef',
      });
      assert.equal(res.status, 201, await res.clone().text());
      assert.deepEqual(await paths('resumable unique'), ['/alice/tusdir/Résumable Ünique.bin']);
      assert.deepEqual(await paths('tusdir'), ['/alice/tusdir']);
    });

    test('a file a visitor uploads through an upload-only share link is found by its owner at once', async () => {
      assert.equal((await postJson(`${t.url}/storage/alice/inbox`, { action: 'CreateFolder' }, alice)).status, 201);
      const created = await postJson(`${t.url}/api/shares`, { path: '/alice/inbox', upload_only: true }, alice);
      assert.equal(created.status, 201);
      const { id } = (await created.json()) as { id: string };
      const { body, contentType } = multipartBody([{ filename: 'Visitor Ñote.txt', content: 'hello' }]);
      assert.equal((await fetch(`${t.url}/share/${id}/`, { method: 'PUT', headers: { 'content-type': contentType }, body })).status, 201);
      assert.deepEqual(await paths('visitor note'), ['/alice/inbox/Visitor Ñote.txt']);
    });

    test('files added or removed behind the server\'s back are found (and forgotten) after file-cloud index', async () => {
      await put('gone-later.txt', 'x');
      await behindTheBack(t, 'outside/Élan Vital.txt', 'abc');
      await behindTheBack(t, 'gone-later.txt', undefined);
      assert.deepEqual(await paths('elan vital'), [], 'not indexed yet: nothing told the server');
      const said = await indexCommand(t);
      assert.match(said, /Search index: \d+ entries of \d+ users rescanned, \d+ stale removed\./);
      assert.deepEqual(await paths('elan vital'), ['/alice/outside/Élan Vital.txt']);
      assert.deepEqual(await paths('gone-later'), []);
      assert.deepEqual(await paths('cafe'), ['/alice/Café Crème.txt', '/alice/cafe.md'], 'what was there stays');
      assert.deepEqual(await paths('secret', {}, bob), ['/bob/bob-secret.txt']);
    });
  });
}

for (const [storage, skip] of BACKENDS) {
  describe(`search's background rescan on ${storage}`, { skip }, () => {
    test('the server finds files put behind its back by itself (--index-interval 1)', async () => {
      const t = await startApp({ users: ['alice'], storage, flags: { indexInterval: '1' } });
      try {
        const auth = bearer((await t.login('alice')).access_token);
        await behindTheBack(t, 'dropped/Büro Plan.txt', 'x');
        const deadline = Date.now() + 20_000;
        let found: string[] = [];
        while (Date.now() < deadline) {
          const res = await fetch(`${t.url}/api/search?q=buro`, { headers: auth });
          found = ((await res.json()) as Answer).results.map((r) => r.path);
          if (found.length > 0) break;
          await new Promise((r) => setTimeout(r, 200));
        }
        assert.deepEqual(found, ['/alice/dropped/Büro Plan.txt']);
      } finally {
        await t.close();
      }
    });
  });
}
