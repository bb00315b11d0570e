// Usage while a folder goes and the files below it change, through the front ends, on every backend
// (the cluster: two workers, so the race runs between processes). The quota property test saw usage
// at -1,687 bytes with nothing stored on S3 (seed 430197035): a folder's delete counted a file that a
// replace beside it counted as replaced too. The storage conformance test "files replaced, copied onto
// and deleted inside a folder while it is deleted, moved or copied over" is the same race one level down.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp, type TestStorage } from '../helpers/app.js';
import { bytesStored } from '../helpers/stored.js';
import { bearer } from '../helpers/client.js';

const ROUNDS = Number(process.env.RACE_ROUNDS ?? 10);
/** What a request of the race may fairly answer: done, or lost to the folder's change (404, 409: its folder went). */
const FAIR = new Set([201, 204, 404, 409]);

/**
 * Deletes that are final (the quota property test's setting) and deletes into the trash (a folder moved away whole),
 * on every backend; on local disk also both with versions (a replace keeps what it replaces: it once reported a file
 * the trash had taken along, when a writer made the folder again before its rename). Versions on S3 and the cluster
 * too since creates of new names hold their edit lease (docs/storage.md, "Concurrency below a folder").
 */
const SETTINGS: readonly (readonly [string, Record<string, string | boolean>, readonly TestStorage[]])[] = [
  ['deletes final', {}, ['file', 's3', 'cluster']],
  ['with the trash', { trashDays: '7' }, ['file', 's3', 'cluster']],
  ['with versions and the trash', { trashDays: '7', versions: true }, ['file', 's3', 'cluster']],
];

for (const [storage, skip] of BACKENDS) {
  for (const [setting, flags] of SETTINGS.filter(([, , on]) => on.includes(storage))) {
    describe(`usage while a folder is deleted or moved over beside changes below it on ${storage}, ${setting}`, { skip }, () => {
      let t: TestApp;
      let auth: Record<string, string>;

      before(async () => {
        t = await startApp({ users: ['alice'], storage, flags });
        auth = bearer((await t.login('alice')).access_token);
      });
      after(() => t?.close());

      /** What `file-cloud index` would set usage to: the tree, the versions and the trash. */
      const recount = async () => (await bytesStored(t, 'alice')) + (await t.store.versions.bytesOf('alice')) + (await t.store.trash.bytesOf('alice'));
      const put = (path: string, size: number) => fetch(`${t.url}/storage/alice/${path}`, { method: 'PUT', headers: auth, body: Buffer.alloc(size, 0x61) });
      const dav = (method: string, from: string, to: string) => fetch(`${t.url}/dav/alice/${from}`, { method, headers: { ...auth, destination: `${t.url}/dav/alice/${to}`, overwrite: 'T' } });
      const del = (path: string) => fetch(`${t.url}/storage/alice/${path}`, { method: 'DELETE', headers: auth });

      test('replaces, WebDAV copies onto and deletes of files below a folder while it is deleted or moved over: usage is the recount of the tree, the versions and the trash', async () => {
        for (let round = 0; round < ROUNDS; round++) {
          for (const [path, size] of [['box/a.bin', 1687], ['box/b.bin', 3236], ['box/sub/c.bin', 2624], ['box/sub/d.bin', 77], ['other/o.bin', 50]] as const) {
            assert.equal((await put(path, size)).status, 201, `round ${round}: ${path}`);
          }
          const folderChange = async () => {
            // With the writes, or a moment later (between their look and their act).
            if (round % 2) await new Promise((r) => setTimeout(r, round % 7));
            return round % 4 < 2 ? del('box') : dav('MOVE', 'other', 'box');
          };
          const answers = await Promise.all([put('box/a.bin', 100 + round), put('box/sub/c.bin', 200 + round), dav('COPY', 'box/a.bin', 'box/b.bin'), del('box/sub/d.bin'), folderChange()]);
          for (const res of answers) assert.ok(FAIR.has(res.status), `round ${round}: ${res.url} answered ${res.status}: ${await res.text()}`);
          const used = (await t.store.usage.get('alice'))?.used;
          assert.equal(used, await recount(), `round ${round}: usage is the recount`);
          for (const gone of ['box', 'other']) await del(gone);
        }
      });
    });
  }
}
