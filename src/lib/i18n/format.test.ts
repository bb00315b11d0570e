import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatBytes } from './format.js';

test('formatBytes: the language\'s digits, binary units, one decimal below 10 (below 100 when fine)', () => {
  const KB = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  const cases: [number, 'en' | 'de', boolean, string][] = [
    [0, 'en', false, '0 B'],
    [1023, 'de', false, '1023 B'],
    [1536, 'en', false, '1.5 KiB'],
    [1536, 'de', false, '1,5 KiB'],
    [1024, 'de', false, '1,0 KiB'],
    [10 * 1024, 'de', false, '10 KiB'],
    [1.5 * 1024 ** 3, 'de', false, '1,5 GiB'],
    [2 ** 60, 'en', false, '1024 PiB'],
    [2 ** 50 * 12345, 'de', false, '12.345 PiB'],
    [1024, 'en', true, '1 KB'],
    [12.25 * 1024 ** 2, 'de', true, '12,3 MB'],
    [150 * 1024 ** 2, 'en', true, '150 MB'],
  ];
  for (const [n, locale, fine, want] of cases) assert.equal(formatBytes(n, locale, fine ? KB : undefined, fine), want, `${n} ${locale}`);
});
