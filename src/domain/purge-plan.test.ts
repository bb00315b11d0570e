import { test } from 'node:test';
import assert from 'node:assert/strict';
import { purgePlan, type Kept } from './purge-plan.js';

const v = (id: string, at: number, size: number): Kept => ({ kind: 'version', id, at, size });
const t = (id: string, at: number, size: number): Kept => ({ kind: 'trash', id, at, size });
const ALL = { versions: true, trash: true };

const CASES: { name: string; versions: Kept[]; trash: Kept[]; complete?: { versions: boolean; trash: boolean }; needed: number; plan: string[] | 'none' | 'more' }[] = [
  { name: 'nothing needed: nothing purged', versions: [v('v1', 1, 10)], trash: [t('t1', 2, 10)], needed: 0, plan: [] },
  { name: 'nothing kept: nothing to purge', versions: [], trash: [], needed: 1, plan: 'none' },
  { name: 'oldest first across both kinds: a month-old trashed file goes before a day-old version', versions: [v('day-old', 30, 10)], trash: [t('month-old', 1, 10)], needed: 10, plan: ['month-old'] },
  { name: 'interleaved by age, only as much as needed', versions: [v('v1', 1, 5), v('v3', 3, 5), v('v5', 5, 5)], trash: [t('t2', 2, 5), t('t4', 4, 5)], needed: 12, plan: ['v1', 't2', 'v3'] },
  { name: 'an exact fit stops at the item that makes it', versions: [v('v1', 1, 4), v('v2', 2, 6)], trash: [t('t3', 3, 100)], needed: 10, plan: ['v1', 'v2'] },
  { name: 'when even everything kept would not fit, nothing is purged', versions: [v('v1', 1, 4)], trash: [t('t1', 2, 5)], needed: 10, plan: 'none' },
  { name: 'same time: versions first, then by id (a stable order on every node)', versions: [v('b', 7, 1), v('a', 7, 1)], trash: [t('a', 7, 1)], needed: 2, plan: ['a', 'b'] },
  { name: 'a cut list: past its last item the order is unknown, so more is asked for', versions: [v('v1', 1, 1), v('v2', 2, 1)], trash: [t('t9', 9, 100)], complete: { versions: false, trash: true }, needed: 50, plan: 'more' },
  { name: 'a cut list whose known part already covers the need: decided', versions: [v('v1', 1, 30), v('v2', 2, 30)], trash: [t('t9', 9, 100)], complete: { versions: false, trash: true }, needed: 50, plan: ['v1', 'v2'] },
  { name: 'a cut list never lets a later item of the other list jump the queue', versions: [v('v1', 1, 1), v('v2', 2, 1)], trash: [t('t3', 3, 100)], complete: { versions: false, trash: true }, needed: 3, plan: 'more' },
];

for (const c of CASES) {
  test(`purge plan: ${c.name}`, () => {
    const plan = purgePlan({ versions: c.versions, trash: c.trash }, c.complete ?? ALL, c.needed);
    if (c.plan === 'none') assert.deepEqual(plan, { purge: undefined, more: false });
    else if (c.plan === 'more') assert.deepEqual(plan, { purge: undefined, more: true });
    else assert.deepEqual(plan.purge?.map((k) => k.id), c.plan);
  });
}
