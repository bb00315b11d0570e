import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig, redactedConfig, UsageError } from './load.js';
import { oidcProblem } from './oidc.js';

test('--oidc-issuer: https, or http only on a loopback host; no query or credentials', () => {
  assert.equal(loadConfig({ oidcIssuer: 'https://auth.example.com/realms/main' }, {}).oidcIssuer, 'https://auth.example.com/realms/main');
  assert.equal(loadConfig({}, { FILE_CLOUD_OIDC_ISSUER: 'http://127.0.0.1:9000' }).oidcIssuer, 'http://127.0.0.1:9000');
  for (const bad of ['http://auth.example.com', 'ftp://x', 'not a url', 'https://u:p@auth.example.com', 'https://auth.example.com/?x=1']) {
    assert.throws(() => loadConfig({ oidcIssuer: bad }, {}), (e: unknown) => e instanceof UsageError && /--oidc-issuer/.test(e.message), bad);
  }
});

test('single sign-on options: defaults, scopes always with openid, create-users on/off, the secret redacted', () => {
  const c = loadConfig({}, {});
  assert.equal(c.oidcScopes, 'openid profile email');
  assert.equal(c.oidcUsernameClaim, 'preferred_username');
  assert.equal(c.oidcGroupsClaim, 'groups');
  assert.equal(c.oidcCreateUsers, true);
  assert.equal(c.oidcOnly, false);
  assert.equal(loadConfig({ oidcScopes: 'profile,groups' }, {}).oidcScopes, 'openid profile groups');
  assert.equal(loadConfig({ oidcCreateUsers: 'off' }, {}).oidcCreateUsers, false);
  assert.equal(loadConfig({}, { FILE_CLOUD_OIDC_CREATE_USERS: 'no' }).oidcCreateUsers, false);
  const shown = redactedConfig(loadConfig({ oidcClientSecret: 's3cr3t-value' }, {}));
  assert.ok(!JSON.stringify(shown).includes('s3cr3t-value'));
});

test('options that do not go together are a usage error (exit 2)', () => {
  const problem = (flags: Record<string, string | boolean>) => oidcProblem(loadConfig(flags, {}));
  assert.equal(problem({}), undefined);
  assert.match(problem({ oidcIssuer: 'https://idp.example' }) ?? '', /--oidc-client-id/);
  assert.match(problem({ oidcOnly: true }) ?? '', /--oidc-only needs --oidc-issuer/);
  assert.match(problem({ oidcIssuer: 'https://idp.example', oidcClientId: 'fc', oidcClientSecret: 'a', oidcClientSecretFile: '/x' }) ?? '', /not both/);
  assert.equal(problem({ oidcIssuer: 'https://idp.example', oidcClientId: 'fc' }), undefined);
});
