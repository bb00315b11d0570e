import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatModified, formatSize, pageNumber } from './format.js';

test('formatSize uses binary units with one decimal below 10', () => {
  const cases: [number, string][] = [[0, '0 B'], [1023, '1023 B'], [1024, '1.0 KiB'], [1536, '1.5 KiB'], [10 * 1024, '10 KiB'], [5 * 1024 ** 3, '5.0 GiB'], [2 ** 60, '1024 PiB']];
  for (const [n, want] of cases) assert.equal(formatSize(n), want, String(n));
});

test('formatModified prints minutes in UTC', () => {
  assert.equal(formatModified(new Date('2026-11-24T22:46:18.123Z')), '2026-11-24 22:46 UTC');
});

test('pageNumber accepts only plain positive integers and clamps to the last page', () => {
  const cases: [unknown, number, number][] = [[undefined, 10, 1], ['2', 1001, 2], ['3', 1001, 3], ['4', 1001, 3], ['0', 10, 1], ['-1', 10, 1], ['1e3', 10, 1], [['2'], 1001, 1], ['2', 0, 1]];
  for (const [raw, total, want] of cases) assert.equal(pageNumber(raw, total, 500), want, `${String(raw)} of ${total}`);
});
