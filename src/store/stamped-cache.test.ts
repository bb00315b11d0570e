import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStampedCache } from './stamped-cache.js';

test('stamped cache: a value is kept while the stamp stays, and every value goes when it moves', async () => {
  let stamp = 'a';
  let loads = 0;
  const cache = createStampedCache<string>(() => stamp);
  const load = (v: string | undefined) => async () => (loads++, v);
  const steps: [string, string, string | undefined, string | undefined, number][] = [
    // [stamp, key, loader's value, expected answer, loads so far]
    ['a', 'k', 'v1', 'v1', 1],
    ['a', 'k', 'v2', 'v1', 1], // kept: no query
    ['b', 'k', 'v2', 'v2', 2], // a commit: queried again
    ['b', 'k', undefined, 'v2', 2],
    ['c', 'k', undefined, undefined, 3], // revoked: the query says so
    ['c', 'k', 'v3', 'v3', 4], // a negative answer was not kept
  ];
  for (const [s, key, value, expected, expectedLoads] of steps) {
    stamp = s;
    assert.equal(await cache.get(key, load(value)), expected, `stamp ${s}`);
    assert.equal(loads, expectedLoads, `loads after stamp ${s}`);
  }
});

test('stamped cache: a value read while the stamp moved is not kept', async () => {
  let stamp = 'a';
  const cache = createStampedCache<string>(() => stamp);
  // Another lookup notices a commit while this one's query runs.
  const slow = cache.get('k', async () => {
    stamp = 'b';
    await cache.get('other', async () => 'x');
    return 'old';
  });
  assert.equal(await slow, 'old');
  assert.equal(await cache.get('k', async () => 'new'), 'new');
});

test('stamped cache: bounded, least recently used out', async () => {
  const cache = createStampedCache<number>(() => 's', 3);
  for (const k of ['a', 'b', 'c']) await cache.get(k, async () => 1);
  await cache.get('a', async () => 2); // a is now the most recent
  await cache.get('d', async () => 1); // b goes
  assert.equal(cache.size, 3);
  assert.equal(await cache.get('a', async () => 9), 1);
  assert.equal(await cache.get('b', async () => 9), 9);
});
