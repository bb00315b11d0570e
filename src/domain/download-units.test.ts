import { test } from 'node:test';
import assert from 'node:assert/strict';
import { downloadsOf, isUsedUp, MAX_DOWNLOAD_LIMIT, ROUNDING_ALLOWANCE, unitsFor, UNITS_PER_DOWNLOAD as U } from './download-units.js';

test('unitsFor: a whole file is one download, whatever its size', () => {
  for (const size of [1, 3, 7, 1000, 65_537, 10 ** 9 + 7, 2 ** 45 + 3]) assert.equal(unitsFor(size, size), U, String(size));
});

test('unitsFor: rounds up, so no piece is free and pieces never count less than sent', () => {
  assert.equal(unitsFor(1, 3), Math.ceil(U / 3));
  assert.equal(unitsFor(1, 2 ** 45), 1); // ⌈10¹² ÷ 2⁴⁵⌉: a byte of a 32 TiB file still costs a unit
  assert.ok(unitsFor(1, 10 ** 12) >= 1);
});

test('unitsFor: a download cut into pieces costs one download plus at most one unit a piece', () => {
  const size = 1_000_003;
  for (const pieces of [2, 3, 10, 997]) {
    let total = 0;
    let at = 0;
    for (let i = 0; i < pieces; i++) {
      const end = i === pieces - 1 ? size : Math.floor(((i + 1) * size) / pieces);
      total += unitsFor(end - at, size);
      at = end;
    }
    assert.ok(total >= U && total <= U + pieces - 1, `${pieces} pieces: ${total}`);
    assert.ok(total - U <= ROUNDING_ALLOWANCE);
  }
});

test('unitsFor: nothing sent costs nothing; an answer of an empty file is one download', () => {
  assert.equal(unitsFor(0, 100), 0);
  assert.equal(unitsFor(0, 0), U);
});

test('the count shown has six decimals; used up at the limit', () => {
  assert.equal(downloadsOf(U), 1);
  assert.equal(downloadsOf(U / 2), 0.5);
  assert.equal(downloadsOf(U + 3), 1);
  assert.equal(isUsedUp(U - 1, 1), false);
  assert.equal(isUsedUp(U, 1), true);
  assert.equal(isUsedUp(10 * U, undefined), false);
  assert.ok(MAX_DOWNLOAD_LIMIT * U + ROUNDING_ALLOWANCE < 2 ** 63);
});
