// A session's answers leave at once (issue 52's bench): SFTP clients wait for one answer before the
// next request of a small file, so an answer held back by Nagle's algorithm until the client's
// delayed ACK (at least 40 ms on Linux) would make nearly every request cost that wait.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import ssh2 from 'ssh2';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { sftpFlags, sftpPort, sshIdentity, toolSkip, type SshIdentity } from '../helpers/sftp.js';

/** Linux's shortest delayed ACK (TCP_DELACK_MIN): what an answer held back by Nagle's algorithm waits at least. */
const DELAYED_ACK_MS = 40;
const REQUESTS = 61;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

for (const [storage, skip] of BACKENDS) {
  describe(`SFTP answers are sent at once on ${storage}`, { skip: skip ?? toolSkip('ssh-keygen') }, () => {
    let t: TestApp;
    let id: SshIdentity;
    let client: ssh2.Client | undefined;
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: await sftpFlags(storage) });
      id = await sshIdentity(t, 'alice');
    });
    after(async () => {
      client?.end();
      await t?.close();
      await id?.dispose();
    });

    test(`${REQUESTS} requests in turn: the median answer comes in less than ${DELAYED_ACK_MS} ms`, async (ctx) => {
      const c = new ssh2.Client();
      client = c;
      const privateKey = await readFile(id.key, 'utf8');
      await new Promise<void>((resolve, reject) => {
        c.once('ready', () => resolve()).once('error', reject);
        c.connect({ host: '127.0.0.1', port: sftpPort(t), username: 'alice', privateKey });
      });
      // As OpenSSH's clients do: the client's own requests are not held back, only the server's answers could be.
      c.setNoDelay(true);
      const sftp = await new Promise<ssh2.SFTPWrapper>((resolve, reject) => c.sftp((err, s) => (err ? reject(err) : resolve(s))));
      // REALPATH is answered by the session alone: what is timed is the way there and back.
      const took: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now();
        const path = await new Promise<string>((resolve, reject) => sftp.realpath('.', (err, p) => (err ? reject(err) : resolve(p))));
        took.push(performance.now() - t0);
        assert.equal(path, '/');
      }
      const m = median(took);
      ctx.diagnostic(`median ${m.toFixed(1)} ms, slowest ${Math.max(...took).toFixed(1)} ms`);
      assert.ok(m < DELAYED_ACK_MS, `median ${m.toFixed(1)} ms per answer: ${took.map((x) => x.toFixed(0)).join(' ')}`);
    });
  });
}
