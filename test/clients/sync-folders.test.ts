// Empty folders, run through the real sync command against a real server: made, removed and
// renamed on either side reach the other; a folder the other side removed stays while something
// new is in it; removing many at once is a mass delete like files.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';
import { localDirs, syncServer, twoDevices } from '../helpers/sync-device.js';


for (const [storage, skip] of BACKENDS) {
  describe(`sync: empty folders (${storage})`, { skip }, () => {
    const s = syncServer(storage);

    /** Every folder the server has under /alice/Sync, sorted. */
    async function serverDirs(rel = ''): Promise<string[]> {
      const res = await fetch(`${s.url}/storage/alice/Sync/${rel === '' ? '' : `${encodePath(rel)}/`}`, { headers: bearer(s.token) });
      assert.equal(res.status, 200, `listing ${rel}`);
      const out: string[] = [];
      for (const e of ((await res.json()) as { entries: { name: string; is_file: boolean }[] }).entries) {
        if (e.is_file) continue;
        const p = rel === '' ? e.name : `${rel}/${e.name}`;
        out.push(p, ...(await serverDirs(p)));
      }
      return out.sort();
    }
    const serverFolder = (rel: string, init: RequestInit): Promise<Response> => fetch(`${s.url}/storage/alice/Sync/${encodePath(rel)}/`, { ...init, headers: { ...bearer(s.token), ...init.headers } });

    test('made, removed and renamed on either side, an empty folder reaches the other', async () => {
      const [a, b] = await twoDevices(s);
      await mkdir(a.file('empty'));
      await mkdir(a.file('deep/er'), { recursive: true });
      await writeFile(a.file('file.txt'), 'so the root is not empty');
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await serverDirs(), ['deep', 'deep/er', 'empty']);
      await b.onceOk(s.url, s.key);
      assert.deepEqual(await localDirs(b), ['deep', 'deep/er', 'empty']);

      await rename(b.file('empty'), b.file('renamed'));
      await rmdir(b.file('deep/er'));
      // status counts the folder steps a run would take: remove empty/ and deep/er/, make renamed/.
      const status = await b.run(['status', b.dir], s.key);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /^pending: {3}3 /m);
      await b.onceOk(s.url, s.key);
      assert.deepEqual(await serverDirs(), ['deep', 'renamed']);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await localDirs(a), ['deep', 'renamed']);

      assert.equal((await postJson(`${s.url}/storage/alice/Sync/from-web`, { action: 'CreateFolder' }, bearer(s.token))).status, 201);
      assert.equal((await serverFolder('renamed', { method: 'DELETE' })).status, 204);
      const moved = await postJson(`${s.url}/storage/alice/Sync/deep`, { action: 'Move', new_path: '/alice/Sync/moved' }, bearer(s.token));
      assert.equal(moved.status, 204);
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      for (const d of [a, b]) assert.deepEqual(await localDirs(d), ['from-web', 'moved'], d.name);
      assert.deepEqual(await a.tree(), { 'file.txt': 'so the root is not empty' });
    });

    test('a folder removed on the server while a file was put in it here stays, with the file, on both sides', async () => {
      const [a] = await twoDevices(s);
      await mkdir(a.file('box'));
      await writeFile(a.file('keep.txt'), 'keep');
      await a.onceOk(s.url, s.key);
      assert.equal((await serverFolder('box', { method: 'DELETE' })).status, 204);
      await writeFile(a.file('box/new.txt'), 'written meanwhile');
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'box/new.txt': 'written meanwhile', 'keep.txt': 'keep' });
      const res = await fetch(`${s.url}/storage/alice/Sync/box/new.txt`, { headers: bearer(s.token) });
      assert.equal(await res.text(), 'written meanwhile');
    });

    test('a folder removed here while the server put a file in it: the server keeps it, and it comes back here', async () => {
      const [a] = await twoDevices(s);
      await mkdir(a.file('box'));
      await writeFile(a.file('keep.txt'), 'keep');
      await a.onceOk(s.url, s.key);
      await rmdir(a.file('box'));
      assert.equal((await fetch(`${s.url}/storage/alice/Sync/box/web.txt`, { method: 'PUT', headers: bearer(s.token), body: 'from the web' })).status, 201);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'box/web.txt': 'from the web', 'keep.txt': 'keep' });
      assert.deepEqual(await serverDirs(), ['box']);
    });

    test('removing more than 50 empty folders and 30 % of them pauses (exit 3) and removes none', async () => {
      const [a] = await twoDevices(s);
      // One chain of 60 nested folders: the server makes it with one request (a folder's parents come along).
      const chain = Array.from({ length: 60 }, (_, i) => `d${i}`);
      await mkdir(a.file(chain.join('/')), { recursive: true });
      await a.onceOk(s.url, s.key);
      assert.equal((await serverDirs()).length, 60);
      await rm(a.file(chain.slice(0, 6).join('/')), { recursive: true });
      const r = await a.once(s.url, s.key);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /paused: the plan removes 55 of 60 folders on the server/);
      assert.equal((await serverDirs()).length, 60);
      const allowed = await a.once(s.url, s.key, ['--allow-deletes']);
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.deepEqual(await serverDirs(), chain.slice(0, 5).map((_, i) => chain.slice(0, i + 1).join('/')));
    });
  });
}
