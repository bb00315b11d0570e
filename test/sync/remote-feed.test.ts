import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyChanges, type ChangeEntry, type UnhashedFile } from '../../packages/sync/src/remote-feed.js';
import type { FileVersion } from '../../packages/sync/src/tree.js';

test('applyChanges: a file entry without its SHA-256 is read from its bytes later, never taken as an error or a version', () => {
  const remote = new Map<string, FileVersion>([['old.txt', { sha256: 'a'.repeat(64), size: 3, id: 'i1' }]]);
  const entries: ChangeEntry[] = [
    { type: 'created', path: '/alice/Sync/new.txt', is_file: true, size: 5, sha256: 'b'.repeat(64), id: 'i2' },
    { type: 'modified', path: '/alice/Sync/old.txt', is_file: true, size: 4, id: 'i1' },
    { type: 'created', path: '/alice/Sync/mine.txt', is_file: true, size: 1, sha256: 'c'.repeat(64), origin: 'me' },
  ];
  const unhashed: UnhashedFile[] = [];
  const folders = applyChanges(remote, entries, '/alice/Sync', 'me', unhashed);
  assert.deepEqual(folders, []);
  assert.deepEqual(unhashed, [{ path: 'old.txt', id: 'i1' }]);
  assert.equal(remote.has('old.txt'), false, 'the old version is no longer what the server holds');
  assert.equal(remote.get('new.txt')?.sha256, 'b'.repeat(64));
  assert.equal(remote.has('mine.txt'), false, 'its own echo is skipped');
});
