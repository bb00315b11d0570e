import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';

/**
 * Part of one AES-256-GCM message's plaintext, with the whole message
 * authenticated first: what a small Range read of a 64 KiB chunk needs.
 *
 * node:crypto's decipher has no way to check a tag without writing out the
 * whole plaintext into fresh memory (64 KiB a chunk, a 4 KiB range reads
 * one or two), and decrypting 64 KiB costs twice what GHASH over it does.
 * So the tag is checked over the ciphertext given as associated data (a
 * GMAC, no output), and then only the wanted blocks are decrypted with
 * AES-CTR from the counter GCM used for them.
 *
 * Why the check is the same as GCM's: GCM's tag is
 *   E(K, J0) ⊕ GHASH_H(A ‖ pad ‖ C ‖ pad ‖ [len(A)]₆₄ ‖ [len(C)]₆₄).
 * Given A' = A ‖ pad ‖ C as associated data and no ciphertext, the GHASH
 * input holds the very same blocks except the last one, the lengths
 * [len(A')]₆₄ ‖ [0]₆₄. GHASH is Σ Xᵢ·H^(m−i+1), and the last block is
 * multiplied by H once, so the two hashes differ by exactly
 * (L ⊕ L')·H: the GMAC of A' is right iff the stored tag ⊕ (L ⊕ L')·H is
 * what it computes, iff the stored tag is right for (A, C). The check is
 * OpenSSL's own (constant time); this module only moves the expected tag.
 */

/** GCM's field: GF(2^128) with x^128 + x^7 + x^2 + x + 1, bits in GCM's order (the first bit is x^0). */
const R = 0xe1n << 120n;

/** x·y in GCM's field, both as 128-bit big-endian integers of their 16 bytes (NIST SP 800-38D, algorithm 1). */
export function gfMultiply(x: bigint, y: bigint): bigint {
  let z = 0n;
  let v = y;
  for (let i = 127; i >= 0; i--) {
    if ((x >> BigInt(i)) & 1n) z ^= v;
    v = v & 1n ? (v >> 1n) ^ R : v >> 1n;
  }
  return z;
}

const padded = (n: number): number => Math.ceil(n / 16) * 16;
/** GHASH's last block: the bit lengths of associated data and ciphertext. */
const lengthBlock = (aad: number, text: number): bigint => (BigInt(aad * 8) << 64n) | BigInt(text * 8);

/**
 * What the GMAC of (associated data ‖ its zero padding ‖ ciphertext) differs
 * by from the GCM tag of (associated data, ciphertext), for these lengths,
 * under the hash key h = E(K, 0¹²⁸).
 */
export function tagCorrection(h: bigint, aadLength: number, textLength: number): bigint {
  return gfMultiply(lengthBlock(aadLength, textLength) ^ lengthBlock(padded(aadLength) + textLength, 0), h);
}

export const toBig = (b: Buffer): bigint => BigInt(`0x${b.toString('hex') || '0'}`);
export const toBlock = (n: bigint): Buffer => Buffer.from(n.toString(16).padStart(32, '0'), 'hex');

/** A key's GHASH key and its tag corrections by (aad, text) length, made once per key. */
type KeyHash = { readonly h: bigint; readonly corrections: Map<number, Buffer> };
const hashes = new WeakMap<KeyObject, KeyHash>();
const ZERO_BLOCK = Buffer.alloc(16);
const ZERO_PAD = Buffer.alloc(16);

function correctionFor(key: KeyObject, aadLength: number, textLength: number): Buffer {
  let k = hashes.get(key);
  if (k === undefined) {
    const e = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
    k = { h: toBig(e.update(ZERO_BLOCK)), corrections: new Map() };
    hashes.set(key, k);
  }
  // Lengths below 2^20 each (a chunk is 64 KiB): one number keys both.
  const id = aadLength * 0x100000 + textLength;
  let c = k.corrections.get(id);
  if (c === undefined) {
    c = toBlock(tagCorrection(k.h, aadLength, textLength));
    // A file has two lengths at most (its full chunks and its last one); a few are kept.
    if (k.corrections.size >= 8) k.corrections.clear();
    k.corrections.set(id, c);
  }
  return c;
}

/**
 * Plaintext bytes from..to-1 of the GCM message `text` (ciphertext) with tag
 * `tag`, nonce (12 bytes) and associated data `aad`, under `key`; throws
 * (as a decipher's final does) unless the whole message is authentic. The
 * answer is memory of its own, about to-from bytes.
 */
export function openPart(key: KeyObject, nonce: Buffer, aad: Buffer, text: Buffer, tag: Buffer, from: number, to: number): Buffer {
  const correction = correctionFor(key, aad.length, text.length);
  const expected = Buffer.allocUnsafe(16);
  for (let i = 0; i < 16; i++) expected[i] = tag[i]! ^ correction[i]!;
  const check = createDecipheriv('aes-256-gcm', key, nonce);
  check.setAAD(aad);
  const pad = padded(aad.length) - aad.length;
  if (pad > 0) check.setAAD(ZERO_PAD.subarray(0, pad));
  check.setAAD(text);
  check.setAuthTag(expected);
  check.final();
  if (to <= from) return Buffer.alloc(0);
  // GCM's counter for ciphertext block j (a 96-bit nonce): nonce ‖ [j + 2]₃₂.
  const first = Math.floor(from / 16);
  const counter = Buffer.allocUnsafe(16);
  nonce.copy(counter, 0, 0, 12);
  counter.writeUInt32BE(first + 2, 12);
  const plain = createDecipheriv('aes-256-ctr', key, counter).update(text.subarray(first * 16, to));
  return plain.subarray(from - first * 16);
}
