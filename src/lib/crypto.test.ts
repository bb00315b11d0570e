import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { hmacSha256, pooledRandomHex } from './crypto.js';

test('hmacSha256 gives createHmac’s bytes for keys shorter than, equal to and longer than a block, and any parts', () => {
  const keys = [Buffer.alloc(0), Buffer.from('k'), Buffer.alloc(32, 7), Buffer.alloc(64, 0xa5), Buffer.alloc(65, 1), Buffer.alloc(200, 0xff)];
  const inputs: string[][] = [[], [''], ['admin', '\0', 'secret'], ['ünïcödé ✓', '\0', 'pässwörd'], ['a'.repeat(1000)]];
  for (const key of keys) {
    const mac = hmacSha256(key);
    for (const parts of inputs) {
      const want = createHmac('sha256', key);
      for (const p of parts) want.update(p, 'utf8');
      assert.deepEqual(mac(...parts), want.digest(), `key of ${key.length} bytes, parts ${JSON.stringify(parts).slice(0, 40)}`);
    }
  }
});

test('pooledRandomHex hands out each byte of its pool once, refills it when a request does not fit, and gives a larger request its own bytes', () => {
  // [pool size, the sizes asked in turn]: the pool holds 64 bytes, so a refill comes between 48+16 and the next.
  const cases: [number, number[]][] = [
    [64, [16, 16, 16, 16, 16, 16]],
    [64, [10, 60, 64, 1]],
    [64, [65, 16, 100]],
  ];
  for (const [size, asks] of cases) {
    const take = pooledRandomHex(size);
    const got = asks.map((n) => take(n));
    assert.deepEqual(got.map((h) => h.length / 2), asks, `lengths for ${JSON.stringify(asks)}`);
    // 16 random bytes repeating would be a reused slice of the pool, not chance.
    const hex = got.filter((h) => h.length >= 32);
    assert.equal(new Set(hex).size, hex.length, `no repeat in ${JSON.stringify(asks)}`);
  }
  const take = pooledRandomHex();
  const ids = new Set(Array.from({ length: 3000 }, () => take(16)));
  assert.ok([...ids].every((id) => /^[0-9a-f]{32}$/.test(id)), 'hex of 16 bytes');
  assert.equal(ids.size, 3000, 'distinct over several refills');
});
