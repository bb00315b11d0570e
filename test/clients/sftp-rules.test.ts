// The rules of the other front ends over SFTP (issue 52), on every backend: the quota (an upload
// past it is refused and nothing stays), grants under `Shared with me/` (read, write, read-only
// refused, the shared item itself the owner's), WebDAV locks binding SFTP's writes, a client killed
// mid-upload leaving nothing, and the host key: kept across restarts on local disk, in the database
// with PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { startServer } from '../helpers/server.js';
import { freePort, run, sftpBatch, sftpFlags, sftpPort, sftpRequests, sshIdentity, toolSkip, withSftp, type SshIdentity } from '../helpers/sftp.js';

/** The SHA256 fingerprint of the Ed25519 host key a server at `port` shows, read with ssh-keyscan. */
async function hostFingerprint(port: number): Promise<string> {
  const scan = await run('ssh-keyscan', ['-p', String(port), '-t', 'ed25519', '127.0.0.1'], { timeoutMs: 30_000 });
  const line = scan.out.split('\n').find((l) => l.includes('ssh-ed25519'));
  assert.ok(line, scan.out);
  const fp = await run('ssh-keygen', ['-lf', '-'], { input: `${line}\n` });
  return fp.out.split(' ')[1] as string;
}

/** Waits until `dir` holds no SFTP staging file (the bound: 20 s, far beyond the server's own cleanup on disconnect). */
/** SFTP's own staged copies (`sftp-`) and the upload path's staging a new file streams into (`upload-`). */
const isStaging = (name: string) => name.startsWith('sftp-') || name.startsWith('upload-');

