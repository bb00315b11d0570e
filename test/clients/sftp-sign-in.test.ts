// Sign-in to the SFTP front end (issue 52) with OpenSSH's sftp, on every backend: the account
// password, an app password (a read-only one reads but never writes), a key from
// /api/me/ssh-keys; a user with TOTP on never by the password alone; a disabled user not at all;
// every attempt in the audit log; and the login throttle shared with HTTP per client address.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { base32Decode, totp } from '../../src/domain/totp.js';
import { sftpBatch, sftpFlags, sftpPort, sftpWithPassword, sshIdentity, toolSkip, type SshIdentity } from '../helpers/sftp.js';

type AuditEvent = { type: string; actor: string | null; outcome: string; detail: Record<string, unknown> | null };

for (const [storage, skip] of BACKENDS) {
  describe(`SFTP sign-in on ${storage}`, { skip: skip ?? toolSkip('sftp') }, () => {
    let t: TestApp;
    let port: number;
    let local: string;
    let carolKey: SshIdentity;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob', 'carol', 'dave'], flags: await sftpFlags(storage) });
      await t.addUser('root', { admin: true });
      port = sftpPort(t);
      local = await mkdtemp(join(tmpdir(), 'fc-sftp-signin-'));
      await writeFile(join(local, 'up.txt'), 'uploaded');
      carolKey = await sshIdentity(t, 'carol');
    });
    after(async () => {
      await t?.close();
      await carolKey?.dispose();
      if (local) await rm(local, { recursive: true, force: true });
    });

    const audit = async () => {
      const root = (await t.login('root')).access_token;
      return ((await (await fetch(`${t.url}/api/admin/audit`, { headers: bearer(root) })).json()) as { events: AuditEvent[] }).events;
    };

    test('the account password signs in and writes; a wrong one is refused; both are audited with method sftp', async () => {
      const ok = await sftpWithPassword(port, 'alice', 'alice-password', 'put up.txt by-password.txt', local);
      assert.equal(ok.code, 0, ok.out);
      assert.equal(await t.fs.text('by-password.txt'), 'uploaded');
      const wrong = await sftpWithPassword(port, 'alice', 'not-her-password', 'ls', local);
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.out, /Permission denied/);
      const events = await audit();
      assert.ok(events.some((e) => e.type === 'login.succeeded' && e.actor === 'alice' && e.detail?.method === 'sftp' && e.detail?.via === 'password'), JSON.stringify(events.slice(0, 5)));
      assert.ok(events.some((e) => e.type === 'login.failed' && e.actor === 'alice' && e.detail?.method === 'sftp'));
    });

    test('an app password signs in; a read-only one lists and reads but every write is refused and nothing is stored', async () => {
      const token = (await t.login('bob')).access_token;
      await t.fs.put('mine.txt', 'bob file', 'bob');
      const key = async (readOnly: boolean) => ((await (await postJson(`${t.url}/api/keys`, { name: 'sftp', read_only: readOnly }, bearer(token))).json()) as { key: string }).key;
      const full = await sftpWithPassword(port, 'bob', await key(false), 'put up.txt by-key.txt', local);
      assert.equal(full.code, 0, full.out);
      assert.equal(await t.fs.text('by-key.txt', 'bob'), 'uploaded');
      const ro = await key(true);
      const read = await sftpWithPassword(port, 'bob', ro, 'get mine.txt bob-got.txt', local);
      assert.equal(read.code, 0, read.out);
      for (const write of ['put up.txt ro.txt', 'mkdir ro-dir', 'rm mine.txt', 'rename mine.txt moved.txt']) {
        const r = await sftpWithPassword(port, 'bob', ro, write, local);
        assert.notEqual(r.code, 0, `${write}: ${r.out}`);
        assert.match(r.out, /Permission denied|read-only/i, write);
      }
      assert.deepEqual(await t.fs.names('', 'bob'), ['by-key.txt', 'mine.txt']);
      // Another user's name with the key is refused like a wrong password.
      assert.notEqual((await sftpWithPassword(port, 'alice', ro, 'ls', local)).code, 0);
    });

    test('with TOTP on, the right password alone is refused; a key still signs in', async () => {
      const token = (await t.login('carol')).access_token;
      const setup = (await (await postJson(`${t.url}/api/me/totp`, {}, bearer(token))).json()) as { secret: string };
      const code = totp(base32Decode(setup.secret) as Buffer, Date.now());
      assert.equal((await postJson(`${t.url}/api/me/totp/confirm`, { code }, bearer(token))).status, 200);
      const byPassword = await sftpWithPassword(port, 'carol', 'carol-password', 'ls', local);
      assert.notEqual(byPassword.code, 0);
      assert.match(byPassword.out, /Permission denied/);
      const byKey = await sftpBatch(carolKey, port, 'carol', 'put up.txt by-ssh-key.txt', local);
      assert.equal(byKey.code, 0, byKey.out);
      assert.equal(await t.fs.text('by-ssh-key.txt', 'carol'), 'uploaded');
      const events = await audit();
      assert.ok(events.some((e) => e.type === 'login.failed' && e.actor === 'carol' && e.detail?.reason === 'totp_required'));
      assert.ok(events.some((e) => e.type === 'login.succeeded' && e.actor === 'carol' && e.detail?.via === 'ssh_key'));
    });

    test('a key signs in only as its user; a disabled user signs in with nothing', async () => {
      const asOther = await sftpBatch(carolKey, port, 'dave', 'ls', local);
      assert.notEqual(asOther.code, 0);
      const dave = await sshIdentity(t, 'dave');
      try {
        assert.equal((await sftpBatch(dave, port, 'dave', 'ls', local)).code, 0);
        const root = (await t.login('root')).access_token;
        const res = await fetch(`${t.url}/api/admin/users/dave`, { method: 'PATCH', headers: { ...bearer(root), 'content-type': 'application/json' }, body: '{"disabled":true}' });
        assert.equal(res.status, 200, await res.text());
        const byKey = await sftpBatch(dave, port, 'dave', 'ls', local);
        assert.notEqual(byKey.code, 0);
        assert.match(byKey.out, /Permission denied/);
        assert.notEqual((await sftpWithPassword(port, 'dave', 'dave-password', 'ls', local)).code, 0);
      } finally {
        await dave.dispose();
      }
    });
  });
}

describe('the SFTP sign-in throttle is the HTTP login throttle of the same address', { skip: toolSkip('sftp') }, () => {
  let t: TestApp;
  let local: string;
  before(async () => {
    t = await startApp({ users: ['alice'], flags: { dev: false, loginRateLimit: '3', sftpPort: '0' } });
    local = await mkdtemp(join(tmpdir(), 'fc-sftp-throttle-'));
  });
  after(async () => {
    await t?.close();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('three wrong SFTP passwords in a minute: the next HTTP login from the address is 429, and SFTP refuses even the right one', async () => {
    const port = sftpPort(t);
    for (let i = 0; i < 3; i++) assert.notEqual((await sftpWithPassword(port, 'alice', `wrong-${i}`, 'ls', local)).code, 0);
    const http = await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'alice-password' });
    assert.equal(http.status, 429);
    assert.equal(((await http.json()) as { error: string }).error, 'rate_limited');
    const right = await sftpWithPassword(port, 'alice', 'alice-password', 'ls', local);
    assert.notEqual(right.code, 0, right.out);
  });
});
