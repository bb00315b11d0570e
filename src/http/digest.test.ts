import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parseSha256Digest, reprDigest } from './digest.js';

const hex = createHash('sha256').update('abc').digest('hex');
const b64 = Buffer.from(hex, 'hex').toString('base64');

test('reprDigest gives RFC 9530\'s sha-256 member: the 32 bytes in base64 between colons', () => {
  assert.equal(reprDigest(hex), `sha-256=:${b64}:`);
  assert.equal(reprDigest(hex), 'sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:');
});

test('parseSha256Digest: the sha-256 member as hex; other algorithms ignored; anything malformed refused', () => {
  const rows: [string | undefined, string | undefined | 'malformed'][] = [
    [undefined, undefined],
    [`sha-256=:${b64}:`, hex],
    [` sha-256=:${b64}: `, hex],
    [`sha-512=:AAAA:, sha-256=:${b64}:`, hex], // another algorithm beside it
    [`sha-256=:${b64}:;param=1`, hex], // parameters are ignored
    ['md5=:AAAAAAAAAAAAAAAAAAAAAA==:', undefined], // only algorithms we do not check
    [`sha-256=:${b64}:, sha-256=:${b64}:`, hex], // the same twice
    [`sha-256=:${b64}:, sha-256=:${Buffer.alloc(32).toString('base64')}:`, 'malformed'], // two different
    ['sha-256=:YWJj:', 'malformed'], // 3 bytes, not 32
    [`sha-256=${b64}`, 'malformed'], // not a byte sequence
    [`sha-256=:${b64.slice(0, -1)}:`, 'malformed'], // not canonical base64
    ['', 'malformed'],
    [`sha-256=:${b64}:,`, 'malformed'],
    [`SHA-256=:${b64}:`, 'malformed'], // keys are lower case (RFC 8941)
    [`sha-256=:${hex}:`, 'malformed'], // hex is not base64 of 32 bytes
  ];
  for (const [field, want] of rows) assert.equal(parseSha256Digest(field), want, String(field));
});
