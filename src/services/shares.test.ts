import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../domain/errors.js';
import { isShareId, subPathSegments, validateShareOptions, type CreateShareInput } from './shares.js';

type Options = Omit<CreateShareInput, 'path'>;
const none: Options = { expiresIn: undefined, password: undefined, maxDownloads: undefined, uploadOnly: undefined };

test('validateShareOptions: what a new share may ask for', () => {
  const ok: [Partial<Options>, boolean][] = [
    [{}, true],
    [{}, false],
    [{ expiresIn: 1 }, true],
    [{ expiresIn: null }, true],
    [{ expiresIn: 100 * 365 * 86_400 }, true],
    [{ maxDownloads: 1 }, true],
    [{ maxDownloads: null }, false],
    [{ password: 'x' }, true],
    [{ password: 'x'.repeat(1024) }, true],
    [{ password: null }, true],
    [{ uploadOnly: true }, false],
    [{ uploadOnly: true, maxDownloads: null }, false],
    [{ uploadOnly: false }, true],
  ];
  for (const [opts, isFile] of ok) assert.doesNotThrow(() => validateShareOptions({ ...none, ...opts }, isFile), JSON.stringify(opts));
  const bad: [Partial<Options>, boolean][] = [
    [{ expiresIn: 0 }, true],
    [{ expiresIn: -1 }, true],
    [{ expiresIn: 1.5 }, true],
    [{ expiresIn: 100 * 365 * 86_400 + 1 }, true],
    [{ maxDownloads: 0 }, true],
    [{ maxDownloads: -3 }, true],
    [{ maxDownloads: 2 ** 53 }, true],
    [{ password: '' }, true],
    [{ password: 'x'.repeat(1025) }, true],
    [{ uploadOnly: true }, true],
    [{ uploadOnly: true, maxDownloads: 3 }, false],
  ];
  for (const [opts, isFile] of bad) {
    assert.throws(() => validateShareOptions({ ...none, ...opts }, isFile), (e: unknown) => e instanceof AppError && e.code === 'bad_request', JSON.stringify(opts));
  }
});

test('subPathSegments: storage path rules, nothing can climb out', () => {
  const ok: [string, string[]][] = [
    ['', []],
    ['a', ['a']],
    ['a/', ['a']],
    ['a b/c#d?.txt', ['a b', 'c#d?.txt']],
    ['.hidden/...', ['.hidden', '...']],
    ['ü/😀', ['ü', '😀']],
  ];
  for (const [input, want] of ok) assert.deepEqual(subPathSegments(input), want, input);
  for (const input of ['/', '/a', '..', '../x', 'a/../b', '.', 'a/./b', 'a//b', '//', 'a\\b', 'a\0b', '/..', 'x/..']) {
    assert.throws(() => subPathSegments(input), (e: unknown) => e instanceof AppError && e.code === 'invalid_path', JSON.stringify(input));
  }
});

test('isShareId: 32 base64url characters only', () => {
  assert.equal(isShareId('A'.repeat(32)), true);
  assert.equal(isShareId('abcdefghijklmnopqrstuvwxyz012-_9'), true);
  for (const id of ['', 'A'.repeat(31), 'A'.repeat(33), `${'A'.repeat(31)}/`, `${'A'.repeat(31)}=`, `${'A'.repeat(31)}.`, '_assets']) assert.equal(isShareId(id), false, id);
});
