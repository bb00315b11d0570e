import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busyPaths, isBusy } from './busy-paths.js';

const dir = 's3-edit:b/p/alice';
const within = `${dir}/`;

test('busyPaths: the held edit leases below the walked folder, as paths; the folder itself makes all busy', () => {
  const cases: [string[], string[] | 'all'][] = [
    [[], []],
    [[`${within}Photos`], ['Photos']],
    [[`${within}Photos`, `${within}Pictures/2025/p0.jpg`], ['Photos', 'Pictures/2025/p0.jpg']],
    [[`${within}Photos`, dir], 'all'],
    // Another user whose name starts like this one's, and the bare prefix: not below the folder.
    [['s3-edit:b/p/alice2/x', 's3-edit:b/p/alice0'], []],
  ];
  // The user root: its own lease name is its prefix (`PREFIX<user>/`).
  assert.deepEqual(busyPaths(['s3-edit:b/p/alice/', 's3-edit:b/p/alice/x'], 's3-edit:b/p/alice/', 's3-edit:b/p/alice/'), 'all');
  assert.deepEqual(busyPaths(['s3-edit:b/p/alice/x'], 's3-edit:b/p/alice/', 's3-edit:b/p/alice/'), ['x']);
  for (const [held, want] of cases) assert.deepEqual(busyPaths(held, dir, within), want, JSON.stringify(held));
});

test('isBusy: a path at or below a busy one; never a sibling that only starts alike', () => {
  const busy = new Set(['Photos', 'a/b']);
  const cases: [string[], boolean][] = [
    [['Photos'], true],
    [['Photos', '2025', 'p0.jpg'], true],
    [['Photos2'], false],
    [['a'], false],
    [['a', 'b'], true],
    [['a', 'bc'], false],
    [['a', 'b', 'c'], true],
    [[], false],
  ];
  for (const [path, want] of cases) assert.equal(isBusy(path, busy), want, path.join('/'));
  assert.equal(isBusy(['x'], 'all'), true);
  assert.equal(isBusy(['x'], new Set()), false);
});
