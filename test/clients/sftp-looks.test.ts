// A new file written over SFTP is looked at once (issue 52's bench, the 4 KiB puts): the OPEN looks at
// the name and its parent, and the upload it starts at once takes that look instead of making its
// own (on S3 a look is a query of the name index; on local disk five lstats).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { sftpFlags, sftpPort, sftpRequests, sshIdentity, toolSkip, withSftp, type SshIdentity } from '../helpers/sftp.js';

// The looks are counted on this process's backend, so only the backends whose SFTP session runs in the
// test's process: file and s3 (the cluster's workers run the same s3 code in processes of their own).
for (const [storage, skip] of BACKENDS.filter(([s]) => s !== 'cluster')) {
  describe(`an SFTP put looks at its name once, on ${storage}`, { skip: skip ?? toolSkip('ssh-keygen') }, () => {
    let t: TestApp;
    let id: SshIdentity;
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: await sftpFlags(storage) });
      id = await sshIdentity(t, 'alice');
      await t.fs.put('dir/kept.txt', 'kept', 'alice');
    });
    after(async () => {
      await t?.close();
      await id?.dispose();
    });

    test('a new file and a replaced one: one lookBeforeWrite each, and the bytes are stored', async () => {
      const looked: string[] = [];
      const backend = t.backend as { lookBeforeWrite: TestApp['backend']['lookBeforeWrite'] };
      const look = backend.lookBeforeWrite;
      backend.lookBeforeWrite = (key) => {
        looked.push(key.segments.join('/'));
        return look(key);
      };
      try {
        const privateKey = await readFile(id.key, 'utf8');
        await withSftp(sftpPort(t), { username: 'alice', privateKey }, async (s) => {
          const r = sftpRequests(s);
          await r.writeFile('/dir/new.txt', 'new');
          await r.writeFile('/dir/kept.txt', 'replaced');
        });
      } finally {
        backend.lookBeforeWrite = look;
      }
      assert.deepEqual(looked, ['dir/new.txt', 'dir/kept.txt']);
      assert.equal(await t.fs.text('dir/new.txt', 'alice'), 'new');
      assert.equal(await t.fs.text('dir/kept.txt', 'alice'), 'replaced');
    });
  });
}
