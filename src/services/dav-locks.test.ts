import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LOCK_SECONDS, MAX_LOCK_SECONDS, parseTimeout } from './dav-locks.js';

// A Timeout header (RFC 4918 §10.7) → the seconds a lock gets: the first value understood, at most a day.
const CASES: [string | undefined, number][] = [
  [undefined, DEFAULT_LOCK_SECONDS],
  ['', DEFAULT_LOCK_SECONDS],
  ['Second-600', 600],
  ['second-600', 600],
  ['Second-0', 1],
  ['Second-86400', MAX_LOCK_SECONDS],
  ['Second-86401', MAX_LOCK_SECONDS],
  ['Second-604800', MAX_LOCK_SECONDS],
  ['Second-999999999999', MAX_LOCK_SECONDS],
  ['Infinite', MAX_LOCK_SECONDS],
  ['Infinite, Second-600', MAX_LOCK_SECONDS],
  ['Second-600, Infinite', 600],
  ['Bogus, Second-30', 30],
  ['Second-1e9', DEFAULT_LOCK_SECONDS],
];

test('the lock cap is a day', () => assert.equal(MAX_LOCK_SECONDS, 86_400));

for (const [header, seconds] of CASES) {
  test(`parseTimeout(${JSON.stringify(header)}) → ${seconds}`, () => assert.equal(parseTimeout(header), seconds));
}
