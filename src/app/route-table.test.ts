import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authKinds } from './route-table.js';

test('authKinds reads config.access rules and the older config.auth lists, and names an unknown form', () => {
  const rows: [unknown, readonly string[] | undefined][] = [
    [undefined, undefined],
    [{}, undefined],
    [{ auth: [] }, []],
    [{ auth: ['user', 'pathToken'] }, ['user', 'pathToken']],
    [{ auth: { need: 'write' } }, ['<config.auth of an unknown form: {"need":"write"}>']],
    [{ access: { who: 'public' } }, undefined],
    [{ access: { who: 'cookie' } }, undefined],
    [{ access: { who: 'user' } }, ['user']],
    [{ access: { who: 'admin' } }, ['user']],
    [{ access: { who: 'user', pathToken: true } }, ['user', 'pathToken']],
    [{ access: { who: 'user', basic: true } }, ['user', 'basic']],
    [{ access: { who: 'share', share: 'page' } }, ['share']],
    [{ access: { who: 'robot' } }, ['<config.access of an unknown form: {"who":"robot"}>']],
  ];
  for (const [config, want] of rows) assert.deepEqual(authKinds(config as Parameters<typeof authKinds>[0]), want, JSON.stringify(config));
});
