import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWebModule } from '../helpers/web-module.js';

/** web/src/lib/upload-conflicts.ts, compiled here: which uploads land on a taken name, and how the answers spread. No browser. */
type Choice = 'replace' | 'keep' | 'skip';
type PickedFile = { file: { name: string }; dir: string[] };
type Rules = {
  foldersOf(files: PickedFile[]): string[][];
  takenNames(files: PickedFile[], existing: Map<string, Set<string>>): { name: string; dir: string[] }[];
  existingKey(dir: string[]): string;
  spreadAnswers(count: number, answers: { choice: Choice; all: boolean }[]): Choice[] | undefined;
};

const f = (path: string): PickedFile => {
  const parts = path.split('/');
  return { file: { name: parts.pop() as string }, dir: parts };
};

test('the folders a batch writes into: each once, shallowest first', async () => {
  const { foldersOf } = await loadWebModule<Rules>('lib/upload-conflicts.ts');
  assert.deepEqual(foldersOf([f('Trip/day 1/a.txt'), f('top.txt'), f('Trip/n.md'), f('Trip/day 1/b.txt')]), [[], ['Trip'], ['Trip', 'day 1']]);
  assert.deepEqual(foldersOf([]), []);
});

test('a taken name is a file of that name in the same folder; a folder of that name or another folder is not', async () => {
  const { takenNames, existingKey } = await loadWebModule<Rules>('lib/upload-conflicts.ts');
  const existing = new Map([
    [existingKey([]), new Set(['a.txt', 'b.txt'])],
    [existingKey(['Trip']), new Set(['day.txt'])],
  ]);
  const cases: [string, boolean][] = [
    ['a.txt', true],
    ['A.txt', false],
    ['c.txt', false],
    ['Trip/day.txt', true],
    ['Trip/a.txt', false],
    ['Other/a.txt', false],
  ];
  for (const [path, want] of cases) assert.equal(takenNames([f(path)], existing).length === 1, want, path);
  assert.deepEqual(takenNames([f('a.txt'), f('new.txt'), f('Trip/day.txt')], existing).map((t) => [t.dir, t.name]), [[[], 'a.txt'], [['Trip'], 'day.txt']]);
});

test('answers: one each, or the last one "for all" covers the rest; too few is no answer yet', async () => {
  const { spreadAnswers } = await loadWebModule<Rules>('lib/upload-conflicts.ts');
  const one = (choice: Choice, all = false) => ({ choice, all });
  const cases: [number, { choice: Choice; all: boolean }[], Choice[] | undefined][] = [
    [1, [one('replace')], ['replace']],
    [3, [one('skip', true)], ['skip', 'skip', 'skip']],
    [3, [one('skip'), one('replace', true)], ['skip', 'replace', 'replace']],
    [3, [one('skip'), one('replace'), one('keep')], ['skip', 'replace', 'keep']],
    [3, [one('skip'), one('replace')], undefined],
    [2, [one('keep'), one('keep', true), one('skip')], ['keep', 'keep']],
    [0, [], []],
  ];
  for (const [count, answers, want] of cases) assert.deepEqual(spreadAnswers(count, answers), want, JSON.stringify(answers));
});
