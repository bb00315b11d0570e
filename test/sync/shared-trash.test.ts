// A folder someone shared with you, synced: its deletes go to the OWNER's server trash, which you
// cannot list, so the client cannot prove the server kept those bytes — every local version it
// removes is kept in the sync trash, whoever deleted it (the owner, or you through the API).
// Two users and a grant, run through the real command against a real server with --trash-days.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { syncServer, twoDevices } from '../helpers/sync-device.js';

type TrashItem = { path: string; sha256: string | null };

for (const [storage, skip] of BACKENDS) {
  describe(`sync trash in a folder shared with you (${storage})`, { skip }, () => {
    const s = syncServer(storage, { users: ['alice', 'bob'], flags: { trashDays: '30' } });

    test('files deleted in alice\'s shared folder, by her or by bob, are kept in bob\'s sync trash: they went to her trash, which bob cannot list', async () => {
      const [d] = await twoDevices(s);
      const bob = (await s.t.login('bob')).access_token;
      const keyRes = await postJson(`${s.url}/api/keys`, { name: 'bob sync' }, bearer(bob));
      assert.equal(keyRes.status, 201);
      const bobKey = ((await keyRes.json()) as { key: string }).key;
      assert.equal((await postJson(`${s.url}/storage/alice/Shared`, { action: 'CreateFolder' }, bearer(s.token))).status, 201);
      assert.equal((await postJson(`${s.url}/api/grants`, { path: '/alice/Shared', to: 'user:bob', permission: 'write' }, bearer(s.token))).status, 201);
      const sync = async (): Promise<void> => {
        const r = await d.run([d.dir, '/alice/Shared', '--server', s.url, '--once', '--device', 'bobs-laptop'], bobKey);
        assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      };

      await writeFile(d.file('by-owner.txt'), 'deleted by the owner');
      await writeFile(d.file('by-me.txt'), 'deleted by bob through the API');
      await writeFile(d.file('stays.txt'), 'stays');
      await sync();
      const del = async (rel: string, token: string): Promise<void> => {
        assert.equal((await fetch(`${s.url}/storage/alice/Shared/${rel}`, { method: 'DELETE', headers: bearer(token) })).status, 204);
      };
      await del('by-owner.txt', s.token);
      await del('by-me.txt', bob);
      await sync();

      assert.deepEqual(await d.tree(), { 'stays.txt': 'stays' });
      assert.deepEqual((await d.trashed()).sort(), ['deleted by bob through the API', 'deleted by the owner']);
      // Both went to alice's trash, with their hashes; bob's own trash shows neither.
      const trashOf = async (token: string): Promise<TrashItem[]> => ((await (await fetch(`${s.url}/api/trash`, { headers: bearer(token) })).json()) as { items: TrashItem[] }).items;
      assert.deepEqual((await trashOf(s.token)).map((i) => i.path).sort(), ['/alice/Shared/by-me.txt', '/alice/Shared/by-owner.txt']);
      assert.deepEqual(await trashOf(bob), []);
    });
  });
}
