import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseRange } from './range.js';

/**
 * Property tests for the Range parser: whatever the header, a range it
 * returns lies inside [0, size-1], so a read can never go past the file.
 */

const size = fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
const digits = fc.oneof(fc.nat({ max: 3000 }).map(String), fc.stringMatching(/^[0-9]{0,25}$/), fc.constantFrom('', '0', '00', '9007199254740993', '1e3', '-1', '0x10', ' 1'));
const header = fc.oneof(
  fc.tuple(fc.constantFrom('bytes=', 'BYTES=', 'bytes =', 'bytes= ', 'items=', 'bytes'), digits, fc.constantFrom('-', '--', '', ','), digits).map((xs) => xs.join('')),
  fc.tuple(digits, digits, digits, digits).map(([a, b, c, d]) => `bytes=${a}-${b},${c}-${d}`),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

test('parseRange never returns a range outside the file, whatever the header', () => {
  fc.assert(
    fc.property(fc.option(header, { nil: undefined }), size, (h, n) => {
      const r = parseRange(h, n);
      if (r.kind !== 'range') return;
      assert.ok(Number.isSafeInteger(r.start) && Number.isSafeInteger(r.end), JSON.stringify(r));
      assert.ok(r.start >= 0 && r.start <= r.end && r.end <= n - 1, `${JSON.stringify(h)} on ${n} bytes → ${JSON.stringify(r)}`);
    }),
    { numRuns: 20_000 },
  );
});

test('a satisfiable bytes=a-b gives exactly a..min(b, size-1)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.nat(), fc.nat(), (n, x, y) => {
      const a = x % n;
      const b = a + (y % (2 * n));
      assert.deepEqual(parseRange(`bytes=${a}-${b}`, n), { kind: 'range', start: a, end: Math.min(b, n - 1) });
      assert.deepEqual(parseRange(`bytes=${a}-`, n), { kind: 'range', start: a, end: n - 1 });
    }),
  );
});

test('a suffix bytes=-k gives the last min(k, size) bytes; a start at or past the end is unsatisfiable', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 3_000_000 }), fc.nat(1000), (n, k, past) => {
      assert.deepEqual(parseRange(`bytes=-${k}`, n), { kind: 'range', start: Math.max(0, n - k), end: n - 1 });
      assert.deepEqual(parseRange(`bytes=${n + past}-`, n), { kind: 'unsatisfiable' });
    }),
  );
});
