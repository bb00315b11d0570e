import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../domain/errors.js';
import { MAX_KEY_EXPIRES_IN, MAX_KEY_NAME_LENGTH, validateKeyInput } from './api-keys.js';

const OK: [string, Record<string, unknown>, { name: string; readOnly: boolean; expiresIn: number | undefined }][] = [
  ['a name only', { name: 'laptop' }, { name: 'laptop', readOnly: false, expiresIn: undefined }],
  ['read-only with expiry', { name: 'backup', readOnly: true, expiresIn: 3600 }, { name: 'backup', readOnly: true, expiresIn: 3600 }],
  ['null expiry is never', { name: 'x', expiresIn: null }, { name: 'x', readOnly: false, expiresIn: undefined }],
  ['name trimmed', { name: '  phone  ' }, { name: 'phone', readOnly: false, expiresIn: undefined }],
  ['unicode name', { name: 'Télé 📱' }, { name: 'Télé 📱', readOnly: false, expiresIn: undefined }],
  ['longest expiry', { name: 'x', expiresIn: MAX_KEY_EXPIRES_IN }, { name: 'x', readOnly: false, expiresIn: MAX_KEY_EXPIRES_IN }],
];
for (const [title, input, expected] of OK) {
  test(`validateKeyInput accepts ${title}`, () => assert.deepEqual(validateKeyInput({ name: input.name, readOnly: input.readOnly, expiresIn: input.expiresIn }), expected));
}

const BAD: [string, Record<string, unknown>][] = [
  ['no name', {}],
  ['empty name', { name: '' }],
  ['blank name', { name: '   ' }],
  ['number name', { name: 5 }],
  ['too long name', { name: 'x'.repeat(MAX_KEY_NAME_LENGTH + 1) }],
  ['control character', { name: 'a\nb' }],
  ['read_only a string', { name: 'x', readOnly: 'yes' }],
  ['expiry zero', { name: 'x', expiresIn: 0 }],
  ['expiry negative', { name: 'x', expiresIn: -5 }],
  ['expiry fraction', { name: 'x', expiresIn: 1.5 }],
  ['expiry a string', { name: 'x', expiresIn: '60' }],
  ['expiry too long', { name: 'x', expiresIn: MAX_KEY_EXPIRES_IN + 1 }],
];
for (const [title, input] of BAD) {
  test(`validateKeyInput refuses ${title} with 400`, () => {
    assert.throws(() => validateKeyInput({ name: input.name, readOnly: input.readOnly, expiresIn: input.expiresIn }), (e: unknown) => e instanceof AppError && e.status === 400);
  });
}
