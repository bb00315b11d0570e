import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDigestMemo } from './digest-memo.js';

test('digest memo: a hash counts only for the owner, path and ETag it was read for', () => {
  const memo = createDigestMemo();
  memo.set('alice', 'a/b.txt', '"e1"', 'h1');
  const rows: [string, string, string, string, string | undefined][] = [
    ['the same file, the same bytes', 'alice', 'a/b.txt', '"e1"', 'h1'],
    ['replaced (another ETag)', 'alice', 'a/b.txt', '"e2"', undefined],
    ['another path with that ETag', 'alice', 'a/c.txt', '"e1"', undefined],
    ['another owner', 'bob', 'a/b.txt', '"e1"', undefined],
    ['parts that would run together without a separator', 'alice', 'a/b.txt"', 'e1"', undefined],
  ];
  for (const [name, user, path, etag, expected] of rows) assert.equal(memo.get(user, path, etag), expected, name);
});

test('digest memo: the least recently used hash goes first when full', () => {
  const memo = createDigestMemo(2);
  memo.set('u', 'a', '"1"', 'ha');
  memo.set('u', 'b', '"1"', 'hb');
  assert.equal(memo.get('u', 'a', '"1"'), 'ha'); // a is now the most recent
  memo.set('u', 'c', '"1"', 'hc');
  assert.equal(memo.get('u', 'b', '"1"'), undefined, 'b, least recently used, went');
  assert.equal(memo.get('u', 'a', '"1"'), 'ha');
  assert.equal(memo.get('u', 'c', '"1"'), 'hc');
  memo.set('u', 'c', '"1"', 'hc2');
  assert.equal(memo.get('u', 'c', '"1"'), 'hc2', 'a second set of one key replaces it, not adds');
  assert.equal(memo.get('u', 'a', '"1"'), 'ha');
});
