import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authKinds } from './route-table.js';

test('authKinds reads config.auth as a list of kinds, an object with kinds, or names an unknown form', () => {
  const rows: [unknown, readonly string[] | undefined][] = [
    [undefined, undefined],
    [null, undefined],
    [[], []],
    [['user', 'pathToken'], ['user', 'pathToken']],
    [{ kinds: ['user'], scope: 'write' }, ['user']],
    [{ need: 'write' }, ['<config.auth of an unknown form: {"need":"write"}>']],
  ];
  for (const [auth, want] of rows) assert.deepEqual(authKinds(auth), want, JSON.stringify(auth));
});
