// File versions (issue 34, --versions; docs/api.md "Versions") on every backend: replacing a file (PUT,
// WebDAV PUT, restore_version) keeps its earlier content; ?versions lists them newest first, ?version=<id>
// downloads one, POST restore_version brings one back (the current content becoming a version in turn);
// versions count against the owner's quota; thinning by age against the server's clock (file and s3,
// where the clock can be set); with the flag off nothing is kept and ?versions answers 404.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, usersApi } from '../helpers/client.js';

type Version = { id: string; size: number; modified: string };

function client(t: () => TestApp, tokens: Record<string, string>) {
  const { req, json } = usersApi(() => t().url, tokens);
  const put = async (who: string, path: string, body: string) => assert.equal((await req(who, 'PUT', `/storage/${path}`, body, { 'content-type': 'application/octet-stream' })).status, 201);
  const versions = async (who: string, path: string) => (await json<{ versions: Version[] }>(await req(who, 'GET', `/storage/${path}?versions`), 200)).versions;
  const text = async (who: string, path: string) => {
    const res = await req(who, 'GET', `/storage/${path}`);
    assert.equal(res.status, 200);
    return res.text();
  };
  const used = async (who: string) => (await json<{ used: number }>(await req(who, 'GET', '/api/usage'), 200)).used;
  return { req, json, put, versions, text, used };
}

