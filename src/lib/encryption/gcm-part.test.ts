import assert from 'node:assert/strict';
import { createCipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { gfMultiply, openPart, tagCorrection, toBig, toBlock } from './gcm-part.js';

const hex = (s: string): bigint => BigInt(`0x${s}`);
/** The field's 1 in GCM's bit order: the first bit set. */
const ONE = 1n << 127n;

test('gfMultiply: GCM field products (1 and 0, x·x, and the GHASH of NIST SP 800-38D test case 2)', () => {
  const h = hex('66e94bd4ef8a2c3b884cfa59ca342b2e');
  const c = hex('0388dace60b6a392f328c2b971b2fe78');
  const cases: [string, bigint, bigint, bigint][] = [
    ['1 · y = y', ONE, h, h],
    ['y · 1 = y', h, ONE, h],
    ['0 · y = 0', 0n, h, 0n],
    ['x · x = x^2', ONE >> 1n, ONE >> 1n, ONE >> 2n],
    // x^127 · x = x^128 = x^7 + x^2 + x + 1 (the reduction): bits 0, 1, 2 and 7 set in GCM's order.
    ['x^127 · x wraps by the field polynomial', 1n, ONE >> 1n, hex('e1000000000000000000000000000000')],
    // GHASH(H, {}, C) = ((C·H) ⊕ [0]₆₄‖[128]₆₄)·H, K = 0^128, P = 0^128.
    ['test case 2 GHASH', gfMultiply(c, h) ^ 128n, h, hex('f38cbb1ad69223dcc3457ae5b6b0f885')],
  ];
  for (const [what, x, y, want] of cases) assert.equal(gfMultiply(x, y).toString(16), want.toString(16), what);
});

test('tagCorrection: the GMAC of (aad ‖ pad ‖ ciphertext) is the GCM tag ⊕ the correction, at every aad and text length', () => {
  const key = randomBytes(32);
  const h = toBig(createCipheriv('aes-256-ecb', key, null).setAutoPadding(false).update(Buffer.alloc(16)));
  const nonce = randomBytes(12);
  const cases: [number, number][] = [
    [16, 65536], // version 1: the file id; a full chunk
    [21, 65536], // version 2: file id ‖ index ‖ last
    [21, 1],
    [21, 100],
    [16, 0],
    [21, 0],
    [0, 48],
    [1, 17],
  ];
  for (const [aadLength, textLength] of cases) {
    const aad = randomBytes(aadLength);
    const plain = randomBytes(textLength);
    const gcm = createCipheriv('aes-256-gcm', key, nonce);
    gcm.setAAD(aad);
    const text = Buffer.concat([gcm.update(plain), gcm.final()]);
    const tag = gcm.getAuthTag();
    const gmac = createCipheriv('aes-256-gcm', key, nonce);
    gmac.setAAD(Buffer.concat([aad, Buffer.alloc(Math.ceil(aadLength / 16) * 16 - aadLength), text]));
    gmac.final();
    assert.equal(toBig(gmac.getAuthTag()) ^ toBig(tag), tagCorrection(h, aadLength, textLength), `aad ${aadLength}, text ${textLength}`);
  }
  assert.deepEqual(toBlock(0x0102n), Buffer.from('00000000000000000000000000000102', 'hex'));
});

test('openPart gives exactly the wanted bytes of an authentic message, and nothing of an altered one', () => {
  const key = createSecretKey(randomBytes(32));
  const nonce = randomBytes(12);
  const aad = randomBytes(21);
  const plain = randomBytes(65536 - 5);
  const gcm = createCipheriv('aes-256-gcm', key, nonce);
  gcm.setAAD(aad);
  const text = Buffer.concat([gcm.update(plain), gcm.final()]);
  const tag = gcm.getAuthTag();
  const spans: [number, number][] = [
    [0, 0],
    [0, 1],
    [0, 4096],
    [1, 4097],
    [15, 16],
    [16, 33],
    [61440, plain.length],
    [plain.length - 1, plain.length],
    [12345, 12345 + 4096],
  ];
  for (const [from, to] of spans) {
    const got = openPart(key, nonce, aad, text, tag, from, to);
    assert.deepEqual(got, plain.subarray(from, to), `${from}..${to}`);
    assert.ok(got.buffer.byteLength < got.length + 16, 'memory of about its own size');
  }
  const flipped = (b: Buffer, at: number) => {
    const c = Buffer.from(b);
    c[at]! ^= 1;
    return c;
  };
  const altered: [string, () => Buffer][] = [
    ['a flipped ciphertext byte outside the wanted part', () => openPart(key, nonce, aad, flipped(text, 50_000), tag, 0, 4096)],
    ['a flipped ciphertext byte inside it', () => openPart(key, nonce, aad, flipped(text, 10), tag, 0, 4096)],
    ['a flipped tag byte', () => openPart(key, nonce, aad, text, flipped(tag, 15), 0, 4096)],
    ['another nonce', () => openPart(key, flipped(nonce, 0), aad, text, tag, 0, 4096)],
    ['other associated data (another index or last flag)', () => openPart(key, nonce, flipped(aad, 20), text, tag, 0, 4096)],
    ['the ciphertext cut by a byte', () => openPart(key, nonce, aad, text.subarray(0, text.length - 1), tag, 0, 4096)],
    ['the ciphertext cut by a block', () => openPart(key, nonce, aad, text.subarray(0, text.length - 16), tag, 0, 4096)],
    ['another key', () => openPart(createSecretKey(randomBytes(32)), nonce, aad, text, tag, 0, 4096)],
  ];
  for (const [what, open] of altered) assert.throws(open, what);
});
