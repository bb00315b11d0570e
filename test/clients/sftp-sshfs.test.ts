// sshfs over the SFTP front end (issue 52), on every backend: mount, copy a tree into it, rsync
// into it twice (the second run replaces a changed file: a rename onto an existing name, which sshfs
// makes with posix-rename@openssh.com as the server names it, no `-o workaround=rename`), read it
// back, unmount. It needs FUSE (/dev/fuse, root); where there is none the suite says so and skips.
// test-services.sh installs sshfs and rsync.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { fuseSkip, run, sftpFlags, sftpPort, sshIdentity, type SshIdentity } from '../helpers/sftp.js';

for (const [storage, skip] of BACKENDS) {
  describe(`sshfs on ${storage}`, { skip: skip ?? fuseSkip() }, () => {
    let t: TestApp;
    let id: SshIdentity;
    let home: string;
    let mnt: string;
    let mounted = false;
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: await sftpFlags(storage) });
      id = await sshIdentity(t, 'alice');
      home = await mkdtemp(join(tmpdir(), 'fc-sshfs-'));
      mnt = join(home, 'mnt');
      await mkdir(mnt);
    });
    after(async () => {
      if (mounted) await run('fusermount3', ['-u', mnt]);
      await t?.close();
      await id?.dispose();
      if (home) await rm(home, { recursive: true, force: true });
    });

    test('mount, copy a tree in, rsync into it twice, read back, unmount', async () => {
      const opts = [`IdentityFile=${id.key}`, 'IdentitiesOnly=yes', 'BatchMode=yes', 'StrictHostKeyChecking=accept-new', `UserKnownHostsFile=${id.knownHosts}`].join(',');
      const mount = await run('sshfs', ['-p', String(sftpPort(t)), '-o', opts, 'alice@127.0.0.1:/', mnt], { timeoutMs: 60_000 });
      assert.equal(mount.code, 0, mount.out);
      mounted = true;
      const tree = join(home, 'tree');
      const big = randomBytes(2 * 1024 * 1024 + 5);
      await mkdir(join(tree, 'sub'), { recursive: true });
      await writeFile(join(tree, 'a.txt'), 'one');
      await writeFile(join(tree, 'sub', 'b.bin'), big);
      await cp(tree, join(mnt, 'copied'), { recursive: true });
      assert.equal(await t.fs.text('copied/a.txt'), 'one');
      assert.ok((await t.fs.read('copied/sub/b.bin'))?.equals(big));
      const first = await run('rsync', ['-a', `${tree}/`, join(mnt, 'rsynced/')], { timeoutMs: 120_000 });
      assert.equal(first.code, 0, first.out);
      await writeFile(join(tree, 'a.txt'), 'two, changed');
      const second = await run('rsync', ['-a', `${tree}/`, join(mnt, 'rsynced/')], { timeoutMs: 120_000 });
      assert.equal(second.code, 0, second.out);
      assert.equal(await t.fs.text('rsynced/a.txt'), 'two, changed');
      assert.ok((await readFile(join(mnt, 'rsynced', 'sub', 'b.bin'))).equals(big));
      assert.deepEqual(await t.fs.names('rsynced'), ['a.txt', 'sub'], 'no rsync temp file is left');
      const unmount = await run('fusermount3', ['-u', mnt]);
      assert.equal(unmount.code, 0, unmount.out);
      mounted = false;
    });
  });
}
