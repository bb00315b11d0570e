import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatModified, formatSize, pageNumber } from './format.js';

test('formatSize uses binary units with one decimal below 10', () => {
  const cases: [number, string][] = [[0, '0 B'], [1023, '1023 B'], [1024, '1.0 KiB'], [1536, '1.5 KiB'], [10 * 1024, '10 KiB'], [5 * 1024 ** 3, '5.0 GiB'], [2 ** 60, '1024 PiB']];
  for (const [n, want] of cases) assert.equal(formatSize(n), want, String(n));
});

test('formatModified prints minutes in UTC, in the page\'s language', () => {
  const at = new Date('2026-11-24T22:46:18.123Z');
  const cases: [Parameters<typeof formatModified>[1], string][] = [[undefined, 'Nov 24, 2026, 22:46 UTC'], ['en', 'Nov 24, 2026, 22:46 UTC'], ['de', '24.11.2026, 22:46 UTC']];
  for (const [locale, want] of cases) assert.equal(formatModified(at, locale), want, String(locale));
});

test('formatSize speaks the page\'s language', () => {
  assert.equal(formatSize(1536, 'de'), '1,5 KiB');
});

test('pageNumber accepts only plain positive integers and clamps to the last page', () => {
  const cases: [unknown, number, number][] = [[undefined, 10, 1], ['2', 1001, 2], ['3', 1001, 3], ['4', 1001, 3], ['0', 10, 1], ['-1', 10, 1], ['1e3', 10, 1], [['2'], 1001, 1], ['2', 0, 1]];
  for (const [raw, total, want] of cases) assert.equal(pageNumber(raw, total, 500), want, `${String(raw)} of ${total}`);
});
