import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { createCursorCodec, createTreeTags } from './change-cursor.js';

const codec = createCursorCodec(randomBytes(32));
const one = (user: string, position: number) => codec.seal(user, [position])[0] as string;

test('a sealed cursor opens to its position for its account only', () => {
  const flip = (c: string) => {
    const b = Buffer.from(c, 'base64url');
    b[3] = (b[3] as number) ^ 1;
    return b.toString('base64url');
  };
  const cases: [string, string, string, number | 'foreign' | 'malformed'][] = [
    ['its own account', 'u1', one('u1', 41), 41],
    ['position 0', 'u1', one('u1', 0), 0],
    ['the largest position', 'u1', one('u1', 2 ** 48 - 1), 2 ** 48 - 1],
    ['another account', 'u2', one('u1', 41), 'foreign'],
    ['one bit changed', 'u1', flip(one('u1', 41)), 'foreign'],
    ['another server (another secret)', 'u1', createCursorCodec(randomBytes(32)).seal('u1', [41])[0] as string, 'foreign'],
    ['a number of the earlier plain cursors', 'u1', '41', 'malformed'],
    ['too short', 'u1', one('u1', 41).slice(1), 'malformed'],
    ['not base64url', 'u1', `${one('u1', 41).slice(1)}+`, 'malformed'],
    ['empty', 'u1', '', 'malformed'],
  ];
  for (const [what, user, cursor, want] of cases) assert.equal(codec.open(user, cursor), want, what);
});

test('the same position seals differently each time; a batch seals each of its positions', () => {
  const seen = new Set(Array.from({ length: 1000 }, () => one('u1', 7)));
  assert.equal(seen.size, 1000);
  const batch = codec.seal('u1', [3, 1, 4, 1, 5]);
  assert.deepEqual(batch.map((c) => codec.open('u1', c)), [3, 1, 4, 1, 5]);
  assert.notEqual(batch[1], batch[3]);
});

test('a position that does not fit is refused, not wrapped', () => {
  for (const bad of [-1, 2 ** 48, 1.5, Number.NaN]) assert.throws(() => codec.seal('u1', [bad]), /does not fit/, String(bad));
});

test('tree tags: one position always gives one tag, distinct positions distinct tags, in no order of theirs', () => {
  const tags = createTreeTags(randomBytes(32));
  const positions = Array.from({ length: 1000 }, (_, i) => i + 1);
  const once = tags(positions);
  assert.deepEqual(tags(positions), once, 'the same every time');
  assert.deepEqual(tags([5, 5]), [once[4], once[4]]);
  assert.equal(new Set(once).size, positions.length);
  assert.ok(once.every((t) => /^[A-Za-z0-9_-]{22}$/.test(t)));
  assert.notDeepEqual([...once].sort(), once, 'sorting the tags does not sort the positions');
  assert.notDeepEqual(createTreeTags(randomBytes(32))([1]), tags([1]), 'another server key, other tags');
});
