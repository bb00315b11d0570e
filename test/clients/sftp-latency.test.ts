// A session's answers leave at once (issue 52's bench): OpenSSH's sftp waits for each answer
// before the next request of a small file, so an answer held back by Nagle's algorithm until the
// client's delayed ACK (at least 40 ms on Linux) makes every request cost that wait.
// scripts/test-services.sh installs openssh-client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { sftpBatch, sftpFlags, sftpPort, sshIdentity, toolSkip, type SshIdentity } from '../helpers/sftp.js';

/** Linux's shortest delayed ACK (TCP_DELACK_MIN): what one answer held back by Nagle's algorithm waits at least. */
const DELAYED_ACK_MS = 40;
const REQUESTS = 60;

for (const [storage, skip] of BACKENDS) {
  describe(`SFTP answers are sent at once on ${storage}`, { skip: skip ?? toolSkip('sftp') }, () => {
    let t: TestApp;
    let id: SshIdentity;
    let port: number;
    let local: string;
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: await sftpFlags(storage) });
      port = sftpPort(t);
      id = await sshIdentity(t, 'alice');
      local = await mkdtemp(join(tmpdir(), 'fc-sftp-latency-'));
      await t.fs.put('one.txt', 'one', 'alice');
    });
    after(async () => {
      await t?.close();
      await id?.dispose();
      if (local) await rm(local, { recursive: true, force: true });
    });

    test(`${REQUESTS} stats in turn take less than ${DELAYED_ACK_MS} ms each beyond one session's sign-in`, async (ctx) => {
      // Each `ls -l one.txt` is a stat the client waits for; the session with one of them measures the sign-in.
      const timed = async (n: number) => {
        const t0 = performance.now();
        const r = await sftpBatch(id, port, 'alice', Array.from({ length: n }, () => 'ls -l one.txt').join('\n'), local);
        assert.equal(r.code, 0, r.out);
        assert.equal(r.out.split('\n').filter((l) => /^-r.*\sone\.txt$/.test(l)).length, n, r.out);
        return performance.now() - t0;
      };
      const signIn = await timed(1);
      const many = await timed(REQUESTS + 1);
      const perRequest = (many - signIn) / REQUESTS;
      ctx.diagnostic(`${perRequest.toFixed(1)} ms per stat`);
      assert.ok(perRequest < DELAYED_ACK_MS, `${perRequest.toFixed(1)} ms per stat (sign-in session ${signIn.toFixed(0)} ms, ${REQUESTS + 1} stats ${many.toFixed(0)} ms)`);
    });
  });
}
