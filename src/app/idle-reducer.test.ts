import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDLE_UTILIZATION, idleStep } from './idle-reducer.js';

test('one collection at the first idle sample after start-up or work, none while busy, none twice without work between', () => {
  const busy = IDLE_UTILIZATION;
  const idle = IDLE_UTILIZATION / 2;
  let owed = true; // start-up
  const collected: boolean[] = [];
  for (const u of [busy, idle, idle, idle, busy, busy, idle, idle, 0]) {
    const s = idleStep(owed, u);
    owed = s.owed;
    collected.push(s.collect);
  }
  assert.deepEqual(collected, [false, true, false, false, false, false, true, false, false]);
});
