import { test } from 'node:test';
import assert from 'node:assert/strict';
import { row, summarize, table, targetResults, targetSummary, type Row, type Target } from './stats.js';

const withSamples = (target: Target | undefined, ref: number[], fc: number[], unit: Row['unit'] = 'req/s'): Row => ({ ...row('x', 'metric', unit, true, target), ref, fileCloud: fc });

test('a target passes or fails on the medians of the same run', () => {
  const cases: { name: string; r: Row; verdict: 'PASS' | 'FAIL' | undefined }[] = [
    { name: 'ratio at least, above', r: withSamples({ kind: 'ratio_at_least', value: 0.3 }, [100, 100, 100], [31, 40, 29]), verdict: 'PASS' },
    { name: 'ratio at least, exactly', r: withSamples({ kind: 'ratio_at_least', value: 1.0 }, [100], [100]), verdict: 'PASS' },
    { name: 'ratio at least, below', r: withSamples({ kind: 'ratio_at_least', value: 0.3 }, [100], [29]), verdict: 'FAIL' },
    { name: 'ratio at most, below', r: withSamples({ kind: 'ratio_at_most', value: 1.5 }, [2], [2.9]), verdict: 'PASS' },
    { name: 'ratio at most, above', r: withSamples({ kind: 'ratio_at_most', value: 1.5 }, [2], [3.1]), verdict: 'FAIL' },
    { name: 'subject at most, under', r: withSamples({ kind: 'fc_at_most', value: 10 }, [1], [9.9], 'ms'), verdict: 'PASS' },
    { name: 'subject at most, over', r: withSamples({ kind: 'fc_at_most', value: 10 }, [1], [10.1], 'ms'), verdict: 'FAIL' },
    { name: 'no sample is a FAIL, never a silent PASS', r: withSamples({ kind: 'ratio_at_least', value: 0.3 }, [100], []), verdict: 'FAIL' },
    { name: 'no sample of the subject at most', r: withSamples({ kind: 'fc_at_most', value: 150 }, [], [], 'MiB'), verdict: 'FAIL' },
    { name: 'no target, no verdict', r: withSamples(undefined, [1], [2]), verdict: undefined },
  ];
  for (const c of cases) assert.equal(summarize(c.r).verdict, c.verdict, c.name);
});

test('the table says PASS/FAIL and the summary lists every target with its measured value', () => {
  const rows = [
    { ...withSamples({ kind: 'ratio_at_least', value: 0.3 }, [1000], [500]), id: 'a', label: 'GET' },
    { ...withSamples({ kind: 'fc_at_most', value: 10 }, [1], [12], 'ms'), id: 'b', label: 'p99' },
    { ...withSamples(undefined, [1], [1]), id: 'c', label: 'untargeted' },
  ];
  const t = table(rows);
  assert.match(t, /ratio ≥ 0.3 PASS \|/);
  assert.match(t, /File Cloud ≤ 10 FAIL \|/);
  const results = targetResults('nginx', rows);
  assert.deepEqual(results.map((r) => [r.id, r.verdict, r.measured]), [['a', 'PASS', 0.5], ['b', 'FAIL', 12]]);
  const summary = targetSummary(results);
  assert.match(summary, /^Targets \(1 PASS, 1 FAIL\):/);
  assert.match(summary, /\n {2}PASS {2}GET \(req\/s\): ratio ≥ 0.3; measured 0.50× \(500 vs 1,000 req\/s\)\n/);
  assert.match(summary, /\n {2}FAIL {2}p99 \(ms\): File Cloud ≤ 10; measured 12.0 ms$/);
  assert.match(targetSummary(targetResults('WebDAV', rows, 'WebDAV')), /FAIL {2}\[WebDAV\] p99 \(ms\): WebDAV ≤ 10; measured 12.0 ms/);
  assert.equal(targetSummary([]), '');
});
