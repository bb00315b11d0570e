// SFTP sign-in under --oidc-only (issue 52, CONTRACT "SFTP (opt-in)"), on every backend, with
// OpenSSH's sftp: the account password of a single sign-on account is refused as on the web, a
// local (break-glass) account's password still signs in, and a single sign-on user signs in with
// an app password or a key added through the API.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { ssoSignIn, startIdp, type TestIdp } from '../helpers/oidc-idp.js';
import { sftpBatch, sftpFlags, sftpPort, sftpWithPassword, sshIdentity, toolSkip, type SshIdentity } from '../helpers/sftp.js';

for (const [storage, skip] of BACKENDS) {
  describe(`SFTP sign-in with --oidc-only on ${storage}`, { skip: skip ?? toolSkip('sftp') }, () => {
    let idp: TestIdp;
    let t: TestApp;
    let local: string;
    let maxKey: SshIdentity;
    before(async () => {
      idp = await startIdp();
      idp.accounts.set('max', { login: 'max', sub: 'sub-max', password: 'max-secret', claims: { preferred_username: 'max' } });
      t = await startApp({ storage, users: ['pat', 'breakglass'], flags: { ...(await sftpFlags(storage)), oidcIssuer: idp.issuer, oidcClientId: idp.clientId, oidcClientSecret: idp.clientSecret, oidcOnly: true } });
      await t.store.oidc.setLocal((await t.store.users.getByName('breakglass'))!.id, true);
      local = await mkdtemp(join(tmpdir(), 'fc-sftp-oidc-'));
      await writeFile(join(local, 'up.txt'), 'uploaded');
      maxKey = await sshIdentity(t, 'max', { add: false });
    });
    after(async () => {
      await t?.close();
      await idp?.stop();
      await maxKey?.dispose();
      if (local) await rm(local, { recursive: true, force: true });
    });

    test('a single sign-on account\'s password is refused; a local account\'s signs in', async () => {
      const pat = await sftpWithPassword(sftpPort(t), 'pat', 'pat-password', 'put up.txt by-password.txt', local);
      assert.notEqual(pat.code, 0, pat.out);
      assert.match(pat.out, /Permission denied/);
      assert.deepEqual(await t.fs.names('', 'pat'), []);
      const breakglass = await sftpWithPassword(sftpPort(t), 'breakglass', 'breakglass-password', 'put up.txt by-password.txt', local);
      assert.equal(breakglass.code, 0, breakglass.out);
      assert.equal(await t.fs.text('by-password.txt', 'breakglass'), 'uploaded');
    });

    test('a single sign-on user signs in with an app password and with a key', async () => {
      const sso = await ssoSignIn(t.url, 'max', 'max-secret');
      assert.equal(sso.status, 200, sso.body);
      const token = sso.tokens!.access_token;
      const appPassword = ((await (await postJson(`${t.url}/api/keys`, { name: 'sftp' }, bearer(token))).json()) as { key: string }).key;
      const byAppPassword = await sftpWithPassword(sftpPort(t), 'max', appPassword, 'put up.txt by-app-password.txt', local);
      assert.equal(byAppPassword.code, 0, byAppPassword.out);
      const added = await postJson(`${t.url}/api/me/ssh-keys`, { name: 'laptop', key: maxKey.publicKey }, bearer(token));
      assert.equal(added.status, 201, await added.text());
      const byKey = await sftpBatch(maxKey, sftpPort(t), 'max', 'put up.txt by-key.txt', local);
      assert.equal(byKey.code, 0, byKey.out);
      assert.deepEqual(await t.fs.names('', 'max'), ['by-app-password.txt', 'by-key.txt']);
    });
  });
}
