// Public keys for SFTP sign-in (CONTRACT "SFTP (opt-in)"), on every backend (SQLite and
// PostgreSQL): add, list and remove through /api/me/ssh-keys, a key that is not valid or added
// twice refused with the contract's JSON errors, keys managed only with a session, others' ids
// unknown, and both changes in the audit log.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { run, toolSkip } from '../helpers/sftp.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type SshKeyView = { id: string; name: string; algorithm: string; fingerprint: string; created: string; last_used: string | null };

for (const [storage, skip] of BACKENDS) {
  describe(`SSH keys API on ${storage}`, { skip: skip ?? toolSkip('ssh-keygen') }, () => {
    let t: TestApp;
    let alice: string;
    let dir: string;
    let line: string;
    let fingerprint: string;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      await t.addUser('root', { admin: true });
      alice = (await t.login('alice')).access_token;
      dir = await mkdtemp(join(tmpdir(), 'fc-ssh-keys-'));
      const made = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice@laptop', '-f', join(dir, 'k')]);
      assert.equal(made.code, 0, made.out);
      line = (await readFile(join(dir, 'k.pub'), 'utf8')).trim();
      fingerprint = (await run('ssh-keygen', ['-lf', join(dir, 'k.pub')])).out.split(' ')[1] as string;
    });
    after(async () => {
      await t?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const add = (token: string, body: unknown) => postJson(`${t.url}/api/me/ssh-keys`, body, bearer(token));
    const list = async (token: string) => ((await (await fetch(`${t.url}/api/me/ssh-keys`, { headers: bearer(token) })).json()) as { keys: SshKeyView[] }).keys;

    test('POST adds a key with ssh-keygen\'s fingerprint; GET lists it; DELETE removes it; another user\'s id is 404', async () => {
      const res = await add(alice, { name: 'laptop', key: line });
      assert.equal(res.status, 201, await res.clone().text());
      const k = (await res.json()) as SshKeyView;
      assert.deepEqual(Object.keys(k).sort(), ['algorithm', 'created', 'fingerprint', 'id', 'last_used', 'name']);
      assert.equal(k.algorithm, 'ssh-ed25519');
      assert.equal(k.fingerprint, fingerprint);
      assert.equal(k.last_used, null);
      assert.deepEqual((await list(alice)).map((x) => x.id), [k.id]);
      const bob = (await t.login('bob')).access_token;
      assert.deepEqual(await list(bob), []);
      const foreign = await fetch(`${t.url}/api/me/ssh-keys/${k.id}`, { method: 'DELETE', headers: bearer(bob) });
      assert.equal(foreign.status, 404);
      assert.equal(((await foreign.json()) as { error: string }).error, 'not_found');
      // The same key is bob's to add too: a key signs in only as the user who names it.
      assert.equal((await add(bob, { name: 'shared laptop', key: line })).status, 201);
      const gone = await fetch(`${t.url}/api/me/ssh-keys/${k.id}`, { method: 'DELETE', headers: bearer(alice) });
      assert.equal(gone.status, 204);
      assert.deepEqual(await list(alice), []);
      assert.equal((await list(bob)).length, 1);
    });

    test('a key that is not valid is 400 bad_request saying why; the same key twice is 409 already_exists', async () => {
      const table: [unknown, RegExp][] = [
        [{ name: 'x', key: 'ssh-dss AAAAB3NzaC1kc3MAAACBAM' }, /not accepted/],
        [{ name: 'x', key: '-----BEGIN OPENSSH PRIVATE KEY-----' }, /private key/],
        [{ name: 'x', key: 'ssh-ed25519 AAAA' }, /not valid/],
        [{ name: '', key: line }, /"name"/],
        [{ name: 'x' }, /"key"/],
      ];
      for (const [body, why] of table) {
        const res = await add(alice, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        const err = (await res.json()) as { error: string; message: string };
        assert.equal(err.error, 'bad_request');
        assert.match(err.message, why);
      }
      assert.equal((await add(alice, { name: 'one', key: line })).status, 201);
      const twice = await add(alice, { name: 'two', key: `${line.split(' ').slice(0, 2).join(' ')} other comment` });
      assert.equal(twice.status, 409);
      assert.equal(((await twice.json()) as { error: string }).error, 'already_exists');
    });

    test('keys are managed with a session only: an app password gets 403, no credential 401', async () => {
      const key = ((await (await postJson(`${t.url}/api/keys`, { name: 'script' }, bearer(alice))).json()) as { key: string }).key;
      const byKey = await add(key, { name: 'planted', key: line });
      assert.equal(byKey.status, 403);
      assert.equal(((await byKey.json()) as { error: string }).error, 'forbidden');
      assert.equal((await fetch(`${t.url}/api/me/ssh-keys`, { headers: bearer(key) })).status, 403);
      assert.equal((await fetch(`${t.url}/api/me/ssh-keys`)).status, 401);
    });

    test('adding and removing a key are in the audit log', async () => {
      const bob = (await t.login('bob')).access_token;
      const [k] = await list(bob);
      assert.ok(k);
      assert.equal((await fetch(`${t.url}/api/me/ssh-keys/${k.id}`, { method: 'DELETE', headers: bearer(bob) })).status, 204);
      const root = (await t.login('root')).access_token;
      const events = ((await (await fetch(`${t.url}/api/admin/audit?user=bob`, { headers: bearer(root) })).json()) as { events: { type: string; target: string | null; detail: Record<string, unknown> | null }[] }).events;
      const added = events.find((e) => e.type === 'ssh_key.added');
      assert.equal(added?.detail?.fingerprint, fingerprint);
      assert.ok(events.some((e) => e.type === 'ssh_key.removed' && e.target === k.id));
    });
  });
}