for (const [storage, skip] of BACKENDS) {
  describe(`file versions on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    const { req, json, put, versions, text, used } = client(() => t, tokens);
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: { versions: true } });
      for (const u of ['alice', 'bob']) tokens[u] = (await t.login(u)).access_token;
    });
    after(() => t?.close());

    test('a replaced file keeps its earlier contents: listed newest first, each downloadable, counted against the owner', async () => {
      await put('alice', 'alice/notes.txt', 'one');
      assert.deepEqual(await versions('alice', 'alice/notes.txt'), []);
      await put('alice', 'alice/notes.txt', 'two!');
      await put('alice', 'alice/notes.txt', 'three');
      const list = await versions('alice', 'alice/notes.txt');
      assert.deepEqual(list.map((v) => v.size), [4, 3]);
      assert.equal(await text('alice', 'alice/notes.txt'), 'three');
      const got = await req('alice', 'GET', `/storage/alice/notes.txt?version=${(list[1] as Version).id}`);
      assert.equal(got.status, 200);
      assert.equal(await got.text(), 'one');
      assert.equal(got.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(await used('alice'), 5 + 4 + 3);
    });

    test('restore_version brings a version back, and what the file held becomes a version itself', async () => {
      const [two, one] = (await versions('alice', 'alice/notes.txt')) as [Version, Version];
      assert.equal((await req('alice', 'POST', '/storage/alice/notes.txt', { action: 'restore_version', version: one.id })).status, 204);
      assert.equal(await text('alice', 'alice/notes.txt'), 'one');
      const list = await versions('alice', 'alice/notes.txt');
      assert.deepEqual(list.map((v) => v.size), [5, 4, 3]);
      assert.ok(list.some((v) => v.id === two.id));
    });

    test('a multipart PUT with ?overwrite=true keeps a version of each file it replaces', async () => {
      await put('alice', 'alice/m/one.txt', 'old one');
      const form = new FormData();
      form.append('f', new Blob(['new one']), 'one.txt');
      form.append('g', new Blob(['fresh']), 'two.txt');
      assert.equal((await fetch(`${t.url}/storage/alice/m/?overwrite=true`, { method: 'PUT', headers: bearer(tokens.alice as string), body: form })).status, 201);
      const [v] = (await versions('alice', 'alice/m/one.txt')) as [Version];
      assert.equal(await (await req('alice', 'GET', `/storage/alice/m/one.txt?version=${v.id}`)).text(), 'old one');
      assert.deepEqual(await versions('alice', 'alice/m/two.txt'), []);
    });

    test('a WebDAV PUT over a file keeps a version too', async () => {
      await put('alice', 'alice/dav.txt', 'before');
      assert.equal((await req('alice', 'PUT', '/dav/alice/dav.txt', 'after')).status, 204);
      const [v] = (await versions('alice', 'alice/dav.txt')) as [Version];
      assert.equal(await (await req('alice', 'GET', `/storage/alice/dav.txt?version=${v.id}`)).text(), 'before');
    });

    test('a resumable (tus) upload with overwrite keeps a version of the file it replaces; without overwrite nothing is replaced', async () => {
      await put('alice', 'alice/tus/report.txt', 'first draft');
      const b64 = (v: string) => Buffer.from(v).toString('base64');
      const upload = async (body: string, overwrite: boolean) => {
        const meta = `filename ${b64('report.txt')},folder ${b64('/alice/tus')}${overwrite ? `,overwrite ${b64('true')}` : ''}`;
        const made = await req('alice', 'POST', '/tus/', undefined, { 'tus-resumable': '1.0.0', 'upload-length': String(body.length), 'upload-metadata': meta });
        assert.equal(made.status, 201, await made.text());
        const done = await fetch(new URL(made.headers.get('location') as string, t.url), { method: 'PATCH', headers: { ...bearer(tokens.alice as string), 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body });
        assert.equal(done.status, 204, await done.text());
        return done.headers.get('file-cloud-path');
      };
      assert.equal(await upload('second draft', true), '/alice/tus/report.txt');
      const [v] = (await versions('alice', 'alice/tus/report.txt')) as [Version];
      assert.equal(await (await req('alice', 'GET', `/storage/alice/tus/report.txt?version=${v.id}`)).text(), 'first draft');
      assert.equal(await upload('a copy', false), '/alice/tus/report%20(1).txt');
      assert.equal((await versions('alice', 'alice/tus/report.txt')).length, 1);
    });

    test('a file replaced by a Move with overwrite, a WebDAV MOVE or a WebDAV COPY is kept as a version of the file that takes its place', async () => {
      for (const [name, how] of [['api-move', 'move'], ['dav-move', 'MOVE'], ['dav-copy', 'COPY']] as const) {
        await put('alice', `alice/r/${name}.txt`, `old ${name}`);
        await put('alice', `alice/r/${name}-new.txt`, `new ${name}`);
        const res = how === 'move'
          ? await req('alice', 'POST', `/storage/alice/r/${name}-new.txt`, { action: 'Move', new_path: `/alice/r/${name}.txt`, overwrite: true })
          : await req('alice', how, `/dav/alice/r/${name}-new.txt`, undefined, { destination: `${t.url}/dav/alice/r/${name}.txt`, overwrite: 'T' });
        assert.equal(res.status, how === 'move' ? 204 : 204, `${name}: ${await res.text()}`);
        assert.equal(await text('alice', `alice/r/${name}.txt`), `new ${name}`);
        const list = await versions('alice', `alice/r/${name}.txt`);
        assert.equal(list.length, 1, name);
        assert.equal(await (await req('alice', 'GET', `/storage/alice/r/${name}.txt?version=${(list[0] as Version).id}`)).text(), `old ${name}`);
      }
    });

    test('versions follow a rename and a folder move; a file deleted for good takes them along, and a new file at its path has none', async () => {
      await put('alice', 'alice/f/draft.txt', 'v1');
      await put('alice', 'alice/f/draft.txt', 'v2-');
      const before = await used('alice');
      assert.equal((await req('alice', 'POST', '/storage/alice/f/draft.txt', { action: 'Move', new_path: '/alice/f/final.txt' })).status, 204);
      assert.deepEqual((await versions('alice', 'alice/f/final.txt')).map((v) => v.size), [2]);
      assert.equal((await req('alice', 'POST', '/storage/alice/f', { action: 'Move', new_path: '/alice/g' })).status, 204);
      const [v] = (await versions('alice', 'alice/g/final.txt')) as [Version];
      assert.equal(await (await req('alice', 'GET', `/storage/alice/g/final.txt?version=${v.id}`)).text(), 'v1');
      await put('alice', 'alice/f/draft.txt', 'new');
      assert.deepEqual(await versions('alice', 'alice/f/draft.txt'), [], 'a new file at the old path');
      assert.equal((await req('alice', 'DELETE', '/storage/alice/g/final.txt')).status, 204);
      await put('alice', 'alice/g/final.txt', 'again');
      assert.deepEqual(await versions('alice', 'alice/g/final.txt'), [], 'a new file where one was deleted');
      assert.equal(await used('alice'), before - 3 - 2 + 3 + 5, 'the deleted file\'s version no longer counted');
    });

    test('errors: unknown or another file\'s version 404, a folder 409, another user 401, no restore without a version id 400', async () => {
      const [v] = (await versions('alice', 'alice/dav.txt')) as [Version];
      await json(await req('alice', 'GET', '/storage/alice/notes.txt?version=nope'), 404);
      await json(await req('alice', 'GET', `/storage/alice/notes.txt?version=${v.id}`), 404);
      await t.fs.mkdir('folder', 'alice');
      await json(await req('alice', 'GET', '/storage/alice/folder?versions'), 409);
      await json(await req('bob', 'GET', '/storage/alice/dav.txt?versions'), 401);
      await json(await req('bob', 'POST', '/storage/alice/dav.txt', { action: 'restore_version', version: v.id }), 401);
      await json(await req('alice', 'POST', '/storage/alice/dav.txt', { action: 'restore_version' }), 400);
      await json(await req('alice', 'POST', '/storage/alice/dav.txt', { action: 'restore_version', version: 'nope' }), 404);
    });
  });
}

for (const [storage, skip] of BACKENDS.filter(([s]) => s !== 'cluster')) {
  describe(`file version thinning on ${storage}`, { skip }, () => {
    let t: TestApp;
    let now = Date.parse('2026-01-01T00:00:00Z');
    const tokens: Record<string, string> = {};
    const { put, versions, used } = client(() => t, tokens);
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: { versions: true, versionsMaxDays: '2', accessTokenTtl: '864000' }, clock: { now: () => now } });
      tokens.alice = (await t.login('alice')).access_token;
    });
    after(() => t?.close());

    test('versions made in one 10 s slot past the first 10 s are thinned to the newest; --versions-max-days drops old ones', async () => {
      await put('alice', 'alice/t.txt', 'a');
      now += 1000;
      await put('alice', 'alice/t.txt', 'bb'); // keeps 'a' at +1 s
      now += 1000;
      await put('alice', 'alice/t.txt', 'ccc'); // keeps 'bb' at +2 s
      assert.deepEqual((await versions('alice', 'alice/t.txt')).map((v) => v.size), [2, 1]);
      now += 28_000;
      await put('alice', 'alice/t.txt', 'dddd'); // keeps 'ccc'; 'a' and 'bb' (29 s, 28 s old) share a slot
      assert.deepEqual((await versions('alice', 'alice/t.txt')).map((v) => v.size), [3, 2]);
      assert.equal(await used('alice'), 4 + 3 + 2);
      now += 3 * 86_400_000;
      await put('alice', 'alice/t.txt', 'eeeee'); // keeps 'dddd'; the rest are over 2 days old
      assert.deepEqual((await versions('alice', 'alice/t.txt')).map((v) => v.size), [4]);
      assert.equal(await used('alice'), 5 + 4);
    });
  });
}

for (const [storage, skip] of BACKENDS.filter(([s]) => s !== 'cluster')) {
  describe(`file versions off (the default) on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    const { req, json, put, used } = client(() => t, tokens);
    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      tokens.alice = (await t.login('alice')).access_token;
    });
    after(() => t?.close());

    test('a replace is final: nothing is kept, and ?versions answers 404', async () => {
      await put('alice', 'alice/x.txt', 'first');
      await put('alice', 'alice/x.txt', 'second!');
      assert.equal(await used('alice'), 7);
      await json(await req('alice', 'GET', '/storage/alice/x.txt?versions'), 404);
    });
  });
}

