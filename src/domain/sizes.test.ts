import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatSize, parseQuota, parseSize } from './sizes.js';

test('parseSize reads sizes as people write them (binary units)', () => {
  const cases: [string, number | undefined][] = [
    ['0', 0],
    ['2048', 2048],
    ['1K', 1024],
    ['1k', 1024],
    ['500M', 500 * 1024 ** 2],
    ['10G', 10 * 1024 ** 3],
    ['10g', 10 * 1024 ** 3],
    ['1T', 1024 ** 4],
    ['1.5K', 1536],
    ['1.5G', 1.5 * 1024 ** 3],
    ['64KiB', 64 * 1024],
    ['1 GB', 1024 ** 3],
    ['100B', 100],
    [' 7M ', 7 * 1024 ** 2],
    ['2P', 2 * 1024 ** 5],
    ['', undefined],
    ['none', undefined],
    ['-1', undefined],
    ['-5G', undefined],
    ['1.0001K', undefined],
    ['0.5', undefined],
    ['10X', undefined],
    ['G', undefined],
    ['1e9', undefined],
    ['iB', undefined],
    ['5iB', undefined],
    ['10GG', undefined],
    ['9000E', undefined],
    ['Infinity', undefined],
  ];
  for (const [text, want] of cases) assert.equal(parseSize(text), want, JSON.stringify(text));
});

test('formatSize shows bytes with a 1024-based unit', () => {
  const cases: [number, string][] = [
    [0, '0 B'],
    [512, '512 B'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [10 * 1024 ** 3, '10 GiB'],
    [150 * 1024 ** 2, '150 MiB'],
  ];
  for (const [bytes, want] of cases) assert.equal(formatSize(bytes), want, String(bytes));
});

test('parseQuota: a size, or none for no quota', () => {
  const cases: [string, number | null | undefined][] = [
    ['none', null],
    ['NONE', null],
    ['10G', 10 * 1024 ** 3],
    ['0', 0],
    ['nothing', undefined],
    ['', undefined],
  ];
  for (const [text, want] of cases) assert.equal(parseQuota(text), want, JSON.stringify(text));
});
