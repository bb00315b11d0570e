// Grants (issue 29, docs/api.md "Grants") on every backend: sharing a folder or file with a user or a
// group; the recipient's access at /storage/<owner>/... and /dav/<owner>/... by permission; outside a grant
// the answers of another user's path; writes counted against the owner's quota; the grant following a
// rename and ending on delete, on leaving the group and on removal of the recipient — at once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, usersApi } from '../helpers/client.js';

type GrantView = { id: string; path: string; to: string; permission: string; created_at: string };
type Received = { id: string; path: string; owner: string; permission: string; is_file: boolean; groups: string[]; direct: boolean };

for (const [storage, skip] of BACKENDS) {
  describe(`grants on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob', 'carol', 'dave'] });
      await t.addUser('root', { admin: true });
      for (const u of ['alice', 'bob', 'carol', 'dave', 'root']) tokens[u] = (await t.login(u)).access_token;
      await t.fs.put('team/notes.txt', 'hello', 'alice');
      await t.fs.put('team/sub/deep.txt', 'deep', 'alice');
      await t.fs.put('private.txt', 'secret', 'alice');
      await t.fs.put('single.txt', 'one', 'alice');
    });
    after(() => t?.close());

    const { req } = usersApi(() => t.url, tokens);
    const status = async (res: Response) => {
      await res.arrayBuffer();
      return res.status;
    };
    const json = async <T>(res: Response, expected: number): Promise<T> => {
      const text = await res.text();
      assert.equal(res.status, expected, text);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    };
    const make = async (who: string, path: string, to: string, permission: 'read' | 'write') => json<GrantView>(await req(who, 'POST', '/api/grants', { path, to, permission }), 201);

    test('a read grant: the recipient reads and lists through the owner\'s path, and every write is refused with 403', async () => {
      const g = await make('alice', '/alice/team', 'user:bob', 'read');
      assert.deepEqual([g.path, g.to, g.permission], ['/alice/team', 'user:bob', 'read']);
      const file = await req('bob', 'GET', '/storage/alice/team/notes.txt');
      assert.equal(file.status, 200);
      assert.equal(await file.text(), 'hello');
      assert.equal(await status(await req('bob', 'GET', '/storage/alice/team/sub/deep.txt', undefined, { range: 'bytes=0-1' })), 206);
      const listing = await json<{ entries: { name: string }[] }>(await req('bob', 'GET', '/storage/alice/team/'), 200);
      assert.deepEqual(listing.entries.map((e) => e.name), ['sub', 'notes.txt']);
      assert.equal(await status(await req('bob', 'GET', '/storage/alice/team/?zip=1')), 200);
      for (const [method, path, body] of [
        ['PUT', '/storage/alice/team/new.txt', 'x'],
        ['DELETE', '/storage/alice/team/notes.txt'],
        ['POST', '/storage/alice/team/made', { action: 'CreateFolder' }],
        ['POST', '/storage/alice/team/notes.txt', { action: 'Move', new_path: '/alice/team/moved.txt' }],
      ] as [string, string, unknown][]) {
        assert.equal(await status(await req('bob', method, path, body)), 403, `${method} ${path}`);
      }
      assert.equal(await t.fs.kind('team/new.txt', 'alice'), undefined);
      assert.equal(await t.fs.kind('team/made', 'alice'), undefined);
      assert.equal(await t.fs.text('team/notes.txt', 'alice'), 'hello');
      // A path token is a read: the recipient makes one for a shared file, and it downloads it.
      const { token } = await json<{ token: string }>(await req('bob', 'POST', '/storage/alice/team/notes.txt', { action: 'MakePathToken' }), 200);
      const viaToken = await fetch(`${t.url}/storage/alice/team/notes.txt?token=${encodeURIComponent(token)}`);
      assert.equal(viaToken.status, 200);
      assert.equal(await viaToken.text(), 'hello');
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/private.txt', { action: 'MakePathToken' })), 401, 'outside the grant');
      // Outside the grant: exactly another user's path (401), whether or not it exists.
      for (const path of ['/storage/alice/private.txt', '/storage/alice/nothing.txt', '/storage/alice/', '/storage/carol/']) {
        const res = await req('bob', 'GET', path);
        assert.equal(res.status, 401, path);
        assert.equal(((await res.json()) as { error: string }).error, 'unauthorized');
      }
      // Someone the item is not shared with sees nothing either.
      assert.equal(await status(await req('carol', 'GET', '/storage/alice/team/notes.txt')), 401);
      const received = await json<{ grants: Received[] }>(await req('bob', 'GET', '/api/grants/received'), 200);
      assert.deepEqual(received.grants.map((r) => [r.path, r.owner, r.permission, r.is_file, r.groups, r.direct]), [['/alice/team', 'alice', 'read', false, [], true]]);
      const given = await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200);
      assert.deepEqual(given.grants.map((x) => x.id), [g.id]);
    });

    test('a write grant: upload, create, rename and delete inside, counted against the owner\'s quota; never the shared folder itself', async () => {
      const g = (await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200)).grants[0] as GrantView;
      const changed = await json<GrantView>(await req('alice', 'PATCH', `/api/grants/${g.id}`, { permission: 'write' }), 200);
      assert.equal(changed.permission, 'write');
      const before = await json<{ used: number }>(await req('alice', 'GET', '/api/usage'), 200);
      const bobBefore = await json<{ used: number }>(await req('bob', 'GET', '/api/usage'), 200);
      assert.equal(await status(await req('bob', 'PUT', '/storage/alice/team/from-bob.txt', '0123456789')), 201);
      const afterUse = await json<{ used: number }>(await req('alice', 'GET', '/api/usage'), 200);
      assert.equal(afterUse.used - before.used, 10, 'the owner pays for what a recipient writes');
      assert.equal((await json<{ used: number }>(await req('bob', 'GET', '/api/usage'), 200)).used, bobBefore.used);
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/team/made', { action: 'CreateFolder' })), 201);
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/team/from-bob.txt', { action: 'Move', new_path: '/alice/team/made/renamed.txt' })), 204);
      assert.equal(await t.fs.text('team/made/renamed.txt', 'alice'), '0123456789');
      // Out of the shared folder, or the folder itself: refused, nothing moved.
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/team/made/renamed.txt', { action: 'Move', new_path: '/alice/escaped.txt' })), 401);
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/team', { action: 'Move', new_path: '/alice/team/inner' })), 403);
      assert.equal(await status(await req('bob', 'DELETE', '/storage/alice/team')), 403);
      // A path token made through the grant names its maker; it reads exactly that path, without a session.
      const made = await json<{ token: string }>(await req('bob', 'POST', '/storage/alice/team/notes.txt', { action: 'MakePathToken' }), 200);
      assert.equal(await status(await req(undefined, 'GET', `/storage/alice/team/notes.txt?token=${encodeURIComponent(made.token)}`)), 200);
      assert.equal(await status(await req(undefined, 'GET', `/storage/alice/team/sub/deep.txt?token=${encodeURIComponent(made.token)}`)), 401);
      assert.equal(await status(await req(undefined, 'GET', `/storage/alice/private.txt?token=${encodeURIComponent(made.token)}`)), 401);
      assert.equal(await status(await req('bob', 'DELETE', '/storage/alice/team/made')), 204);
      assert.equal(await t.fs.kind('team/made', 'alice'), undefined);
      assert.equal(await t.fs.kind('team', 'alice'), 'folder');
    });

    test('a move between one\'s own tree and a writable grant: copied under the new owner\'s quota, then removed from the old', async () => {
      const used = async (who: string) => (await json<{ used: number }>(await req(who, 'GET', '/api/usage'), 200)).used;
      assert.equal(await status(await req('bob', 'PUT', '/storage/bob/mine/a.txt', '12345')), 201);
      assert.equal(await status(await req('bob', 'PUT', '/storage/bob/mine/b/c.txt', '678')), 201);
      const [alice0, bob0] = [await used('alice'), await used('bob')];
      assert.equal(await status(await req('bob', 'POST', '/storage/bob/mine', { action: 'Move', new_path: '/alice/team/from-bob' })), 204);
      assert.equal(await t.fs.text('team/from-bob/a.txt', 'alice'), '12345');
      assert.equal(await t.fs.text('team/from-bob/b/c.txt', 'alice'), '678');
      assert.equal(await t.fs.kind('mine', 'bob'), undefined);
      assert.deepEqual([(await used('alice')) - alice0, bob0 - (await used('bob'))], [8, 8]);
      // Back out of the shared folder into bob's own tree; a taken name needs overwrite.
      assert.equal(await status(await req('bob', 'PUT', '/storage/bob/taken.txt', 'old')), 201);
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/team/from-bob/a.txt', { action: 'Move', new_path: '/bob/taken.txt' })), 409);
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/team/from-bob/a.txt', { action: 'Move', new_path: '/bob/taken.txt', overwrite: true })), 204);
      assert.equal(await t.fs.text('taken.txt', 'bob'), '12345');
      assert.equal(await t.fs.kind('team/from-bob/a.txt', 'alice'), undefined);
      // Never the shared folder itself, nothing outside it, and nothing into someone else's tree.
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/team', { action: 'Move', new_path: '/bob/stolen' })), 403);
      assert.equal(await status(await req('bob', 'POST', '/storage/alice/private.txt', { action: 'Move', new_path: '/bob/stolen.txt' })), 401);
      assert.equal(await status(await req('bob', 'POST', '/storage/bob/taken.txt', { action: 'Move', new_path: '/carol/taken.txt' })), 401);
      assert.equal(await status(await req('bob', 'POST', '/storage/bob/taken.txt', { action: 'Move', new_path: '/alice/elsewhere.txt' })), 401);
      assert.equal(await t.fs.text('taken.txt', 'bob'), '12345');
      assert.equal(await status(await req('alice', 'DELETE', '/storage/alice/team/from-bob')), 204);
    });

    test('WebDAV: the recipient works in /dav/<owner>/<path> with the grant\'s permission', async () => {
      const dav = (who: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) => req(who, method, path, body, headers);
      const found = await dav('bob', 'PROPFIND', '/dav/alice/team/', { depth: '1' });
      assert.equal(found.status, 207);
      assert.match(await found.text(), /notes\.txt/);
      assert.equal(await status(await dav('bob', 'PUT', '/dav/alice/team/dav.txt', {}, 'via dav')), 201);
      assert.equal(await status(await dav('bob', 'MOVE', '/dav/alice/team/dav.txt', { destination: `${t.url}/dav/alice/team/sub/dav.txt` })), 201);
      assert.equal(await status(await dav('bob', 'MOVE', '/dav/alice/team/sub/dav.txt', { destination: `${t.url}/dav/alice/dav.txt` })), 403, 'outside the grant: a Destination outside one\'s storage');
      assert.equal(await status(await dav('bob', 'DELETE', '/dav/alice/team/')), 403);
      assert.equal(await status(await dav('bob', 'PROPFIND', '/dav/alice/', { depth: '0' })), 401);
      assert.equal(await t.fs.text('team/sub/dav.txt', 'alice'), 'via dav');
      // The same item in the mounted drive: /dav/Shared with me/team (alice)/, hrefs staying there.
      const hrefsOf = async (res: Response) => [...(await res.text()).matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]);
      const SW = '/dav/Shared%20with%20me/';
      assert.deepEqual(await hrefsOf(await dav('bob', 'PROPFIND', '/dav/', { depth: '1' })), ['/dav/', '/dav/bob/', SW]);
      assert.deepEqual(await hrefsOf(await dav('bob', 'PROPFIND', SW, { depth: '1' })), [SW, `${SW}team%20(alice)/`]);
      assert.deepEqual(await hrefsOf(await dav('carol', 'PROPFIND', SW, { depth: '1' })), [SW]);
      const inside = await hrefsOf(await dav('bob', 'PROPFIND', `${SW}team%20(alice)/`, { depth: '1' }));
      assert.deepEqual(inside.sort(), [`${SW}team%20(alice)/`, `${SW}team%20(alice)/notes.txt`, `${SW}team%20(alice)/sub/`].sort());
      const viaShared = await dav('bob', 'GET', `${SW}team%20(alice)/notes.txt`);
      assert.equal(await viaShared.text(), 'hello');
      assert.equal(await status(await dav('bob', 'PUT', `${SW}team%20(alice)/sub/mounted.txt`, {}, 'mounted')), 201);
      assert.equal(await status(await dav('bob', 'MOVE', `${SW}team%20(alice)/sub/mounted.txt`, { destination: `${t.url}${SW}team%20(alice)/moved.txt` })), 201);
      assert.equal(await t.fs.text('team/moved.txt', 'alice'), 'mounted');
      assert.equal(await status(await dav('bob', 'DELETE', `${SW}team%20(alice)/`)), 403);
      assert.equal(await status(await dav('bob', 'DELETE', `${SW}team%20(alice)/moved.txt`)), 204);
      assert.equal(await status(await dav('bob', 'PUT', SW, {}, 'x')), 405);
      assert.equal(await status(await dav('bob', 'GET', `${SW}nothing%20(alice)/`)), 404);
      assert.equal(await status(await dav('carol', 'GET', `${SW}team%20(alice)/notes.txt`)), 404);
      // Between bob's own tree and the shared folder: COPY and MOVE either way (copied, then removed).
      assert.equal(await status(await dav('bob', 'PUT', '/dav/bob/own.txt', {}, 'own')), 201);
      assert.equal(await status(await dav('bob', 'COPY', '/dav/bob/own.txt', { destination: `${t.url}/dav/alice/team/copied.txt` })), 201);
      assert.equal(await t.fs.text('team/copied.txt', 'alice'), 'own');
      assert.equal(await status(await dav('bob', 'MOVE', '/dav/alice/team/copied.txt', { destination: `${t.url}/dav/bob/back.txt` })), 201);
      assert.equal(await t.fs.kind('team/copied.txt', 'alice'), undefined);
      assert.equal(await t.fs.text('back.txt', 'bob'), 'own');
      assert.equal(await status(await dav('bob', 'MOVE', '/dav/bob/back.txt', { destination: `${t.url}${SW}team%20(alice)/via-shared.txt` })), 201);
      assert.equal(await t.fs.kind('back.txt', 'bob'), undefined);
      assert.equal(await t.fs.text('team/via-shared.txt', 'alice'), 'own');
      assert.equal(await status(await dav('bob', 'COPY', '/dav/bob/own.txt', { destination: `${t.url}/dav/carol/own.txt` })), 403);
      assert.equal(await status(await dav('bob', 'COPY', '/dav/bob/own.txt', { destination: `${t.url}/dav/alice/own.txt` })), 403);
      assert.equal(await status(await dav('bob', 'MOVE', '/dav/alice/team', { destination: `${t.url}/dav/bob/team` })), 403);
      assert.equal(await status(await dav('bob', 'DELETE', `${SW}team%20(alice)/via-shared.txt`)), 204);
      const g = (await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200)).grants[0] as GrantView;
      await json(await req('alice', 'PATCH', `/api/grants/${g.id}`, { permission: 'read' }), 200);
      assert.equal(await status(await dav('bob', 'PUT', '/dav/alice/team/dav2.txt', {}, 'no')), 403);
      assert.equal(await status(await dav('bob', 'PUT', '/dav/Shared%20with%20me/team%20(alice)/dav2.txt', {}, 'no')), 403);
      assert.equal(await status(await dav('bob', 'GET', '/dav/alice/team/sub/dav.txt')), 200);
    });

    test('WebDAV: two shared items of one owner with the same name both show, each named with its folder', async () => {
      await t.fs.put('2025/minutes.txt', 'old', 'alice');
      await t.fs.put('work/2026/minutes.txt', 'new', 'alice');
      const grants = [await make('alice', '/alice/2025/minutes.txt', 'user:dave', 'read'), await make('alice', '/alice/work/2026/minutes.txt', 'user:dave', 'read')];
      try {
        const SW = '/dav/Shared%20with%20me/';
        const hrefs = [...(await (await req('dave', 'PROPFIND', SW, undefined, { depth: '1' })).text()).matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => decodeURIComponent(m[1] as string));
        assert.deepEqual(hrefs.sort(), ['/dav/Shared with me/', '/dav/Shared with me/minutes.txt (alice, 2025)', '/dav/Shared with me/minutes.txt (alice, work › 2026)']);
        for (const [name, body] of [['minutes.txt (alice, 2025)', 'old'], ['minutes.txt (alice, work › 2026)', 'new']]) {
          const res = await req('dave', 'GET', `${SW}${encodeURIComponent(name as string)}`);
          assert.equal(res.status, 200);
          assert.equal(await res.text(), body);
        }
        // One left: its plain name again.
        assert.equal(await status(await req('alice', 'DELETE', `/api/grants/${grants[0]?.id}`)), 204);
        const left = [...(await (await req('dave', 'PROPFIND', SW, undefined, { depth: '1' })).text()).matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => decodeURIComponent(m[1] as string));
        assert.deepEqual(left.sort(), ['/dav/Shared with me/', '/dav/Shared with me/minutes.txt (alice)']);
      } finally {
        for (const g of grants) await status(await req('alice', 'DELETE', `/api/grants/${g.id}`));
      }
    });

    test('search finds what is shared with the caller, in /<owner>/<path> form, and nothing else of the owner\'s', async () => {
      type Found = { results: { path: string }[] };
      // Through the server, so its index has them on every backend.
      for (const path of ['team/quarterly-report.txt', 'team/sub/yearly-report.txt', 'hidden-report.txt']) {
        assert.equal(await status(await req('alice', 'PUT', `/storage/alice/${path}`, 'r')), 201);
      }
      const paths = async (who: string, query: string) => (await json<Found>(await req(who, 'GET', `/api/search?${query}`), 200)).results.map((r) => r.path).sort();
      assert.deepEqual(await paths('bob', 'q=report'), ['/alice/team/quarterly-report.txt', '/alice/team/sub/yearly-report.txt']);
      assert.deepEqual(await paths('bob', 'q=team'), ['/alice/team'], 'the shared folder itself');
      assert.deepEqual(await paths('bob', `q=report&path=${encodeURIComponent('/alice/team/sub')}`), ['/alice/team/sub/yearly-report.txt']);
      assert.deepEqual(await paths('alice', 'q=report'), ['/alice/hidden-report.txt', '/alice/team/quarterly-report.txt', '/alice/team/sub/yearly-report.txt']);
      assert.equal(await status(await req('bob', 'GET', `/api/search?q=report&path=${encodeURIComponent('/alice/')}`)), 401);
      assert.equal(await status(await req('carol', 'GET', `/api/search?q=report&path=${encodeURIComponent('/alice/team')}`)), 401);
      assert.deepEqual(await paths('carol', 'q=report'), []);
    });

    test('tus: a writable grant takes resumable uploads into the folder (the owner\'s quota); read-only, outside, and after revocation: refused', async () => {
      const TUS = { 'tus-resumable': '1.0.0' };
      const meta = (folder: string, name: string) => `filename ${Buffer.from(name).toString('base64')},folder ${Buffer.from(folder).toString('base64')}`;
      const create = (who: string, folder: string, name: string, length: number) =>
        req(who, 'POST', '/tus/', undefined, { ...TUS, 'upload-length': String(length), 'upload-metadata': meta(folder, name) });
      // bob's grant of team/ is read-only at this point (the WebDAV test set it back).
      assert.equal(await status(await create('bob', '/alice/team', 'r.txt', 1)), 403);
      assert.equal(await status(await create('bob', '/alice/', 'r.txt', 1)), 401);
      assert.equal(await status(await create('carol', '/alice/team', 'r.txt', 1)), 401);
      const g = (await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200)).grants.find((x) => x.path === '/alice/team') as GrantView;
      await json(await req('alice', 'PATCH', `/api/grants/${g.id}`, { permission: 'write' }), 200);
      const before = (await json<{ used: number }>(await req('alice', 'GET', '/api/usage'), 200)).used;
      const made = await create('bob', '/alice/team/sub', 'resumed.txt', 6);
      assert.equal(made.status, 201, await made.text());
      const url = made.headers.get('location') as string;
      const patch = (who: string, offset: number, body: string) =>
        fetch(new URL(url, t.url), { method: 'PATCH', headers: { ...TUS, ...bearer(tokens[who] as string), 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body });
      assert.equal(await status(await patch('alice', 0, 'abc')), 404, 'the upload answers only its sender');
      assert.equal(await status(await patch('bob', 0, 'abc')), 204);
      const done = await patch('bob', 3, 'def');
      assert.equal(done.status, 204);
      assert.equal(done.headers.get('file-cloud-path'), '/alice/team/sub/resumed.txt');
      assert.equal(await t.fs.text('team/sub/resumed.txt', 'alice'), 'abcdef');
      assert.equal((await json<{ used: number }>(await req('alice', 'GET', '/api/usage'), 200)).used - before, 6, 'the owner pays');
      // Revoked in the middle of an upload: the rest is refused, nothing appears.
      const second = await create('bob', '/alice/team', 'cut.txt', 4);
      assert.equal(second.status, 201);
      const cut = second.headers.get('location') as string;
      await json(await req('alice', 'PATCH', `/api/grants/${g.id}`, { permission: 'read' }), 200);
      const rest = await fetch(new URL(cut, t.url), { method: 'PATCH', headers: { ...TUS, ...bearer(tokens.bob as string), 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: 'abcd' });
      assert.equal(rest.status, 404);
      assert.equal(await t.fs.kind('team/cut.txt', 'alice'), undefined);
    });

    test('a grant follows its folder when the owner renames it, and ends when the owner deletes it', async () => {
      assert.equal(await status(await req('alice', 'POST', '/storage/alice/team', { action: 'Move', new_path: '/alice/renamed-team' })), 204);
      assert.equal(await status(await req('bob', 'GET', '/storage/alice/renamed-team/notes.txt')), 200);
      assert.equal(await status(await req('bob', 'GET', '/storage/alice/team/notes.txt')), 401);
      const given = await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200);
      assert.deepEqual(given.grants.map((g) => g.path), ['/alice/renamed-team']);
      assert.equal(await status(await req('alice', 'DELETE', '/storage/alice/renamed-team')), 204);
      assert.deepEqual((await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200)).grants, []);
      assert.deepEqual((await json<{ grants: Received[] }>(await req('bob', 'GET', '/api/grants/received'), 200)).grants, []);
      // A new folder of the same name is not shared.
      await t.fs.put('renamed-team/again.txt', 'again', 'alice');
      assert.equal(await status(await req('bob', 'GET', '/storage/alice/renamed-team/again.txt')), 401);
    });

    test('a group grant reaches members; leaving the group ends it at once; a removed group ends it too', async () => {
      await json(await req('root', 'POST', '/api/admin/groups', { name: 'editors', members: ['carol', 'dave'] }), 201);
      await t.fs.put('shared/doc.txt', 'doc', 'alice');
      const g = await make('alice', '/alice/shared', 'group:editors', 'write');
      assert.equal(g.to, 'group:editors');
      assert.equal(await status(await req('carol', 'GET', '/storage/alice/shared/doc.txt')), 200);
      assert.equal(await status(await req('dave', 'PUT', '/storage/alice/shared/dave.txt', 'd')), 201);
      const { token } = await json<{ token: string }>(await req('carol', 'POST', '/storage/alice/shared/doc.txt', { action: 'MakePathToken' }), 200);
      const byToken = () => req(undefined, 'GET', `/storage/alice/shared/doc.txt?token=${encodeURIComponent(token)}`);
      assert.equal(await status(await byToken()), 200);
      // A member cannot remove the group's grant from the list; only the owner ends it.
      assert.equal(await status(await req('carol', 'DELETE', `/api/grants/${g.id}`)), 403);
      await json(await req('root', 'PATCH', '/api/admin/groups/editors', { remove: ['carol'] }), 200);
      assert.equal(await status(await req('carol', 'GET', '/storage/alice/shared/doc.txt')), 401, 'a former member');
      assert.equal(await status(await byToken()), 401, 'her path token ends with her membership');
      assert.equal(await status(await req('dave', 'GET', '/storage/alice/shared/doc.txt')), 200);
      assert.equal(await status(await req('root', 'DELETE', '/api/admin/groups/editors')), 204);
      assert.equal(await status(await req('dave', 'GET', '/storage/alice/shared/doc.txt')), 401);
      assert.deepEqual((await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200)).grants, []);
    });

    test('received: says which of one\'s groups an item comes through, and whether it is also shared with one by name', async () => {
      await json(await req('root', 'POST', '/api/admin/groups', { name: 'viewers', members: ['carol', 'dave'] }), 201);
      await json(await req('root', 'POST', '/api/admin/groups', { name: 'writers', members: ['carol'] }), 201);
      try {
        await t.fs.put('via/doc.txt', 'doc', 'alice');
        await make('alice', '/alice/via', 'group:viewers', 'read');
        await make('alice', '/alice/via', 'group:writers', 'write');
        const mine = async (who: string) => (await json<{ grants: Received[] }>(await req(who, 'GET', '/api/grants/received'), 200)).grants.filter((r) => r.path === '/alice/via');
        assert.deepEqual((await mine('carol')).map((r) => [r.permission, r.groups, r.direct]), [['write', ['viewers', 'writers'], false]]);
        assert.deepEqual((await mine('dave')).map((r) => [r.permission, r.groups, r.direct]), [['read', ['viewers'], false]]);
        await make('alice', '/alice/via', 'user:dave', 'read');
        assert.deepEqual((await mine('dave')).map((r) => [r.permission, r.groups, r.direct]), [['read', ['viewers'], true]]);
      } finally {
        for (const g of ['viewers', 'writers']) await req('root', 'DELETE', `/api/admin/groups/${g}`);
      }
    });

    test('a file grant; a recipient removes it from their list; bad requests change nothing', async () => {
      const g = await make('alice', '/alice/single.txt', 'user:carol', 'read');
      assert.equal(await status(await req('carol', 'GET', '/storage/alice/single.txt')), 200);
      assert.equal(await status(await req('carol', 'GET', '/storage/alice/single.txt/')), 404);
      assert.equal(await status(await req('bob', 'DELETE', `/api/grants/${g.id}`)), 404, 'not bob\'s');
      assert.equal(await status(await req('bob', 'PATCH', `/api/grants/${g.id}`, { permission: 'write' })), 404);
      assert.equal(await status(await req('carol', 'PATCH', `/api/grants/${g.id}`, { permission: 'write' })), 404, 'only the owner changes it');
      assert.equal(await status(await req('carol', 'DELETE', `/api/grants/${g.id}`)), 204);
      assert.equal(await status(await req('carol', 'GET', '/storage/alice/single.txt')), 401);
      for (const body of [
        { path: '/alice/single.txt', to: 'user:alice', permission: 'read' },
        { path: '/alice/', to: 'user:bob', permission: 'read' },
        { path: '/alice/single.txt', to: 'user:nobody', permission: 'read' },
        { path: '/alice/single.txt', to: 'group:nogroup', permission: 'read' },
        { path: '/alice/single.txt', to: 'bob', permission: 'read' },
        { path: '/alice/single.txt', to: 'user:bob', permission: 'admin' },
        { path: '/alice/single.txt', to: 'user:bob' },
        { path: '/alice/../x', to: 'user:bob', permission: 'read' },
      ]) {
        assert.equal(await status(await req('alice', 'POST', '/api/grants', body)), 400, JSON.stringify(body));
      }
      assert.equal(await status(await req('alice', 'POST', '/api/grants', { path: '/alice/none.txt', to: 'user:bob', permission: 'read' })), 404);
      assert.equal(await status(await req('bob', 'POST', '/api/grants', { path: '/alice/single.txt', to: 'user:bob', permission: 'read' })), 401);
      await make('alice', '/alice/single.txt', 'user:bob', 'read');
      assert.equal(await status(await req('alice', 'POST', '/api/grants', { path: '/alice/single.txt', to: 'user:bob', permission: 'write' })), 409);
      assert.equal(await status(await req(undefined, 'GET', '/api/grants')), 401);
    });

    test('removing the recipient or the owner ends their grants', async () => {
      await make('alice', '/alice/private.txt', 'user:dave', 'read');
      assert.equal(await status(await req('dave', 'GET', '/storage/alice/private.txt')), 200);
      await json(await req('root', 'DELETE', '/api/admin/users/dave'), 204);
      const given = await json<{ grants: GrantView[] }>(await req('alice', 'GET', '/api/grants'), 200);
      assert.equal(given.grants.some((g) => g.to === 'user:dave'), false);
      await json(await req('root', 'DELETE', '/api/admin/users/alice'), 204);
      assert.deepEqual((await json<{ grants: Received[] }>(await req('bob', 'GET', '/api/grants/received'), 200)).grants, []);
    });
  });
}
