import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentRange, parseRange, type RangeResult, unsatisfiedRange } from './range.js';

const none: RangeResult = { kind: 'none' };
const unsat: RangeResult = { kind: 'unsatisfiable' };
const r = (start: number, end: number): RangeResult => ({ kind: 'range', start, end });
const huge = '9'.repeat(30);

test('parseRange reads single byte ranges as RFC 9110 §14 defines them', () => {
  const rows: [string | undefined, number, RangeResult][] = [
    [undefined, 1000, none],
    ['', 1000, none],
    ['bytes=0-99', 1000, r(0, 99)],
    ['bytes=0-0', 1000, r(0, 0)],
    ['bytes=999-999', 1000, r(999, 999)],
    ['bytes=100-', 1000, r(100, 999)],
    ['bytes=-500', 1000, r(500, 999)],
    ['bytes=-1', 1000, r(999, 999)],
    ['bytes=-1000', 1000, r(0, 999)],
    ['bytes=-5000', 1000, r(0, 999)], // suffix longer than the file: the whole file
    ['bytes=0-5000', 1000, r(0, 999)], // end beyond the size is clamped
    ['bytes=500-999', 1000, r(500, 999)],
    ['BYTES=0-9', 1000, r(0, 9)], // range units are case-insensitive
    ['  bytes=0-9  ', 1000, r(0, 9)],
    ['bytes = 0-9', 1000, r(0, 9)],
    ['bytes=\t10-19', 1000, r(10, 19)],
  ];
  for (const [header, size, want] of rows) assert.deepEqual(parseRange(header, size), want, `${JSON.stringify(header)} of ${size}`);
});

test('parseRange answers unsatisfiable when the first byte is past the end or the suffix is empty', () => {
  const rows: [string, number][] = [
    ['bytes=1000-', 1000],
    ['bytes=1000-2000', 1000],
    ['bytes=5000-6000', 1000],
    ['bytes=-0', 1000],
    ['bytes=0-', 0],
    ['bytes=0-0', 0],
    ['bytes=-0', 0],
    [`bytes=${huge}-`, 1000],
  ];
  for (const [header, size] of rows) assert.deepEqual(parseRange(header, size), unsat, `${header} of ${size}`);
});

test('parseRange ignores what it does not serve, so the whole file goes out with 200', () => {
  const rows: string[] = [
    'bytes=0-1,5-6', // multiple ranges: would need multipart/byteranges
    'bytes=0-1, 5-6',
    'bytes=0-1,',
    'items=0-9', // another unit
    'bytes 0-9',
    'bytes=',
    'bytes=-',
    'bytes=a-b',
    'bytes=1-a',
    'bytes=0x10-20',
    'bytes=+1-2',
    'bytes=1.5-2',
    'bytes=--1',
    'bytes=5-1', // inverted: invalid, not unsatisfiable
    'bytes=0 - 9',
    'garbage',
    '=0-9',
  ];
  for (const header of rows) assert.deepEqual(parseRange(header, 1000), none, header);
});

test('parseRange on an empty file never names a byte', () => {
  assert.deepEqual(parseRange('bytes=-5', 0), none);
  assert.deepEqual(parseRange('bytes=0-', 0), unsat);
});

test('parseRange survives numbers beyond Number.MAX_SAFE_INTEGER', () => {
  assert.deepEqual(parseRange(`bytes=0-${huge}`, 1000), r(0, 999));
  assert.deepEqual(parseRange(`bytes=-${huge}`, 1000), r(0, 999));
  assert.deepEqual(parseRange(`bytes=${huge}-`, 1000), unsat);
  const big = Number.MAX_SAFE_INTEGER;
  assert.deepEqual(parseRange(`bytes=${big - 1}-`, big), r(big - 1, big - 1));
  assert.deepEqual(parseRange(`bytes=${big}-`, big), unsat);
  assert.deepEqual(parseRange(`bytes=-${'1'.repeat(400)}`, 10), r(0, 9)); // Infinity as a suffix
});

test('parseRange never returns a range outside [0, size-1]', () => {
  const sizes = [0, 1, 2, 7, 100, 1000, Number.MAX_SAFE_INTEGER];
  const numbers = ['', '0', '1', '2', '6', '7', '8', '99', '100', '101', '999', String(Number.MAX_SAFE_INTEGER), huge];
  let ranges = 0;
  for (const size of sizes) {
    for (const a of numbers) {
      for (const b of numbers) {
        const got = parseRange(`bytes=${a}-${b}`, size);
        if (got.kind !== 'range') continue;
        ranges++;
        const where = `bytes=${a}-${b} of ${size} → ${got.start}-${got.end}`;
        assert.ok(Number.isSafeInteger(got.start) && Number.isSafeInteger(got.end), where);
        assert.ok(got.start >= 0 && got.start <= got.end && got.end <= size - 1, where);
      }
    }
  }
  assert.ok(ranges > 100);
});

test('Content-Range values', () => {
  assert.equal(contentRange(0, 99, 1000), 'bytes 0-99/1000');
  assert.equal(contentRange(999, 999, 1000), 'bytes 999-999/1000');
  assert.equal(unsatisfiedRange(1000), 'bytes */1000');
  assert.equal(unsatisfiedRange(0), 'bytes */0');
});
