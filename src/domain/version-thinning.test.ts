import { test } from 'node:test';
import assert from 'node:assert/strict';
import { versionsToDrop } from './version-thinning.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;
const NOW = Date.parse('2026-06-01T00:00:00Z');

/** Versions named by their age: `${age}` made `age` ms before NOW. */
const aged = (...ages: number[]) => ages.map((age) => ({ id: String(age), at: NOW - age }));

const CASES: { name: string; ages: number[]; maxDays?: number; dropped: number[] }[] = [
  { name: 'nothing to thin', ages: [], dropped: [] },
  { name: 'every version of the last 10 s stays', ages: [0, 1 * S, 2 * S, 2 * S + 1, 9 * S], dropped: [] },
  { name: 'one per 10 s between 10 s and a minute: the newest of each slot', ages: [10 * S, 15 * S, 19 * S, 20 * S, 59 * S], dropped: [15 * S, 19 * S] },
  { name: 'one per minute up to an hour', ages: [MIN, MIN + 30 * S, 2 * MIN, 59 * MIN, 59 * MIN + 59 * S], dropped: [MIN + 30 * S, 59 * MIN + 59 * S] },
  { name: 'one per hour up to a day', ages: [H, H + 20 * MIN, H + 59 * MIN, 2 * H, 23 * H + 1], dropped: [H + 20 * MIN, H + 59 * MIN] },
  { name: 'one per day up to 30 days', ages: [D, D + H, 2 * D, 29 * D, 29 * D + 23 * H], dropped: [D + H, 29 * D + 23 * H] },
  { name: 'one per week after 30 days', ages: [30 * D, 31 * D, 35 * D, 36 * D, 100 * D], dropped: [31 * D, 36 * D] },
  { name: 'bands are thinned apart: the newest of a slot is kept in each', ages: [5 * S, 12 * S, 70 * S, 2 * H, 3 * D, 40 * D], dropped: [] },
  { name: '--versions-max-days drops every version older than the cap', ages: [S, 2 * D, 10 * D + 1, 200 * D], maxDays: 10, dropped: [10 * D + 1, 200 * D] },
  { name: 'a version from the future (clock skew between nodes) counts as new', ages: [-5 * S, 0], dropped: [] },
];

for (const c of CASES) {
  test(`version thinning: ${c.name}`, () => {
    const dropped = versionsToDrop(aged(...c.ages), NOW, c.maxDays).map(Number).sort((a, b) => a - b);
    assert.deepEqual(dropped, [...c.dropped].sort((a, b) => a - b));
  });
}

test('version thinning is stable: thinning what it kept again drops nothing more at the same time', () => {
  const ages = Array.from({ length: 500 }, (_, i) => Math.floor((i * i * 7919) % (90 * D)));
  const all = aged(...ages);
  const dropped = new Set(versionsToDrop(all, NOW));
  const kept = all.filter((v) => !dropped.has(v.id));
  assert.deepEqual(versionsToDrop(kept, NOW), []);
});
