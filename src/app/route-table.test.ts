import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authKinds, hidesOnAuthFailure } from './route-table.js';

test('authKinds reads config.auth (a list of kinds) and config.access (the rule), and names an unknown form', () => {
  const rows: [Record<string, unknown> | undefined, readonly string[] | undefined][] = [
    [undefined, undefined],
    [{}, undefined],
    [{ auth: [] }, []],
    [{ auth: ['user', 'pathToken'] }, ['user', 'pathToken']],
    [{ auth: { kinds: ['user'] } }, ['user']],
    [{ auth: { need: 'write' } }, ['<config.auth of an unknown form: {"need":"write"}>']],
    [{ access: { who: 'public' } }, undefined],
    [{ access: { who: 'user', pathToken: true } }, ['user', 'pathToken']],
    [{ access: { who: 'user', basic: true, hide: true } }, ['user', 'basic']],
    [{ access: { who: 'admin' } }, ['admin']],
    [{ access: { who: 'user', sessionOnly: true } }, ['session']],
    [{ access: { who: 'share', share: 'page' } }, ['share']],
    [{ access: { who: 'cookie' } }, ['cookie']],
    [{ access: { level: 3 } }, ['<config.access of an unknown form: {"level":3}>']],
  ];
  for (const [config, want] of rows) assert.deepEqual(authKinds(config), want, JSON.stringify(config));
});

test('hidesOnAuthFailure reads either declaration', () => {
  assert.equal(hidesOnAuthFailure(undefined), false);
  assert.equal(hidesOnAuthFailure({ hideOnAuthFailure: true }), true);
  assert.equal(hidesOnAuthFailure({ access: { who: 'user', hide: true } }), true);
  assert.equal(hidesOnAuthFailure({ access: { who: 'user' } }), false);
});
