import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../domain/errors.js';
import { keyBelow, sftpPath, sftpPlace, sftpSegments } from './paths.js';

test('sftpSegments resolves . and .. against / and never rises above it', () => {
  const table: [string, string[]][] = [
    ['/', []],
    ['', []],
    ['.', []],
    ['a/b', ['a', 'b']],
    ['/a//b/', ['a', 'b']],
    ['/a/./b/../c', ['a', 'c']],
    ['/../../etc/passwd', ['etc', 'passwd']],
    ['..', []],
    ['/a/b/../../..', []],
  ];
  for (const [raw, want] of table) assert.deepEqual(sftpSegments(raw), want, raw);
  assert.equal(sftpPath(['a', 'b']), '/a/b');
  assert.equal(sftpPath([]), '/');
});

test('sftpPlace maps / to the caller\'s own root and Shared with me to received items', () => {
  assert.deepEqual(sftpPlace('alice', '/'), { kind: 'own', key: { user: 'alice', segments: [] } });
  assert.deepEqual(sftpPlace('alice', 'docs/a.txt'), { kind: 'own', key: { user: 'alice', segments: ['docs', 'a.txt'] } });
  // Another user's name is just a folder of one's own: no path reaches another tree except through a grant.
  assert.deepEqual(sftpPlace('alice', '/bob/secret.txt'), { kind: 'own', key: { user: 'alice', segments: ['bob', 'secret.txt'] } });
  assert.deepEqual(sftpPlace('alice', '/../bob'), { kind: 'own', key: { user: 'alice', segments: ['bob'] } });
  assert.deepEqual(sftpPlace('alice', '/Shared with me'), { kind: 'shared-top' });
  assert.deepEqual(sftpPlace('alice', '/Shared with me/Photos (bob)/x/y.jpg'), { kind: 'shared', entry: 'Photos (bob)', rest: ['x', 'y.jpg'] });
});

test('sftpPlace refuses the names the storage API refuses', () => {
  for (const raw of ['/a\0b', '/a\\b', `/${'x'.repeat(300)}`]) {
    assert.throws(() => sftpPlace('alice', raw), (e: unknown) => e instanceof AppError && e.code === 'invalid_path', raw);
  }
});

test('keyBelow puts the rest under the received item\'s own key', () => {
  assert.deepEqual(keyBelow({ user: 'bob', segments: ['Photos'] }, ['x', 'y.jpg']), { user: 'bob', segments: ['Photos', 'x', 'y.jpg'] });
  assert.deepEqual(keyBelow({ user: 'bob', segments: ['Photos'] }, []), { user: 'bob', segments: ['Photos'] });
  assert.throws(() => keyBelow({ user: 'bob', segments: ['Photos'] }, ['a\\b']), AppError);
});
