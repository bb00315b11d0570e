import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBareVersion, versionPacket } from './extensions.js';

test('versionPacket: length, type 2, version 3, then each extension as two SSH strings', () => {
  const rows: [Record<string, string>, string][] = [
    [{}, '00000005' + '02' + '00000003'],
    [{ 'posix-rename@openssh.com': '1' }, '00000026' + '02' + '00000003' + '00000018' + Buffer.from('posix-rename@openssh.com').toString('hex') + '00000001' + '31'],
  ];
  for (const [extensions, hex] of rows) assert.equal(versionPacket(extensions).toString('hex'), hex, JSON.stringify(extensions));
});

test('isBareVersion: only the 9-byte VERSION 3 answer without extensions', () => {
  const rows: [Buffer, boolean][] = [
    [versionPacket({}), true],
    [versionPacket({ 'posix-rename@openssh.com': '1' }), false],
    [Buffer.from('000000050200000002', 'hex'), false],
    [Buffer.from('000000050100000003', 'hex'), false],
    [Buffer.from('0000000501', 'hex'), false],
  ];
  for (const [payload, bare] of rows) assert.equal(isBareVersion(payload), bare, payload.toString('hex'));
});
