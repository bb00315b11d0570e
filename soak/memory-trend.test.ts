import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binMedians, memoryTrend, slopePerMinute, type Sample } from './memory-trend.js';

/** One sample a second for `seconds`, from f(t). */
const series = (seconds: number, f: (t: number) => number): Sample[] => Array.from({ length: seconds }, (_, i) => ({ t: i + 1, mib: f(i + 1) }));
/** A garbage collector's sawtooth: up 12 MiB over 30 s, then back down. */
const sawtooth = (t: number) => (t % 30) * 0.4;

test('least-squares slope in MiB per minute', () => {
  assert.ok(Math.abs(slopePerMinute(series(600, (t) => 100 + t / 60)) - 1) < 1e-9);
  assert.equal(slopePerMinute(series(600, () => 100)), 0);
  assert.ok(Number.isNaN(slopePerMinute([{ t: 1, mib: 1 }])));
  assert.deepEqual(binMedians([{ t: 0, mib: 5 }, { t: 1, mib: 1 }, { t: 29, mib: 3 }, { t: 30, mib: 9 }, { t: 31, mib: 7 }, { t: 60, mib: 100 }], 30), [{ t: 15, mib: 3 }, { t: 45, mib: 8 }]);
});

test('the no-growth rule: flat memory passes, growth fails, noise and a spike do not', () => {
  // CI's soak on Node 24 (stop 37): flat at 451 MiB, one step of ~110 MiB at 42-48 s, flat at 565 after.
  const v8Step = (t: number) => (t < 42 ? 451 : t < 48 ? 451 + (t - 42) * 19 : 565);
  const cases: { name: string; samples: Sample[]; seconds: number; pass: boolean; slopeJudged: boolean }[] = [
    { name: '10 minutes flat, with a sawtooth', samples: series(600, (t) => 120 + sawtooth(t)), seconds: 600, pass: true, slopeJudged: true },
    { name: '10 minutes, heap still settling in the warm-up', samples: series(600, (t) => (t < 150 ? 60 + t / 3 : 110) + sawtooth(t)), seconds: 600, pass: true, slopeJudged: true },
    { name: '10 minutes, one spike at the end', samples: series(600, (t) => (t === 599 ? 400 : 120 + sawtooth(t))), seconds: 600, pass: true, slopeJudged: true },
    { name: '10 minutes, a slow leak of 1 MiB/min (under the medians\' allowance)', samples: series(600, (t) => 120 + t / 60 + sawtooth(t)), seconds: 600, pass: false, slopeJudged: true },
    { name: '10 minutes, a leak of 10 MiB/min', samples: series(600, (t) => 120 + t / 6), seconds: 600, pass: false, slopeJudged: true },
    { name: '20 seconds, noisy: the slope is not judged', samples: series(20, (t) => 130 + (t % 4) * 3), seconds: 20, pass: true, slopeJudged: false },
    { name: '10 minutes, 20 MiB more in the last third (a step, flat slope after it)', samples: series(600, (t) => (t > 450 ? 140 : 120)), seconds: 600, pass: false, slopeJudged: true },
    { name: '20 seconds, heaps settling: 20 MiB more in the last third', samples: series(20, (t) => (t > 15 ? 150 : 130)), seconds: 20, pass: true, slopeJudged: false },
    { name: '20 seconds, 40 MiB more in the last third', samples: series(20, (t) => (t > 15 ? 170 : 130)), seconds: 20, pass: false, slopeJudged: false },
    { name: '60 seconds (30 of warm-up): the one-time step is judged as growth', samples: series(60, v8Step), seconds: 60, pass: false, slopeJudged: false },
    { name: '100 seconds (50 of warm-up): the same step is behind it', samples: series(100, v8Step), seconds: 100, pass: true, slopeJudged: false },
    { name: '100 seconds: a leak of 180 MiB/min through the judged window', samples: series(100, (t) => 450 + t * 3), seconds: 100, pass: false, slopeJudged: false },
    { name: '100 seconds: flat after warm-up within 16 MiB of noise', samples: series(100, (t) => (t < 40 ? 450 : 560 + (t % 7) * 2.3)), seconds: 100, pass: true, slopeJudged: false },
    { name: 'no samples after warm-up', samples: series(2, () => 100), seconds: 20, pass: false, slopeJudged: false },
  ];
  for (const c of cases) {
    const trend = memoryTrend(c.samples, c.seconds);
    assert.equal(trend.failures.length === 0, c.pass, `${c.name}: ${JSON.stringify(trend)}`);
    assert.equal(trend.slopeJudged, c.slopeJudged, c.name);
  }
});

test('the slow leak fails on its slope, the fast one on both', () => {
  const slow = memoryTrend(series(600, (t) => 120 + t / 60 + sawtooth(t)), 600);
  assert.ok(Math.abs(slow.slopeOfMediansMiBPerMin - 1) < 0.15, String(slow.slopeOfMediansMiBPerMin));
  assert.ok(Math.abs(slow.slopeMiBPerMin - 1) < 0.2, String(slow.slopeMiBPerMin));
  assert.deepEqual(slow.failures.map((f) => /MiB\/min/.test(f)), [true]);
  const fast = memoryTrend(series(600, (t) => 120 + t / 6), 600);
  assert.equal(fast.failures.length, 2);
});
