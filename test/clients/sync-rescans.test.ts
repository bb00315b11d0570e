// The sync client's "new server epoch" case while the leader rescans storage all the time
// (--index-interval 1). A rescan whose walk saw a file just before the test deleted it used to put
// it back into the index; on S3 the index decides whether a name is free, so the client's re-upload
// with If-None-Match: * was refused and skipped for 10 rounds (exit 1), seen once on the cluster in
// a full run. FILE_CLOUD_SYNC_RESCAN_LOOPS=N repeats the case N times (default 2). The
// race itself is pinned at a stated point by test/storage/rescan-race.test.ts; this is the client's view.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';
import { newEpochRun, syncServer, twoDevices } from '../helpers/sync-device.js';

const LOOPS = Number(process.env.FILE_CLOUD_SYNC_RESCAN_LOOPS ?? 2);

for (const [storage, skip] of BACKENDS.filter(([s]) => s === 'cluster')) {
  describe(`sync CLI while the index is rescanned every second (${storage})`, { skip }, () => {
    const s = syncServer(storage, { flags: { indexInterval: '1' } });
    const serverText = async (rel: string): Promise<string | undefined> => {
      const res = await fetch(`${s.url}/storage/alice/Sync/${encodePath(rel)}`, { headers: bearer(s.token) });
      return res.status === 200 ? res.text() : undefined;
    };

    test(`${LOOPS}×: a new server epoch lists once and deletes nothing; the file deleted on the server is uploaded again`, async () => {
      for (let i = 0; i < LOOPS; i++) {
        const [a] = await twoDevices(s);
        // Files beside it lengthen each walk, so the delete often lands inside one.
        for (let k = 0; k < 20; k++) await writeFile(a.file(`other-${k}.txt`), `other ${k}`);
        const r = await newEpochRun(s, a);
        assert.equal(r.code, 0, `loop ${i + 1}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
        assert.match(r.stdout, /epoch changed/);
        assert.equal(await serverText('p.txt'), 'p', `loop ${i + 1}`);
        assert.equal(await serverText('q.txt'), 'q', `loop ${i + 1}`);
      }
    });
  });
}