// Quota (issue 34): versions and trash count against the owner's quota, and the owner's upload that would
// pass it purges the oldest kept bytes first (versions and trash together, oldest first: issue 49 and
// test/security/safety-net.test.ts), and nothing when even all of them would not make it fit.
for (const [storage, skip] of BACKENDS) {
  describe(`versions and trash under a quota on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    const { req, json, put, versions, used } = client(() => t, tokens);
    const trash = async () => (await json<{ items: { name: string }[] }>(await req('alice', 'GET', '/api/trash'), 200)).items.map((i) => i.name);
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: { versions: true, trashDays: '30' } });
      tokens.alice = (await t.login('alice')).access_token;
      await t.store.usage.setQuota('alice', 100);
    });
    after(() => t?.close());

    test('an upload past the quota purges the oldest kept bytes as far as needed, and nothing when they cannot make it fit', async () => {
      const bytes = (n: number, c: string) => c.repeat(n);
      await put('alice', 'alice/v.txt', bytes(30, 'a'));
      await put('alice', 'alice/v.txt', bytes(30, 'b')); // a version of 30
      await put('alice', 'alice/t.txt', bytes(20, 't'));
      assert.equal((await req('alice', 'DELETE', '/storage/alice/t.txt')).status, 204); // 20 in the trash
      await put('alice', 'alice/u.txt', bytes(10, 'u'));
      assert.equal((await req('alice', 'DELETE', '/storage/alice/u.txt')).status, 204); // 10 more, newer
      assert.equal(await used('alice'), 90);
      assert.equal((await versions('alice', 'alice/v.txt')).length, 1);
      // 25 bytes: 10 free; the version (30) goes, the trash stays.
      await put('alice', 'alice/n1.txt', bytes(25, 'n'));
      assert.deepEqual(await versions('alice', 'alice/v.txt'), []);
      assert.deepEqual((await trash()).sort(), ['t.txt', 'u.txt']);
      assert.equal(await used('alice'), 85);
      // 20 bytes: 15 free; the oldest trash item (t.txt, 20) goes, the newer one stays.
      await put('alice', 'alice/n2.txt', bytes(20, 'm'));
      assert.deepEqual(await trash(), ['u.txt']);
      assert.equal(await used('alice'), 85);
      // More than everything kept could free: refused, and nothing kept is purged for it.
      const refused = await req('alice', 'PUT', '/storage/alice/big.bin', bytes(200, 'x'), { 'content-type': 'application/octet-stream' });
      assert.equal(refused.status, 507);
      assert.equal(((await refused.json()) as { error: string }).error, 'quota_exceeded');
      assert.equal(await t.fs.kind('big.bin', 'alice'), undefined);
      assert.deepEqual(await trash(), ['u.txt']);
    });
  });
}

// An account's trash and versions go with it: a new account of the same name starts with none.
for (const [storage, skip] of BACKENDS) {
  describe(`trash and versions of a removed account on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    const { req, json, put, versions } = client(() => t, tokens);
    before(async () => {
      t = await startApp({ storage, users: ['carol'], flags: { versions: true, trashDays: '30' } });
      await t.addUser('root', { admin: true });
      tokens.carol = (await t.login('carol')).access_token;
      tokens.root = (await t.login('root')).access_token;
    });
    after(() => t?.close());

    test('removing the account deletes its trash and versions; a new account of that name has none', async () => {
      await put('carol', 'carol/doc.txt', 'one');
      await put('carol', 'carol/doc.txt', 'two');
      assert.equal((await req('carol', 'DELETE', '/storage/carol/doc.txt')).status, 204);
      assert.equal((await json<{ items: unknown[] }>(await req('carol', 'GET', '/api/trash'), 200)).items.length, 1);
      assert.equal((await req('root', 'DELETE', '/api/admin/users/carol')).status, 204);
      await t.addUser('carol');
      tokens.carol = (await t.login('carol')).access_token;
      assert.deepEqual((await json<{ items: unknown[] }>(await req('carol', 'GET', '/api/trash'), 200)).items, []);
      await put('carol', 'carol/doc.txt', 'new');
      assert.deepEqual(await versions('carol', 'carol/doc.txt'), []);
      if (storage === 'file') {
        const { existsSync } = await import('node:fs');
        const { join } = await import('node:path');
        assert.ok(!existsSync(join(t.paths.root, 'trash', 'carol')));
        assert.ok(!existsSync(join(t.paths.root, 'versions', 'carol')));
      }
    });
  });
}
