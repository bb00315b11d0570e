import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';
import { nativeGcm, type NativeGcm } from './native-gcm.js';

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
 *
 * Both steps run in native/gcm-part.c when it is built (./native-gcm.ts),
 * which keeps its OpenSSL contexts where node:crypto makes two ciphers a
 * call; else on node:crypto. The tag correction is this module's either way.
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

/** A key's GHASH key and its tag corrections by (aad, text) length, made once per key; its bytes for the native path. */
type KeyHash = { readonly h: bigint; readonly corrections: Map<number, Buffer>; bytes?: Buffer };
const hashes = new WeakMap<KeyObject, KeyHash>();
const ZERO_BLOCK = Buffer.alloc(16);
const ZERO_PAD = Buffer.alloc(16);

function hashOf(key: KeyObject): KeyHash {
  let k = hashes.get(key);
  if (k === undefined) {
    const e = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
    k = { h: toBig(e.update(ZERO_BLOCK)), corrections: new Map() };
    hashes.set(key, k);
  }
  return k;
}

function correctionFor(key: KeyObject, aadLength: number, textLength: number): Buffer {
  const k = hashOf(key);
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
export const openPart: typeof openPartJs =
  nativeGcm === undefined ? openPartJs : (key, nonce, aad, text, tag, from, to) => openPartNative(nativeGcm!, key, nonce, aad, text, tag, from, to);

/** GCM's counter for ciphertext block j (a 96-bit nonce): nonce ‖ [j + 2]₃₂. */
function counterOf(nonce: Buffer, block: number, into: Buffer): Buffer {
  nonce.copy(into, 0, 0, 12);
  into.writeUInt32BE(block + 2, 12);
  return into;
}

/** openPart on node:crypto: the path without the native module. */
export function openPartJs(key: KeyObject, nonce: Buffer, aad: Buffer, text: Buffer, tag: Buffer, from: number, to: number): Buffer {
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
  const first = Math.floor(from / 16);
  const counter = counterOf(nonce, first, Buffer.allocUnsafe(16));
  const plain = createDecipheriv('aes-256-ctr', key, counter).update(text.subarray(first * 16, to));
  return plain.subarray(from - first * 16);
}

/**
 * Scratch for the native call's small arguments, filled and used within one
 * synchronous call (each worker thread has its own module instance).
 */
const AAD_SCRATCH = Buffer.alloc(64);
const TAG_SCRATCH = Buffer.alloc(16);
const COUNTER_SCRATCH = Buffer.alloc(16);

/** openPart on native/gcm-part.c: the same checks and bytes, for tests of both paths too. */
export function openPartNative(native: NativeGcm, key: KeyObject, nonce: Buffer, aad: Buffer, text: Buffer, tag: Buffer, from: number, to: number): Buffer {
  // The JavaScript path's argument errors, so a wrong call fails alike on both.
  if (nonce.length !== 12 || tag.length !== 16) throw new Error('openPart: a nonce of 12 bytes and a tag of 16');
  const k = hashOf(key);
  const bytes = (k.bytes ??= key.export());
  const correction = correctionFor(key, aad.length, text.length);
  for (let i = 0; i < 16; i++) TAG_SCRATCH[i] = tag[i]! ^ correction[i]!;
  const aadLength = padded(aad.length);
  const aadPadded = aadLength <= AAD_SCRATCH.length ? AAD_SCRATCH.subarray(0, aadLength) : Buffer.alloc(aadLength);
  aad.copy(aadPadded);
  aadPadded.fill(0, aad.length);
  const first = Math.floor(Math.max(0, from) / 16);
  const part = to > from ? text.subarray(first * 16, to) : text.subarray(0, 0);
  // Memory of its own, not a slice of the shared pool that allocUnsafe gives small sizes.
  const out = Buffer.allocUnsafeSlow(part.length);
  if (!native.openPart(bytes, nonce, aadPadded, text, TAG_SCRATCH, counterOf(nonce, first, COUNTER_SCRATCH), part, out)) {
    throw new Error('Unsupported state or unable to authenticate data');
  }
  return to > from ? out.subarray(from - first * 16) : out;
}
