// A `.file-cloud-sync` at the root of the server folder is another folder's marker that a tool
// copied there (the bench's `rclone bisync --resync` did): the client never downloads it over its
// own marker. Before, it planned that download every round and ended with exit 1 after 10.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { syncServer, twoDevices } from '../helpers/sync-device.js';

for (const [storage, skip] of BACKENDS) {
  describe(`sync CLI and a marker file on the server (${storage})`, { skip }, () => {
    const s = syncServer(storage);

    test('a .file-cloud-sync on the server is left alone: the run ends with exit 0 and the local marker is its own', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('x.txt'), 'x');
      await a.onceOk(s.url, s.key);
      const own = await readFile(a.file('.file-cloud-sync'), 'utf8');
      const put = await fetch(`${s.url}/storage/alice/Sync/.file-cloud-sync`, { method: 'PUT', headers: bearer(s.token), body: '{"server":"elsewhere","folder":"/bob/Other"}\n' });
      assert.equal(put.status, 201);
      await a.onceOk(s.url, s.key);
      assert.equal(await readFile(a.file('.file-cloud-sync'), 'utf8'), own);
      assert.deepEqual(await a.tree(), { 'x.txt': 'x' });
    });
  });
}