async function noStaging(dir: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const left = (await readdir(dir).catch(() => [] as string[])).filter(isStaging);
    if (left.length === 0) return;
    assert.ok(Date.now() < deadline, `staging files left: ${left.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const [storage, skip] of BACKENDS) {
  describe(`SFTP rules on ${storage}`, { skip: skip ?? toolSkip('sftp') }, () => {
    let t: TestApp;
    let port: number;
    let local: string;
    let alice: SshIdentity;
    let bob: SshIdentity;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: await sftpFlags(storage) });
      port = sftpPort(t);
      alice = await sshIdentity(t, 'alice');
      bob = await sshIdentity(t, 'bob');
      local = await mkdtemp(join(tmpdir(), 'fc-sftp-rules-'));
    });
    after(async () => {
      await t?.close();
      await alice?.dispose();
      await bob?.dispose();
      if (local) await rm(local, { recursive: true, force: true });
    });

    test('an upload past the quota fails at close and nothing of it stays, staging included', async () => {
      await t.store.usage.setQuota('alice', 100_000);
      try {
        await writeFile(join(local, 'small.bin'), randomBytes(10_000));
        await writeFile(join(local, 'large.bin'), randomBytes(200_000));
        const ok = await sftpBatch(alice, port, 'alice', 'put small.bin', local);
        assert.equal(ok.code, 0, ok.out);
        const over = await sftpBatch(alice, port, 'alice', 'put large.bin', local);
        assert.notEqual(over.code, 0);
        // OpenSSH prints the status's kind only; the contract's code rides in its text (replies.test.ts).
        assert.match(over.out, /close remote: Failure/);
        assert.equal(await t.fs.kind('large.bin'), undefined);
        await noStaging(join(t.dataDir, 'tmp'));
      } finally {
        await t.store.usage.setQuota('alice', null);
      }
    });

    test('a file locked through WebDAV refuses SFTP\'s replace, remove and rename (SFTP holds no lock token) until it is unlocked', async () => {
      await t.fs.put('locked.txt', 'kept while locked', 'alice');
      await writeFile(join(local, 'locked.txt'), 'a replacement');
      const basic = { authorization: `Basic ${Buffer.from('alice:alice-password').toString('base64')}` };
      const url = `${t.url}/dav/alice/locked.txt`;
      const lockinfo = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
      const lock = await fetch(url, { method: 'LOCK', headers: { ...basic, 'content-type': 'application/xml', timeout: 'Second-600' }, body: lockinfo });
      assert.equal(lock.status, 200, await lock.text());
      const token = lock.headers.get('lock-token') ?? '';
      for (const write of ['put locked.txt locked.txt', 'rm locked.txt', 'rename locked.txt moved.txt']) {
        const r = await sftpBatch(alice, port, 'alice', write, local);
        assert.notEqual(r.code, 0, `${write}: ${r.out}`);
        assert.match(r.out, /Permission denied/, write);
      }
      assert.equal(await t.fs.text('locked.txt'), 'kept while locked');
      assert.equal(await t.fs.kind('moved.txt'), undefined);
      const unlock = await fetch(url, { method: 'UNLOCK', headers: { ...basic, 'lock-token': token } });
      assert.equal(unlock.status, 204);
      const after = await sftpBatch(alice, port, 'alice', 'put locked.txt locked.txt', local);
      assert.equal(after.code, 0, after.out);
      assert.equal(await t.fs.text('locked.txt'), 'a replacement');
    });

    test('Shared with me: bob reads a read grant, writes into a write grant, is refused writes to the read one and the item itself', async () => {
      const token = (await t.login('alice')).access_token;
      await t.fs.put('team/plan.txt', 'the plan', 'alice');
      await t.fs.put('archive/old.txt', 'old', 'alice');
      assert.equal((await postJson(`${t.url}/api/grants`, { path: '/alice/team', to: 'user:bob', permission: 'write' }, bearer(token))).status, 201);
      assert.equal((await postJson(`${t.url}/api/grants`, { path: '/alice/archive', to: 'user:bob', permission: 'read' }, bearer(token))).status, 201);
      await writeFile(join(local, 'from-bob.txt'), 'bob was here');
      const listed = await sftpBatch(bob, port, 'bob', ['ls /', 'ls "/Shared with me"', 'get "/Shared with me/team (alice)/plan.txt" plan.txt', 'get "/Shared with me/archive (alice)/old.txt" old.txt', 'put from-bob.txt "/Shared with me/team (alice)/from-bob.txt"', 'rename "/Shared with me/team (alice)/from-bob.txt" "/Shared with me/team (alice)/renamed.txt"'].join('\n'), local);
      assert.equal(listed.code, 0, listed.out);
      assert.match(listed.out, /team \(alice\)/);
      assert.match(listed.out, /archive \(alice\)/);
      assert.equal(await readFile(join(local, 'plan.txt'), 'utf8'), 'the plan');
      assert.equal(await readFile(join(local, 'old.txt'), 'utf8'), 'old');
      assert.equal(await t.fs.text('team/renamed.txt', 'alice'), 'bob was here', 'bob\'s upload is in alice\'s tree');
      const refusals: [string, RegExp][] = [
        ['put from-bob.txt "/Shared with me/archive (alice)/x.txt"', /Permission denied/],
        ['rm "/Shared with me/archive (alice)/old.txt"', /Permission denied/],
        ['rmdir "/Shared with me/team (alice)"', /Permission denied/],
        ['rename "/Shared with me/team (alice)" "/gone"', /Permission denied/],
        // Nothing is made in Shared with me itself: a name there is a received item or nothing.
        ['mkdir "/Shared with me/new"', /No such file/],
      ];
      for (const [refused, why] of refusals) {
        const r = await sftpBatch(bob, port, 'bob', refused, local);
        assert.notEqual(r.code, 0, `${refused}: ${r.out}`);
        assert.match(r.out, why, refused);
      }
      assert.deepEqual(await t.fs.names('archive', 'alice'), ['old.txt']);
      assert.deepEqual(await t.fs.names('team', 'alice'), ['plan.txt', 'renamed.txt']);
      // Without a grant nothing of alice's is reachable by any name.
      const none = await sftpBatch(bob, port, 'bob', 'get "/Shared with me/secret (alice)/x" x', local);
      assert.notEqual(none.code, 0);
    });

    test('a grant narrowed while a session is open holds from that session\'s next request: the same file\'s replace is refused at once', async () => {
      const token = (await t.login('alice')).access_token;
      await t.fs.put('desk/note.txt', 'note', 'alice');
      const made = await postJson(`${t.url}/api/grants`, { path: '/alice/desk', to: 'user:bob', permission: 'write' }, bearer(token));
      assert.equal(made.status, 201);
      const grant = ((await made.json()) as { id: string }).id;
      const at = '/Shared with me/desk (alice)/note.txt';
      await withSftp(port, { username: 'bob', privateKey: await readFile(bob.key, 'utf8') }, async (s) => {
        const sftp = sftpRequests(s);
        await sftp.writeFile(at, 'written by bob');
        const narrowed = await fetch(`${t.url}/api/grants/${grant}`, { method: 'PATCH', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ permission: 'read' }) });
        assert.equal(narrowed.status, 200, await narrowed.text());
        // The session asked for this key's grant before: the narrowing holds all the same.
        await assert.rejects(sftp.writeFile(at, 'written after'), /forbidden/);
        assert.equal((await sftp.readFile(at)).toString(), 'written by bob');
      });
      assert.equal(await t.fs.text('desk/note.txt', 'alice'), 'written by bob');
    });

    test('a grant revoked while a session is open stops working in that session at once, reads included', async () => {
      const token = (await t.login('alice')).access_token;
      await t.fs.put('revoked/note.txt', 'for a while', 'alice');
      const made = await postJson(`${t.url}/api/grants`, { path: '/alice/revoked', to: 'user:bob', permission: 'read' }, bearer(token));
      assert.equal(made.status, 201);
      const { id } = (await made.json()) as { id: string };
      const at = '/Shared with me/revoked (alice)/note.txt';
      await withSftp(port, { username: 'bob', privateKey: await readFile(bob.key, 'utf8') }, async (s) => {
        const sftp = sftpRequests(s);
        assert.equal((await sftp.stat(at)).size, 'for a while'.length);
        assert.equal((await fetch(`${t.url}/api/grants/${id}`, { method: 'DELETE', headers: bearer(token) })).status, 204);
        // The same session, the same name: the grant it was reached through is gone.
        await assert.rejects(sftp.stat(at), /not_found|No such file/);
      });
    });

    test('a new file written out of order arrives whole; a write behind what was sent is refused and stores nothing', async () => {
      const client = new ssh2.Client();
      try {
        await new Promise<void>((resolve, reject) => {
          client.once('ready', () => resolve()).once('error', reject);
          void readFile(alice.key, 'utf8').then((privateKey) => client.connect({ host: '127.0.0.1', port, username: 'alice', privateKey }));
        });
        const sftp = await new Promise<ssh2.SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
        const open = (path: string) => new Promise<Buffer>((resolve, reject) => sftp.open(path, 'w', (err, h) => (err ? reject(err) : resolve(h))));
        const write = (h: Buffer, data: Buffer, at: number) => new Promise<void>((resolve, reject) => sftp.write(h, data, 0, data.length, at, (err) => (err ? reject(err) : resolve())));
        const close = (h: Buffer) => new Promise<void>((resolve, reject) => sftp.close(h, (err) => (err ? reject(err) : resolve())));
        const parts = [randomBytes(40_000), randomBytes(50_000), randomBytes(30_000)];
        const mixed = await open('/mixed.bin');
        // All three in flight at once, the last first: the later ones wait for the first.
        await Promise.all([write(mixed, parts[2] as Buffer, 90_000), write(mixed, parts[1] as Buffer, 40_000), write(mixed, parts[0] as Buffer, 0)]);
        await close(mixed);
        assert.deepEqual(await t.fs.read('mixed.bin'), Buffer.concat(parts));

        const back = await open('/back.bin');
        await write(back, parts[0] as Buffer, 0);
        await assert.rejects(write(back, Buffer.from('over'), 10), /method_not_allowed/);
        // The file would not be what the client wrote: the close fails and nothing is stored.
        await assert.rejects(close(back), /method_not_allowed/);
        await noStaging(join(t.dataDir, 'tmp'));
        assert.equal(await t.fs.kind('back.bin'), undefined);
      } finally {
        client.end();
      }
    });

    test('a client killed mid-upload leaves nothing: no file, no staging', async () => {
      const client = new ssh2.Client();
      await new Promise<void>((resolve, reject) => {
        client.once('ready', () => resolve()).once('error', reject);
        void readFile(alice.key, 'utf8').then((privateKey) => client.connect({ host: '127.0.0.1', port, username: 'alice', privateKey }));
      });
      const sftp = await new Promise<ssh2.SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
      const handle = await new Promise<Buffer>((resolve, reject) => sftp.open('/killed.bin', 'w', (err, h) => (err ? reject(err) : resolve(h))));
      const chunk = randomBytes(32 * 1024);
      for (let i = 0; i < 32; i++) await new Promise<void>((resolve, reject) => sftp.write(handle, chunk, 0, chunk.length, i * chunk.length, (err) => (err ? reject(err) : resolve())));
      // Written, acknowledged, never closed: the connection is cut as a killed client's would be.
      const seenByWriter = await new Promise<ssh2.Stats>((resolve, reject) => sftp.stat('/killed.bin', (err, st) => (err ? reject(err) : resolve(st))));
      assert.equal(seenByWriter.size, 32 * chunk.length, 'the writer sees its open file');
      // On local disk the bytes stream into the upload's staging file; S3 holds less than a part in memory.
      const want = storage === 'file' ? 1 : 0;
      const deadline = Date.now() + 10_000;
      const stagedNow = async () => (await readdir(join(t.dataDir, 'tmp'))).filter(isStaging).length;
      while ((await stagedNow()) !== want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await stagedNow(), want, 'the upload is staged while it runs');
      (client as unknown as { _sock: { destroy(): void } })._sock.destroy();
      await noStaging(join(t.dataDir, 'tmp'));
      assert.equal(await t.fs.kind('killed.bin'), undefined);
      const seen = await sftpBatch(alice, port, 'alice', 'ls', local);
      assert.doesNotMatch(seen.out, /killed\.bin/);
    });

    test('the host key is made once and kept: in data/ on local disk, in the database with PostgreSQL', async () => {
      const shown = await hostFingerprint(port);
      if (storage === 'cluster') {
        const stored = await t.store.settings.getOrCreate('sftp_host_ed25519_key', () => 'none');
        const parsed = ssh2.utils.parseKey(stored);
        assert.ok(!(parsed instanceof Error) && !Array.isArray(parsed), 'the database holds the key');
        await assert.rejects(stat(join(t.dataDir, 'ssh_host_ed25519_key')), 'no key file beside a shared database');
      } else {
        const file = await stat(join(t.dataDir, 'ssh_host_ed25519_key'));
        assert.equal(file.mode & 0o777, 0o600);
      }
      assert.match(shown, /^SHA256:/);
    });
  });
}

describe('the SFTP host key survives a restart', { skip: toolSkip('ssh-keyscan') }, () => {
  test('the same data dir shows the same host key after a restart; another data dir another key', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fc-sftp-hostkey-'));
    const other = await mkdtemp(join(tmpdir(), 'fc-sftp-hostkey-'));
    try {
      const port = await freePort();
      const first = await startServer({ dataDir, args: ['--sftp-port', String(port)] });
      let before: string;
      try {
        before = await hostFingerprint(port);
      } finally {
        await first.dispose();
      }
      const second = await startServer({ dataDir, args: ['--sftp-port', String(port)] });
      try {
        assert.equal(await hostFingerprint(port), before);
      } finally {
        await second.dispose();
      }
      const third = await startServer({ dataDir: other, args: ['--sftp-port', String(port)] });
      try {
        assert.notEqual(await hostFingerprint(port), before);
      } finally {
        await third.dispose();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await rm(other, { recursive: true, force: true });
    }
  });
});
