// A device whose clock is 3 h off: its files carry mtimes 3 h in the past or the future, against a
// server and another device on the right time. The client orders nothing by time (a file changed
// when its stat differs from the base's, whichever way its mtime moved), so nothing is lost and
// there is no conflict copy beyond the one real edit/edit.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { utimes, writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { serverVersions, syncServer, twoDevices, type Device } from '../helpers/sync-device.js';

const OFF_S = 3 * 3600;

/** Writes `content` as a device whose clock is `offS` seconds off would: its mtime that far off now. */
async function writeOff(d: Device, rel: string, content: string, offS: number): Promise<void> {
  await writeFile(d.file(rel), content);
  const at = Date.now() / 1000 + offS;
  await utimes(d.file(rel), at, at);
}

for (const [storage, skip] of BACKENDS) {
  describe(`sync CLI, a device clock 3 h off (${storage})`, { skip }, () => {
    const srv = syncServer(storage, { flags: { versions: true } });

    test('edits dated 3 h in the past or the future all travel; one edit/edit gives one conflict copy; no version is lost', async () => {
      const [behind, ahead] = await twoDevices(srv, ['behind', 'ahead']);
      await writeOff(behind, 'x.txt', 'x1', -OFF_S);
      await writeOff(behind, 'y.txt', 'y1', -OFF_S);
      await behind.onceOk(srv.url, srv.key);
      await ahead.onceOk(srv.url, srv.key);

      // An edit whose mtime goes back in time (older than the synced one), twice with the same size
      // and the same mtime: each is a change.
      const past = Math.floor(Date.now() / 1000) - 2 * OFF_S;
      await writeFile(behind.file('x.txt'), 'x2');
      await utimes(behind.file('x.txt'), past, past);
      await behind.onceOk(srv.url, srv.key);
      await ahead.onceOk(srv.url, srv.key);
      await writeFile(behind.file('x.txt'), 'x3');
      await utimes(behind.file('x.txt'), past, past);
      await behind.onceOk(srv.url, srv.key);
      // A file new on the server side dated 3 h ahead, and an edit/edit across the two clocks.
      await writeOff(ahead, 'z.txt', 'z from the future', OFF_S);
      await writeOff(ahead, 'y.txt', 'y ahead', OFF_S);
      await writeOff(behind, 'y.txt', 'y behind', -OFF_S);
      await ahead.onceOk(srv.url, srv.key);
      await behind.onceOk(srv.url, srv.key);
      await ahead.onceOk(srv.url, srv.key);

      const tb = await behind.tree();
      assert.deepEqual(await ahead.tree(), tb, 'both devices hold the same');
      const conflicts = Object.keys(tb).filter((p) => p.includes('(conflict '));
      assert.equal(conflicts.length, 1, JSON.stringify(Object.keys(tb)));
      assert.match(conflicts[0]!, /^y \(conflict behind /);
      assert.equal(tb[conflicts[0]!], 'y behind');
      assert.equal(tb['y.txt'], 'y ahead', "the server's version keeps the name");
      assert.equal(tb['x.txt'], 'x3');
      assert.equal(tb['z.txt'], 'z from the future');
      const everywhere = [...Object.values(tb), ...(await serverVersions(srv.url, srv.token, Object.keys(tb))), ...(await behind.trashed()), ...(await ahead.trashed())];
      for (const v of ['x1', 'x2', 'x3', 'y1', 'y ahead', 'y behind', 'z from the future']) assert.ok(everywhere.includes(v), `a version is lost: ${v}`);
    });
  });
}
