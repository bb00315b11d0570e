import assert from 'node:assert/strict';
import { test } from 'node:test';
import { folderWins } from './folder-wins.js';

/** Keys in the store's order; a key without `/` at its end is a file to show. Returns what shows and what is hidden, in the order settled. */
function settle(keys: string[]): { visible: string[]; hidden: string[] } {
  const hidden: string[] = [];
  const wins = folderWins<string>((f) => hidden.push(f));
  const visible: string[] = [];
  for (const k of keys) visible.push(...wins.next(k, k.endsWith('/') || k.includes('//') ? undefined : k));
  visible.push(...wins.end());
  return { visible, hidden };
}

test('a file and a folder at one name: the folder wins, whatever lies between them in key order', () => {
  const rows: [string, string[], { visible: string[]; hidden: string[] }][] = [
    ['a file alone', ['a'], { visible: ['a'], hidden: [] }],
    ['a file, then a key below its name', ['a', 'a/x'], { visible: ['a/x'], hidden: ['a'] }],
    ['a file, then a folder marker of its name', ['a', 'a/'], { visible: [], hidden: ['a'] }],
    ['names sorting between `a` and `a/` keep it held', ['a', 'a b', 'a-1', 'a.txt', 'a/x'], { visible: ['a b', 'a-1', 'a.txt', 'a/x'], hidden: ['a'] }],
    ['a name after `a/` releases it', ['a', 'a.txt', 'a0'], { visible: ['a', 'a.txt', 'a0'], hidden: [] }],
    ['`a-1` is held as well, and released by `a-2`', ['a', 'a-1', 'a-2', 'a/'], { visible: ['a-1', 'a-2'], hidden: ['a'] }],
    ['nested: `a/b` hidden by `a/b/c`, `a` by `a/b`', ['a', 'a/b', 'a/b/c'], { visible: ['a/b/c'], hidden: ['a', 'a/b'] }],
    ['a key that is no valid path still makes the folder', ['a', 'a//x'], { visible: [], hidden: ['a'] }],
    ['a non-ASCII character after the name sorts above `/`: released', ['a', 'aé'], { visible: ['a', 'aé'], hidden: [] }],
  ];
  for (const [what, keys, want] of rows) assert.deepEqual(settle(keys), want, what);
});
