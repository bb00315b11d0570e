import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainMemo } from './plain-memo.js';

const b = (s: string): Buffer => Buffer.from(s);

test('plainMemo: a hit only for the very stored bytes under the same label', () => {
  const memo = plainMemo(1024, 64);
  memo.set('a', b('stored-a'), b('plain-a'));
  const cases: [label: string, stored: string, want: string | undefined][] = [
    ['a', 'stored-a', 'plain-a'],
    ['a', 'stored-A', undefined], // one byte changed
    ['a', 'stored-a!', undefined], // longer
    ['a', 'stored-', undefined], // cut
    ['b', 'stored-a', undefined], // same bytes, another file
    ['', '', undefined],
  ];
  for (const [label, stored, want] of cases) assert.equal(memo.get(label, b(stored))?.toString(), want, `${label} ${stored}`);
});

test('plainMemo: keeps copies, not the buffers it was given', () => {
  const memo = plainMemo(1024, 64);
  const stored = b('stored');
  const plain = b('plain');
  memo.set('a', stored, plain);
  stored.fill(0);
  plain.fill(0);
  assert.equal(memo.get('a', b('stored'))?.toString(), 'plain');
  assert.equal(memo.get('a', stored), undefined);
});

test('plainMemo: the budget, the size limit and replacing', () => {
  type Step = [op: 'set', label: string, stored: string, plain: string] | [op: 'get', label: string, stored: string, want: string | undefined] | [op: 'bytes', want: number];
  const cases: { name: string; budget: number; fileMax: number; steps: Step[] }[] = [
    { name: 'too large a plaintext is not kept', budget: 100, fileMax: 4, steps: [['set', 'a', 'xx', '12345'], ['get', 'a', 'xx', undefined], ['bytes', 0]] },
    { name: 'more than the budget alone is not kept', budget: 6, fileMax: 100, steps: [['set', 'a', 'xxxx', 'yyy'], ['get', 'a', 'xxxx', undefined], ['bytes', 0]] },
    { name: 'the least lately used goes first', budget: 12, fileMax: 100, steps: [
      ['set', 'a', 'sa', 'pa1'], ['set', 'b', 'sb', 'pb1'], ['get', 'a', 'sa', 'pa1'], ['set', 'c', 'sc', 'pc1'],
      ['get', 'b', 'sb', undefined], ['get', 'a', 'sa', 'pa1'], ['get', 'c', 'sc', 'pc1'], ['bytes', 10],
    ] },
    { name: 'a new version replaces the old one', budget: 100, fileMax: 100, steps: [
      ['set', 'a', 's1', 'p1'], ['set', 'a', 's22', 'p22'], ['get', 'a', 's1', undefined], ['get', 'a', 's22', 'p22'], ['bytes', 6],
    ] },
    { name: 'a version too large drops the old one', budget: 100, fileMax: 3, steps: [
      ['set', 'a', 's1', 'p1'], ['set', 'a', 's2', 'p2345'], ['get', 'a', 's1', undefined], ['bytes', 0],
    ] },
  ];
  for (const { name, budget, fileMax, steps } of cases) {
    const memo = plainMemo(budget, fileMax);
    for (const step of steps) {
      if (step[0] === 'set') memo.set(step[1], b(step[2]), b(step[3]));
      else if (step[0] === 'get') assert.equal(memo.get(step[1], b(step[2]))?.toString(), step[3], `${name}: get ${step[1]}`);
      else assert.equal(memo.bytes, step[1], `${name}: bytes`);
    }
  }
});
