// The owner's safety net (issue 49, findings 1 and 6; docs/security.md "The owner's safety net") on every
// backend. An upload that does not fit the owner's quota may purge the owner's kept bytes (old versions and
// the trash) only when it is the owner's own, only when the purge makes it fit (decided before anything is
// purged), only as much as needed and oldest first across versions and trash together. A grantee's or a
// share link visitor's upload that does not fit gets 507, touches nothing, and learns none of the owner's
// figures. An overwriting Move, WebDAV MOVE or COPY keeps what it replaces (a version, or the trash),
// whoever does it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { usersApi } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';

type Item = { id: string; path: string; name: string; size: number };
const OCTETS = { 'content-type': 'application/octet-stream' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

for (const [storage, skip] of BACKENDS) {
  describe(`the owner's safety net on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    const { req, json } = usersApi(() => t.url, tokens);
    const put = async (who: string, path: string, body: string) => {
      const res = await req(who, 'PUT', `/storage/${path}`, body, OCTETS);
      assert.equal(res.status, 201, await res.text());
    };
    const trash = async (who: string) => (await json<{ items: Item[] }>(await req(who, 'GET', '/api/trash'), 200)).items;
    const versions = async (who: string, path: string) => (await json<{ versions: { id: string; size: number }[] }>(await req(who, 'GET', `/storage/${path}?versions`), 200)).versions;
    const used = async (who: string) => (await json<{ used: number }>(await req(who, 'GET', '/api/usage'), 200)).used;
    const del = async (who: string, path: string) => assert.equal((await req(who, 'DELETE', `/storage/${path}`)).status, 204);
    /** The server stamps versions and trash items with its clock in ms: the next one must be later. */
    const tick = () => sleep(5);
    /** The owner's kept bytes as they stand: versions of `file` and the trash's names. */
    const kept = async (who: string, file: string) => ({ versions: (await versions(who, file)).length, trash: (await trash(who)).map((i) => i.name).sort(), used: await used(who) });
    /** A 507 quota_exceeded whose message names none of the owner's figures. */
    const refusedBlind = async (res: Response, what: string) => {
      const text = await res.text();
      assert.equal(res.status, 507, `${what}: ${text}`);
      const body = JSON.parse(text) as { error: string; message: string };
      assert.equal(body.error, 'quota_exceeded', what);
      assert.doesNotMatch(body.message, /\d|quota/i, `${what}: the owner's figures stay unsaid (${body.message})`);
    };

    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob', 'carol', 'dave'], flags: { versions: true, trashDays: '30' } });
      for (const u of ['alice', 'bob', 'carol', 'dave']) tokens[u] = (await t.login(u)).access_token;
    });
    after(() => t?.close());

    test('the owner\'s upload purges oldest first across trash and versions together, only as much as needed', async () => {
      await t.store.usage.setQuota('alice', 100);
      await put('alice', 'alice/old.txt', 't'.repeat(20));
      await del('alice', 'alice/old.txt'); // 20 in the trash, the oldest kept item
      await tick();
      await put('alice', 'alice/v.txt', 'a'.repeat(30));
      await put('alice', 'alice/v.txt', 'b'.repeat(30)); // a version of 30, newer than the trash item
      await tick();
      await put('alice', 'alice/newer.txt', 'n'.repeat(10));
      await del('alice', 'alice/newer.txt'); // 10 more in the trash, the newest
      assert.deepEqual(await kept('alice', 'alice/v.txt'), { versions: 1, trash: ['newer.txt', 'old.txt'], used: 90 });
      // 25 bytes with 10 free: 15 must go. The month-old trashed file goes before the day-old version.
      await put('alice', 'alice/n1.txt', 'x'.repeat(25));
      assert.deepEqual(await kept('alice', 'alice/v.txt'), { versions: 1, trash: ['newer.txt'], used: 95 });
      // 30 bytes with 5 free: 25 must go; the version (30) is next oldest and is enough, the newer trash stays.
      await put('alice', 'alice/n2.txt', 'y'.repeat(30));
      assert.deepEqual(await kept('alice', 'alice/v.txt'), { versions: 0, trash: ['newer.txt'], used: 95 });
    });

    test('an upload that even every kept byte would not make fit purges nothing (507, the owner\'s figures named)', async () => {
      await t.store.usage.setQuota('alice', 100);
      const before = await kept('alice', 'alice/v.txt');
      assert.deepEqual(before.trash, ['newer.txt']);
      const res = await req('alice', 'PUT', '/storage/alice/big.bin', 'z'.repeat(200), OCTETS);
      const body = (await res.json()) as { error: string; message: string };
      assert.equal(res.status, 507);
      assert.equal(body.error, 'quota_exceeded');
      assert.match(body.message, /100 B/, 'the owner learns their own quota');
      assert.deepEqual(await kept('alice', 'alice/v.txt'), before, 'the trash and the versions are untouched');
      assert.equal(await t.fs.kind('big.bin', 'alice'), undefined);
    });

    test('a write grantee\'s and a share visitor\'s uploads that do not fit get 507 by every front end and purge nothing', async () => {
      // carol: 30 live, a version of 30, 20 in the trash = 80 of 100; 20 free.
      await put('carol', 'carol/junk.txt', 'j'.repeat(20));
      await del('carol', 'carol/junk.txt');
      await tick();
      await put('carol', 'carol/team/doc.txt', 'a'.repeat(30));
      await put('carol', 'carol/team/doc.txt', 'b'.repeat(30));
      await t.store.usage.setQuota('carol', 100);
      assert.equal((await req('carol', 'POST', '/api/grants', { path: '/carol/team', to: 'user:bob', permission: 'write' })).status, 201);
      assert.equal((await req('carol', 'POST', '/storage/carol/drop', { action: 'CreateFolder' })).status, 201);
      const share = await json<{ id: string }>(await req('carol', 'POST', '/api/shares', { path: '/carol/drop', upload_only: true }), 201);
      await put('bob', 'bob/big.bin', 'B'.repeat(30));
      const before = await kept('carol', 'carol/team/doc.txt');
      assert.deepEqual(before, { versions: 1, trash: ['junk.txt'], used: 80 });

      const thirty = 'G'.repeat(30);
      const form = multipartBody([{ filename: 'g.bin', content: thirty }]);
      await refusedBlind(await req('bob', 'PUT', '/storage/carol/team/raw.bin', thirty, OCTETS), 'raw PUT');
      await refusedBlind(await req('bob', 'PUT', '/storage/carol/team/', form.body.toString('latin1'), { 'content-type': form.contentType }), 'multipart PUT');
      await refusedBlind(await req('bob', 'PUT', '/storage/carol/team/doc.txt', thirty, OCTETS), 'a raw PUT replacing the owner\'s file (kept as a version: it frees nothing)');
      await refusedBlind(await req('bob', 'PUT', '/dav/carol/team/dav.bin', thirty, OCTETS), 'WebDAV PUT');
      await refusedBlind(await req('bob', 'COPY', '/dav/bob/big.bin', undefined, { destination: `${t.url}/dav/carol/team/copied.bin` }), 'WebDAV COPY');
      await refusedBlind(await req('bob', 'MOVE', '/dav/bob/big.bin', undefined, { destination: `${t.url}/dav/carol/team/moved.bin` }), 'WebDAV MOVE');
      await refusedBlind(await req('bob', 'POST', '/storage/bob/big.bin', { action: 'Move', new_path: '/carol/team/moved.bin' }), 'the Move action');
      await refusedBlind(
        await req('bob', 'POST', '/tus/', undefined, { 'tus-resumable': '1.0.0', 'upload-length': '30', 'upload-metadata': `filename ${b64('t.bin')},folder ${b64('/carol/team')}` }),
        'a tus upload',
      );
      await refusedBlind(await fetch(`${t.url}/share/${share.id}/`, { method: 'PUT', headers: { 'content-type': form.contentType }, body: form.body }), 'an upload-only link\'s visitor');

      assert.deepEqual(await kept('carol', 'carol/team/doc.txt'), before, 'the owner\'s versions and trash are untouched');
      for (const name of ['raw.bin', 'g.bin', 'dav.bin', 'copied.bin', 'moved.bin', 't.bin']) assert.equal(await t.fs.kind(`team/${name}`, 'carol'), undefined, name);
      assert.equal(await t.fs.text('team/doc.txt', 'carol'), 'b'.repeat(30));
      assert.equal(await t.fs.text('big.bin', 'bob'), 'B'.repeat(30), 'a refused move leaves the source');

      // The owner's own upload of the same size makes room from the oldest kept item.
      await put('carol', 'carol/team/own.bin', thirty);
      assert.deepEqual((await trash('carol')).map((i) => i.name), [], 'the trash item (older than the version) went');
      assert.equal((await versions('carol', 'carol/team/doc.txt')).length, 1);
    });

    test('an overwriting Move, WebDAV COPY and MOVE into the owner\'s tree keep what they replace, whoever does it', async () => {
      await put('dave', 'dave/shared/doc.txt', 'the original');
      await put('dave', 'dave/shared/sub/inner.txt', 'inner');
      assert.equal((await req('dave', 'POST', '/api/grants', { path: '/dave/shared', to: 'user:bob', permission: 'write' })).status, 201);
      await put('bob', 'bob/doc.txt', 'from bob, by move');
      await put('bob', 'bob/other.txt', 'from bob, by copy');
      await put('bob', 'bob/folder/x.txt', 'x');

      // A grantee's Move action over the owner's file: the owner's bytes are kept as a version.
      assert.equal((await req('bob', 'POST', '/storage/bob/doc.txt', { action: 'Move', new_path: '/dave/shared/doc.txt', overwrite: true })).status, 204);
      assert.equal(await t.fs.text('shared/doc.txt', 'dave'), 'from bob, by move');
      const afterMove = await versions('dave', 'dave/shared/doc.txt');
      assert.equal(afterMove.length, 1, 'the replaced file is a version');
      assert.equal(await (await req('dave', 'GET', `/storage/dave/shared/doc.txt?version=${afterMove[0]!.id}`)).text(), 'the original');

      // A grantee's WebDAV COPY over it: kept again.
      assert.equal((await req('bob', 'COPY', '/dav/bob/other.txt', undefined, { destination: `${t.url}/dav/dave/shared/doc.txt`, overwrite: 'T' })).status, 204);
      assert.equal(await t.fs.text('shared/doc.txt', 'dave'), 'from bob, by copy');
      assert.equal((await versions('dave', 'dave/shared/doc.txt')).length, 2);

      // A grantee's WebDAV MOVE of a folder over the owner's folder: the replaced folder goes to the owner's trash.
      assert.equal((await req('bob', 'MOVE', '/dav/bob/folder', undefined, { destination: `${t.url}/dav/dave/shared/sub`, overwrite: 'T' })).status, 204);
      assert.equal(await t.fs.text('shared/sub/x.txt', 'dave'), 'x');
      const trashed = await trash('dave');
      assert.deepEqual(trashed.map((i) => [i.path, i.name]), [['/dave/shared/sub', 'sub']]);
      assert.equal((await req('dave', 'POST', `/api/trash/${trashed[0]!.id}/restore`)).status, 200);
      assert.equal(await t.fs.text('shared/sub (1)/inner.txt', 'dave'), 'inner', 'the replaced folder comes back whole');

      // The owner's own overwriting WebDAV MOVE of a folder over a folder keeps the replaced one too.
      await put('dave', 'dave/a/one.txt', '1');
      await put('dave', 'dave/b/two.txt', '2');
      assert.equal((await req('dave', 'MOVE', '/dav/dave/a', undefined, { destination: `${t.url}/dav/dave/b`, overwrite: 'T' })).status, 204);
      assert.deepEqual((await trash('dave')).map((i) => i.path), ['/dave/b']);
      // And the API's Move over a folder.
      await put('dave', 'dave/c/three.txt', '3');
      assert.equal((await req('dave', 'POST', '/storage/dave/c', { action: 'Move', new_path: '/dave/b', overwrite: true })).status, 204);
      assert.deepEqual((await trash('dave')).map((i) => i.path).sort(), ['/dave/b', '/dave/b']);
      assert.equal(await t.fs.text('b/three.txt', 'dave'), '3');
    });
  });
}
