import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bufferPool } from './buffer-pool.js';

test('bufferPool: buffers given back are lent again, at most `keep` wait, foreign or repeated ones are not kept', () => {
  const pool = bufferPool(64, 2);
  const a = pool.take();
  const b = pool.take();
  const c = pool.take();
  assert.equal(a.length, 64);
  assert.notEqual(a, b);
  pool.give(a);
  pool.give(a);
  pool.give(Buffer.alloc(32));
  pool.give(b);
  pool.give(c);
  const again = [pool.take(), pool.take(), pool.take()];
  assert.deepEqual(
    again.map((x) => [a, b, c].indexOf(x)),
    [1, 0, -1],
    'the two kept (a, b; not a twice, not the 32-byte buffer, not c past the limit), then a new one',
  );
});
