import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertBatches } from './changes-repo.js';

const c = (owner: string, path: string) => ({ owner, path });
const names = (batches: { owner: string; path: string }[][]) => batches.map((b) => b.map((x) => `${x.owner}:${x.path}`));

test('journal inserts: runs in order, no owner and path twice in one, at most 16 each', () => {
  const many = Array.from({ length: 35 }, (_, i) => c('a', `f${i}`));
  const cases: [string, { owner: string; path: string }[], string[][]][] = [
    ['nothing', [], []],
    ['one', [c('a', 'x')], [['a:x']]],
    ['distinct paths share a run', [c('a', 'x'), c('a', 'y'), c('b', 'x')], [['a:x', 'a:y', 'b:x']]],
    ['the same path again starts a run', [c('a', 'x'), c('a', 'y'), c('a', 'x'), c('a', 'z')], [['a:x', 'a:y'], ['a:x', 'a:z']]],
    ['three times the same path', [c('a', 'x'), c('a', 'x'), c('a', 'x')], [['a:x'], ['a:x'], ['a:x']]],
    ['16 at most', many, [many.slice(0, 16), many.slice(16, 32), many.slice(32)].map((b) => b.map((x) => `a:${x.path}`))],
  ];
  for (const [what, input, want] of cases) assert.deepEqual(names(insertBatches(input)), want, what);
});
