import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDataDir } from '../../src/main.js';
import { loadConfig } from '../../src/config/load.js';
import { runCli } from '../helpers/server.js';

test('user local NAME on|off marks a break-glass account for --oidc-only; user sso NAME on|off opens one to a link; bad words are usage errors', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-oidc-cli-'));
  try {
    assert.equal((await runCli(['--data-dir', dir, 'user', 'add', 'keeper', '--password', 'keeper-password'])).code, 0);
    const on = await runCli(['--data-dir', dir, 'user', 'local', 'keeper', 'on']);
    assert.equal(on.code, 0, on.stderr);
    const isLocal = async () => {
      const { store, backend } = await openDataDir(loadConfig({ dataDir: dir }, {}, ['global']), false);
      try {
        return await store.oidc.isLocal((await store.users.getByName('keeper'))!.id);
      } finally {
        await backend.close();
        await store.close();
      }
    };
    assert.equal(await isLocal(), true);
    assert.equal((await runCli(['--data-dir', dir, 'user', 'local', 'keeper', 'off'])).code, 0);
    assert.equal(await isLocal(), false);
    assert.equal((await runCli(['--data-dir', dir, 'user', 'local', 'keeper', 'maybe'])).code, 2);
    const sso = await runCli(['--data-dir', dir, 'user', 'sso', 'keeper', 'on']);
    assert.equal(sso.code, 0, sso.stderr);
    assert.match(sso.stderr, /next single sign-on as "keeper"/);
    assert.equal((await runCli(['--data-dir', dir, 'user', 'sso', 'keeper', 'off'])).code, 0);
    const nobody = await runCli(['--data-dir', dir, 'user', 'local', 'nobody', 'on']);
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /no user "nobody"/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('serve refuses single sign-on options that do not go together, with exit code 2 and one line', async () => {
  const rows: [string[], RegExp][] = [
    [['--oidc-only'], /--oidc-only needs --oidc-issuer/],
    [['--oidc-issuer', 'https://idp.example'], /--oidc-issuer needs --oidc-client-id/],
    [['--oidc-issuer', 'http://idp.example', '--oidc-client-id', 'fc'], /https:\/\/ issuer URL/],
  ];
  for (const [args, message] of rows) {
    const r = await runCli(['serve', '--port', '0', '--data-dir', join(tmpdir(), 'fc-never-created'), ...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});
