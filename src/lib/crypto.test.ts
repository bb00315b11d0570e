import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { hmacSha256 } from './crypto.js';

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
