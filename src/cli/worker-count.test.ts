import { test } from 'node:test';
import assert from 'node:assert/strict';
import { thisMachine, workerCount } from './worker-count.js';

const GiB = 1024 ** 3;

test('--workers auto is one process on a small box (under 4 cores or under 4 GiB) and one per core otherwise', () => {
  const cases: [cores: number, memoryGiB: number, want: number][] = [
    [1, 0.5, 1],
    [1, 64, 1],
    [2, 2, 1],
    [2, 24, 1],
    [3, 16, 1],
    [4, 2, 1],
    [4, 3.8, 1], // a "4 GB" machine reports a little less than 4 GiB: still small
    [4, 4, 4],
    [4, 8, 4],
    [8, 3, 1],
    [8, 8, 8],
    [64, 256, 64],
  ];
  for (const [cores, memoryGiB, want] of cases) assert.equal(workerCount('auto', { cores, memoryBytes: memoryGiB * GiB }), want, `${cores} cores, ${memoryGiB} GiB`);
});

test('a number of workers is taken as given, whatever the machine', () => {
  for (const n of [1, 2, 3, 16]) {
    assert.equal(workerCount(n, { cores: 1, memoryBytes: GiB }), n);
    assert.equal(workerCount(n, { cores: 32, memoryBytes: 64 * GiB }), n);
  }
});

test('this machine: at least one core, and no more memory than the machine has', async () => {
  const { totalmem } = await import('node:os');
  const m = thisMachine();
  assert.ok(Number.isInteger(m.cores) && m.cores >= 1, String(m.cores));
  assert.ok(m.memoryBytes > 0 && m.memoryBytes <= totalmem(), String(m.memoryBytes));
});
