// The web UI's API and WebDAV write while the sync client uploads: the client stops itself with
// its first upload under way (FILE_CLOUD_SYNC_STOP_AT=upload:sending), the other writers replace
// that file, a file it is about to upload and a name it is about to create, and it goes on. Its
// conditional writes lose to theirs (412), each clash becomes a conflict copy, every version that
// existed still exists and both devices converge.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { serverVersions, syncServer, twoDevices, writeAll } from '../helpers/sync-device.js';

for (const [storage, skip] of BACKENDS) {
  describe(`sync CLI with the web UI and WebDAV writing at the same time (${storage})`, { skip }, () => {
    const srv = syncServer(storage, { flags: { versions: true } });

    test('writes by the API and WebDAV during a run win their names; the client keeps its edits as conflict copies', async () => {
      const [a, b] = await twoDevices(srv);
      await writeAll(a, { 'd.txt': 'd1', 'w.txt': 'w1', 'keep.txt': 'keep' });
      await a.onceOk(srv.url, srv.key);
      await b.onceOk(srv.url, srv.key);
      await writeAll(a, { 'd.txt': 'd laptop', 'n.txt': 'n laptop', 'w.txt': 'w laptop' });

      // The uploads go in path order: d.txt's is under way.
      const run = await a.stopAt(srv.url, srv.key, 'upload:sending');
      const basic = `Basic ${Buffer.from(`alice:${srv.key}`).toString('base64')}`;
      const dav = await fetch(`${srv.url}/dav/alice/Sync/d.txt`, { method: 'PUT', headers: { authorization: basic }, body: 'd dav' });
      assert.ok(dav.status === 201 || dav.status === 204, `WebDAV PUT: ${dav.status}`);
      for (const [name, body] of [['w.txt', 'w web'], ['n.txt', 'n web']]) {
        const res = await fetch(`${srv.url}/storage/alice/Sync/${name}`, { method: 'PUT', headers: bearer(srv.token), body });
        assert.equal(res.status, 201, `API PUT ${name}`);
      }
      run.child.kill('SIGCONT');
      assert.equal(await run.closed, 0, `the run ends well\n${run.out.stdout}\n${run.out.stderr}`);

      await b.onceOk(srv.url, srv.key);
      await a.onceOk(srv.url, srv.key);
      const ta = await a.tree();
      assert.deepEqual(await b.tree(), ta, 'both devices hold the same');
      assert.equal(ta['d.txt'], 'd dav');
      assert.equal(ta['w.txt'], 'w web');
      assert.equal(ta['n.txt'], 'n web');
      for (const [stem, mine] of [['d', 'd laptop'], ['w', 'w laptop'], ['n', 'n laptop']] as const) {
        const copies = Object.keys(ta).filter((p) => p.startsWith(`${stem} (conflict laptop `));
        assert.equal(copies.length, 1, `${stem}: ${JSON.stringify(Object.keys(ta))}`);
        assert.equal(ta[copies[0]!], mine);
      }
      assert.equal(Object.keys(ta).length, 7, JSON.stringify(Object.keys(ta)));
      const everywhere = [...Object.values(ta), ...(await serverVersions(srv.url, srv.token, Object.keys(ta))), ...(await a.trashed()), ...(await b.trashed())];
      for (const v of ['d1', 'w1', 'd laptop', 'w laptop', 'n laptop', 'd dav', 'w web', 'n web']) assert.ok(everywhere.includes(v), `a version is lost: ${v}`);
    });
  });
}
