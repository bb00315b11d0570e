// The sync trash keeps a local file that sync replaces or removes unless the server holds its
// exact bytes: as a current file, as a file in the server's trash (--trash-days: a trashed file's
// sha256, or one of a trashed folder's files: GET /api/trash/hashes),
// or — on a server with --versions — as a kept version, checked by hashing the version (same size
// only). Run through the real command against a real server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { syncServer, twoDevices } from '../helpers/sync-device.js';

for (const [storage, skip] of BACKENDS) {
  describe(`sync trash beside the server's versions (${storage})`, { skip }, () => {
    const s = syncServer(storage, { flags: { versions: true } });
    const put = async (rel: string, body: string): Promise<void> => {
      assert.equal((await fetch(`${s.url}/storage/alice/Sync/${rel}`, { method: 'PUT', headers: bearer(s.token), body })).status, 201);
    };

    test('a file replaced by an edit on the server is not copied to the sync trash: the server kept it as a version', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('v.txt'), 'one');
      await writeFile(a.file('w.txt'), 'gone soon');
      await a.onceOk(s.url, s.key);
      await put('v.txt', 'two');
      await a.onceOk(s.url, s.key);
      assert.equal(await readFile(a.file('v.txt'), 'utf8'), 'two');
      assert.deepEqual(await a.trashed(), [], 'the replaced bytes are the server\'s newest version of v.txt');

      // Deleted on the server (no --trash-days here: gone for good): no version holds it, the sync trash does.
      assert.equal((await fetch(`${s.url}/storage/alice/Sync/w.txt`, { method: 'DELETE', headers: bearer(s.token) })).status, 204);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'v.txt': 'two' });
      assert.deepEqual(await a.trashed(), ['gone soon']);
    });
  });

  describe(`sync trash beside the server's trash (${storage})`, { skip }, () => {
    const s = syncServer(storage, { flags: { trashDays: '30' } });
    const call = (rel: string, init: RequestInit) => fetch(`${s.url}/storage/alice/Sync/${rel}`, { ...init, headers: bearer(s.token) });

    test('a file deleted on the server into its trash is removed here without a copy: the trash item\'s sha256 is its bytes; other removals still keep one', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('gone.txt'), 'in the server trash');
      await writeFile(a.file('kept.txt'), 'replaced there');
      await mkdir(a.file('dir/sub'), { recursive: true });
      await writeFile(a.file('dir/f.txt'), 'in a trashed folder');
      await writeFile(a.file('dir/sub/g.txt'), 'deeper in it');
      await a.onceOk(s.url, s.key);
      assert.equal((await call('gone.txt', { method: 'DELETE' })).status, 204);
      // Without --versions a replace is final: the old bytes are nowhere on the server.
      assert.equal((await call('kept.txt', { method: 'PUT', body: 'new there' })).status, 201);
      // A folder's trash item knows its files' hashes (GET /api/trash/hashes): they are not kept here either.
      assert.equal((await call('dir/', { method: 'DELETE' })).status, 204);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'kept.txt': 'new there' });
      assert.deepEqual(await a.trashed(), ['replaced there']);
    });
  });
}
