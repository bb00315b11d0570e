import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createVisitorLimiter } from './visitor-limit.js';

test('visitor limiter: limit per address per window, then the seconds left; a new window starts afresh', () => {
  const l = createVisitorLimiter(3, 60_000);
  const t0 = 1_700_000_000_000 - (1_700_000_000_000 % 60_000);
  assert.deepEqual([1, 2, 3].map(() => l.hit('a', t0 + 1000)), [0, 0, 0]);
  assert.equal(l.hit('a', t0 + 1000), 59);
  assert.equal(l.hit('b', t0 + 1000), 0, 'other addresses are counted apart');
  assert.equal(l.hit('a', t0 + 59_500), 1);
  assert.equal(l.hit('a', t0 + 60_000), 0, 'the next window');
});

test('visitor limiter: a flood of distinct addresses is capped', () => {
  const l = createVisitorLimiter(100, 60_000, 2);
  assert.equal(l.hit('a', 0), 0);
  assert.equal(l.hit('b', 0), 0);
  assert.ok(l.hit('c', 0) > 0);
  assert.equal(l.hit('a', 0), 0, 'known addresses still pass');
});
