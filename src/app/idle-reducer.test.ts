import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDLE_UTILIZATION, QUIET_SAMPLES, shouldCollect } from './idle-reducer.js';

test('a collection at an idle sample when the young generation grew since the last one: start-up\'s at once, a later one only after a quiet spell; none while busy, none for no growth', () => {
  const MiB = 1024 * 1024;
  const idle = IDLE_UTILIZATION / 2;
  const cases: [string, number, number, number, number, boolean][] = [
    // what, utilization, quiet samples in a row, young bytes, young after the last collection (0: none yet), collect?
    ['start-up: nothing collected yet, the first quiet sample', idle, 1, 16 * MiB, 0, true],
    ['start-up, but busy', IDLE_UTILIZATION, 0, 16 * MiB, 0, false],
    ['grown since the last one, just quiet after a burst', idle, 1, 32 * MiB, 1 * MiB, false],
    ['grown since the last one, quiet a while but not long enough', idle, QUIET_SAMPLES - 1, 32 * MiB, 1 * MiB, false],
    ['grown since the last one, quiet long enough', idle, QUIET_SAMPLES, 32 * MiB, 1 * MiB, true],
    ['grown, quiet long enough, then busy', IDLE_UTILIZATION, 0, 32 * MiB, 1 * MiB, false],
    ['as the last one left it', idle, QUIET_SAMPLES, 1 * MiB, 1 * MiB, false],
    ['the work after a collection, no growth', 0.9 * IDLE_UTILIZATION, QUIET_SAMPLES * 3, 1 * MiB, 1 * MiB, false],
  ];
  for (const [what, utilization, quiet, young, after, expected] of cases) assert.equal(shouldCollect(utilization, quiet, young, after), expected, what);
});
