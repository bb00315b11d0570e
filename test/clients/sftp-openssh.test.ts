// OpenSSH's own clients against the SFTP front end (issue 52, CONTRACT "SFTP (opt-in)") on every
// backend: `sftp` in batch mode (mkdir, put, ls, rename, get, reput, rm, rmdir; rename onto an
// existing file through posix-rename@openssh.com), `scp` both ways,
// the change feed seeing SFTP writes, the channels other than sftp refused, and another user's
// tree out of reach. scripts/test-services.sh installs openssh-client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { run, sftpBatch, sftpFlags, sftpPort, sshIdentity, sshOptions, toolSkip, type SshIdentity } from '../helpers/sftp.js';

for (const [storage, skip] of BACKENDS) {
  describe(`OpenSSH sftp and scp on ${storage}`, { skip: skip ?? toolSkip('sftp') }, () => {
    let t: TestApp;
    let id: SshIdentity;
    let port: number;
    let local: string;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: await sftpFlags(storage) });
      port = sftpPort(t);
      id = await sshIdentity(t, 'alice');
      local = await mkdtemp(join(tmpdir(), 'fc-sftp-local-'));
    });
    after(async () => {
      await t?.close();
      await id?.dispose();
      if (local) await rm(local, { recursive: true, force: true });
    });

    test('sftp batch: mkdir, put, ls, rename, get, reput, rm and rmdir do what they say, byte for byte', async () => {
      const big = randomBytes(3 * 1024 * 1024 + 17);
      await writeFile(join(local, 'big.bin'), big);
      await writeFile(join(local, 'note.txt'), 'hello över sftp\n');
      // The first half of big.bin, already uploaded, which `reput` completes from its end.
      await writeFile(join(local, 'half.bin'), big.subarray(0, 1024 * 1024));
      const first = await sftpBatch(id, port, 'alice', ['mkdir docs', 'put note.txt docs/note.txt', 'put half.bin docs/big.bin', 'ls -l docs', 'rename docs/note.txt "docs/renamed note.txt"', 'ls docs'].join('\n'), local);
      assert.equal(first.code, 0, first.out);
      assert.match(first.out, /-rw-r--r-- .* 17 .* note\.txt/);
      assert.match(first.out, /renamed note\.txt/);
      assert.equal(await t.fs.text('docs/renamed note.txt'), 'hello över sftp\n');
      assert.equal(await t.fs.kind('docs/note.txt'), undefined);
      assert.equal((await t.fs.read('docs/big.bin'))?.length, 1024 * 1024);

      const second = await sftpBatch(id, port, 'alice', ['reput big.bin docs/big.bin', 'get docs/big.bin got.bin', 'get "docs/renamed note.txt" got.txt'].join('\n'), local);
      assert.equal(second.code, 0, second.out);
      assert.ok((await t.fs.read('docs/big.bin'))?.equals(big), 'reput completed the file in storage');
      assert.ok((await readFile(join(local, 'got.bin'))).equals(big), 'get read it back whole');
      assert.equal(await readFile(join(local, 'got.txt'), 'utf8'), 'hello över sftp\n');

      const third = await sftpBatch(id, port, 'alice', ['rm docs/big.bin', 'rm "docs/renamed note.txt"', 'rmdir docs'].join('\n'), local);
      assert.equal(third.code, 0, third.out);
      assert.equal(await t.fs.kind('docs'), undefined);
    });

    test('scp copies up and down (over the SFTP protocol), and a missing file is an error', async () => {
      const data = randomBytes(200_000);
      await writeFile(join(local, 'scp.bin'), data);
      const up = await run('scp', ['-q', ...sshOptions(id, port), join(local, 'scp.bin'), 'alice@127.0.0.1:/scp-copy.bin']);
      assert.equal(up.code, 0, up.out);
      assert.ok((await t.fs.read('scp-copy.bin'))?.equals(data));
      const down = await run('scp', ['-q', ...sshOptions(id, port), 'alice@127.0.0.1:/scp-copy.bin', join(local, 'scp-back.bin')]);
      assert.equal(down.code, 0, down.out);
      assert.ok((await readFile(join(local, 'scp-back.bin'))).equals(data));
      const missing = await run('scp', ['-q', ...sshOptions(id, port), 'alice@127.0.0.1:/nothing-here', join(local, 'x')]);
      assert.notEqual(missing.code, 0);
    });

    test('rename onto an existing file replaces it: the server names posix-rename@openssh.com and sftp uses it', async () => {
      await t.fs.put('old.txt', 'the old one', 'alice');
      await t.fs.put('new.txt', 'the new one', 'alice');
      const r = await sftpBatch(id, port, 'alice', 'rename new.txt old.txt', local);
      assert.equal(r.code, 0, r.out);
      assert.equal(await t.fs.text('old.txt'), 'the new one');
      assert.equal(await t.fs.kind('new.txt'), undefined);
      // -l asks for the plain SFTP v3 rename, which refuses a name in use.
      await t.fs.put('new.txt', 'again', 'alice');
      const legacy = await sftpBatch(id, port, 'alice', 'rename -l new.txt old.txt', local);
      assert.notEqual(legacy.code, 0, legacy.out);
      assert.equal(await t.fs.text('old.txt'), 'the new one');
    });

    test('the change feed sees SFTP writes as it sees any upload', async () => {
      const token = (await t.login('alice')).access_token;
      const start = (await (await fetch(`${t.url}/api/changes?cursor=now`, { headers: bearer(token) })).json()) as { cursor: string };
      await writeFile(join(local, 'feed.txt'), 'feed');
      const r = await sftpBatch(id, port, 'alice', 'put feed.txt feed.txt', local);
      assert.equal(r.code, 0, r.out);
      const seen = (await (await fetch(`${t.url}/api/changes?cursor=${start.cursor}`, { headers: bearer(token) })).json()) as { changes: { type: string; path: string }[] };
      assert.ok(seen.changes.some((c) => c.type === 'created' && c.path === '/alice/feed.txt'), JSON.stringify(seen.changes));
    });

    test('a shell, a command and port forwarding are refused: only the sftp subsystem opens', async () => {
      const ssh = (...args: string[]) => run('ssh', [...sshOptions(id, port).map((a) => (a === '-P' ? '-p' : a)), ...args], { timeoutMs: 30_000 });
      const exec = await ssh('alice@127.0.0.1', 'cat /etc/passwd');
      assert.equal(exec.code, 255, exec.out);
      assert.doesNotMatch(exec.out, /root:/);
      const shell = await ssh('-tt', 'alice@127.0.0.1');
      assert.notEqual(shell.code, 0, shell.out);
      const forward = await ssh('-o', 'ExitOnForwardFailure=yes', '-W', `127.0.0.1:${new URL(t.url).port}`, 'alice@127.0.0.1');
      assert.notEqual(forward.code, 0, forward.out);
      assert.match(forward.out, /open failed|administratively prohibited|failed/i);
    });

    test('another user\'s tree is out of reach: /bob is a folder of alice\'s own, and Shared with me is empty without a grant', async () => {
      await t.fs.put('secret.txt', 'bob only', 'bob');
      const r = await sftpBatch(id, port, 'alice', ['get /bob/secret.txt stolen.txt'].join('\n'), local);
      assert.notEqual(r.code, 0);
      assert.match(r.out, /not found|No such file/i);
      const up = await sftpBatch(id, port, 'alice', ['-mkdir ../bob', 'put note.txt ../bob/secret.txt', 'ls "/Shared with me"'].join('\n'), local);
      assert.equal(up.code, 0, up.out);
      assert.equal(await t.fs.text('secret.txt', 'bob'), 'bob only', 'bob\'s file is untouched');
      assert.equal(await t.fs.text('bob/secret.txt', 'alice'), 'hello över sftp\n', 'the write landed in alice\'s own folder "bob"');
    });
  });
}
