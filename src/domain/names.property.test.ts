import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { collisionName, isValidName, MAX_NAME_BYTES } from './names.js';

/**
 * Property tests for `name (n).ext`: an alternative name is always a valid
 * name, never the original, and never the alternative of another n, so
 * claiming the first free one can never land on (and overwrite) a taken name.
 */

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

const validName = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
    // Long names, where the suffix forces the stem (or a long extension) to shrink.
    fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }), fc.integer({ min: 50, max: 260 }), fc.constantFrom('', '.txt', '.' + 'e'.repeat(250), '.tar.gz', '. (1)'))
      .map(([ch, n, ext]) => ch.repeat(n) + ext),
    fc.constantFrom('.env', 'a.', '..a', '...', 'a (1).txt', 'a (1)', 'x.(10)', 'é'.repeat(127) + '.txt', '😀'.repeat(63) + '.md'),
  )
  .map((s) => {
    // Cut to the byte limit on a code-point boundary, keeping the test about suffixes, not length checks.
    let out = s;
    while (bytes(out) > MAX_NAME_BYTES) out = Array.from(out).slice(0, -1).join('');
    return out;
  })
  .filter(isValidName);

test('collisionName(name, n) is a valid name of at most 255 bytes, and differs from the name for n > 0', () => {
  fc.assert(
    fc.property(validName, fc.integer({ min: 1, max: 100_000 }), (name, n) => {
      const alt = collisionName(name, n);
      assert.ok(isValidName(alt), `${JSON.stringify(alt)} is valid`);
      assert.ok(bytes(alt) <= MAX_NAME_BYTES);
      assert.notEqual(alt, name);
      assert.equal(collisionName(name, 0), name);
    }),
    { numRuns: 3000 },
  );
});

test('collisionName never gives two n the same name, so the first free name is never a taken one', () => {
  fc.assert(
    fc.property(validName, fc.uniqueArray(fc.integer({ min: 0, max: 20_000 }), { minLength: 2, maxLength: 40 }), (name, ns) => {
      const names = ns.map((n) => collisionName(name, n));
      assert.equal(new Set(names).size, names.length, `${JSON.stringify(name)} → ${JSON.stringify(names)}`);
    }),
    { numRuns: 2000 },
  );
});

test('collisionName is deterministic and keeps the extension when there is room', () => {
  fc.assert(
    fc.property(fc.stringMatching(/^[a-z]{1,20}$/), fc.stringMatching(/^[a-z0-9]{1,5}$/), fc.integer({ min: 1, max: 999 }), (stem, ext, n) => {
      assert.equal(collisionName(`${stem}.${ext}`, n), `${stem} (${n}).${ext}`);
      assert.equal(collisionName(`${stem}.${ext}`, n), collisionName(`${stem}.${ext}`, n));
    }),
  );
});
