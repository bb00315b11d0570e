// A file written while the sync client uploads it. The client stops itself at a named point of the
// upload (FILE_CLOUD_SYNC_STOP_AT), the test rewrites the file, and the client goes on (SIGCONT).
// The server never holds torn bytes, the base never takes bytes the file no longer has (also when
// the writer keeps the size and the mtime, as `cp -p` or `rsync -t` do), the run ends well, and the
// sides converge on the last write.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { utimes, writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { serverVersions, syncServer, twoDevices } from '../helpers/sync-device.js';

/** More than one read chunk (64 KiB): the upload is stopped with part of it sent and the rest unread. */
const KIB = 1024;
const FIRST = 'a'.repeat(200 * KIB);

const CASES = [
  { name: 'rewritten after its bytes were sent, size and mtime kept', step: 'upload:stored', then: 'c'.repeat(200 * KIB), keepMtime: true },
  { name: 'rewritten with the same size while it is read', step: 'upload:sending', then: 'd'.repeat(200 * KIB), keepMtime: false },
  { name: 'rewritten shorter while it is read', step: 'upload:sending', then: 'short', keepMtime: false },
  { name: 'rewritten longer while it is read', step: 'upload:sending', then: 'e'.repeat(300 * KIB), keepMtime: false },
] as const;

for (const [storage, skip] of BACKENDS) {
  describe(`sync CLI, a file written during its upload (${storage})`, { skip }, () => {
    const srv = syncServer(storage, { flags: { versions: true } });

    for (const c of CASES) {
      test(`${c.name}: the server holds no torn bytes and the sides converge on the last write`, async () => {
        const [a, b] = await twoDevices(srv);
        await writeFile(a.file('keep.txt'), 'keep');
        await writeFile(a.file('f.bin'), FIRST);
        // A whole second, as a copy that keeps times (`cp -p`, `rsync -t`, tar) sets it.
        const mtime = Math.floor(Date.now() / 1000) - 60;
        await utimes(a.file('f.bin'), mtime, mtime);

        const run = await a.stopAt(srv.url, srv.key, c.step);
        await writeFile(a.file('f.bin'), c.then);
        if (c.keepMtime) await utimes(a.file('f.bin'), mtime, mtime);
        run.child.kill('SIGCONT');
        const code = await run.closed;
        assert.equal(code, 0, `the run goes on and ends well\n${run.out.stdout}\n${run.out.stderr}`);

        await a.onceOk(srv.url, srv.key);
        await b.onceOk(srv.url, srv.key);
        const server = await (await fetch(`${srv.url}/storage/alice/Sync/f.bin`, { headers: bearer(srv.token) })).text();
        assert.equal(server.length, c.then.length, 'the server holds the last write');
        assert.ok(server === c.then, 'the server holds the last write');
        assert.deepEqual(await b.tree(), { 'f.bin': c.then, 'keep.txt': 'keep' });
        assert.deepEqual(await a.tree(), await b.tree());
        for (const v of await serverVersions(srv.url, srv.token, ['f.bin'])) assert.ok(v === FIRST || v === c.then, `a torn version on the server (${v.length} bytes)`);
        const verify = await a.run(['verify', a.dir], srv.key);
        assert.equal(verify.code, 0, verify.stderr);
      });
    }
  });
}
