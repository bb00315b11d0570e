import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDLE_UTILIZATION, shouldCollect } from './idle-reducer.js';

test('a collection at an idle sample when the young generation grew since the last one; none while busy, none for no growth', () => {
  const MiB = 1024 * 1024;
  const idle = IDLE_UTILIZATION / 2;
  assert.equal(shouldCollect(idle, 16 * MiB, 0), true, 'start-up: nothing collected yet');
  assert.equal(shouldCollect(IDLE_UTILIZATION, 16 * MiB, 1 * MiB), false, 'busy');
  assert.equal(shouldCollect(idle, 32 * MiB, 1 * MiB), true, 'grown since the last one');
  assert.equal(shouldCollect(idle, 1 * MiB, 1 * MiB), false, 'as the last one left it');
  assert.equal(shouldCollect(0.9 * IDLE_UTILIZATION, 1 * MiB, 1 * MiB), false, 'the work after a collection, no growth');
});
