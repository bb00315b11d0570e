import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPasswordHasher, DEFAULT_PARAMS } from './passwords.js';
import { QueueFullError } from '../lib/semaphore.js';

const cheap = { N: 2 ** 10, r: 8, p: 1 };

test('hash is self-describing and verifies only the right password', async () => {
  const h = createPasswordHasher({ params: cheap });
  const stored = await h.hash('correct horse');
  assert.match(stored, /^scrypt\$N=1024,r=8,p=1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  assert.equal(await h.verify('correct horse', stored), true);
  assert.equal(await h.verify('correct horsE', stored), false);
  assert.notEqual(await h.hash('correct horse'), stored, 'salted');
});

test('a hash made with other parameters still verifies (cost can rise later)', async () => {
  const old = await createPasswordHasher({ params: cheap }).hash('pw-123456');
  const current = createPasswordHasher({ params: { N: 2 ** 11, r: 8, p: 1 } });
  assert.equal(await current.verify('pw-123456', old), true);
});

test('the default parameters are an OWASP scrypt row', () => {
  assert.deepEqual(DEFAULT_PARAMS, { N: 2 ** 15, r: 8, p: 3 });
});

test('malformed or absurd stored hashes never verify', async () => {
  const h = createPasswordHasher({ params: cheap });
  for (const stored of ['', 'plain', 'scrypt$N=1024,r=8,p=1$$', 'scrypt$N=1073741824,r=8,p=1$AAAA$AAAA', 'scrypt$N=1000,r=8,p=1$AAAA$AAAA']) {
    assert.equal(await h.verify('x', stored), false, stored);
  }
});

test('unicode passwords are normalized (NFC), so the same text always matches', async () => {
  const h = createPasswordHasher({ params: cheap });
  const stored = await h.hash('caf\u00e9-password');
  assert.equal(await h.verify('cafe\u0301-password', stored), true);
});

test('concurrency is bounded and an overfull queue is refused at once', async () => {
  const h = createPasswordHasher({ params: cheap, concurrency: 1, maxQueue: 2 });
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => h.hash('pw-123456')));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
  const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  assert.equal(rejected.length, 2);
  assert.ok(rejected.every((r) => r.reason instanceof QueueFullError));
});
