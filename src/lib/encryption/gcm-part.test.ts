import assert from 'node:assert/strict';
import { createCipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { gfMultiply, openPart, openPartJs, openPartNative, tagCorrection, toBig, toBlock } from './gcm-part.js';
import { nativeGcm } from './native-gcm.js';
import { nativeDisabled } from '../native-off.js';
import { skippedWithoutNative } from './native-skip.test-suite.js';

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

/**
 * Both paths of openPart, each case on each. Without the native module the
 * native half skips saying why, except in CI, which must build it
 * (scripts/build-native.mjs at npm ci) and so fails instead.
 */
type Open = typeof openPartJs;
const native = nativeGcm;
const paths: [string, Open | undefined][] = [
  ['JavaScript', openPartJs],
  ['native', native && ((key, nonce, aad, text, tag, from, to) => openPartNative(native, key, nonce, aad, text, tag, from, to))],
];
/** One sealed message: 64 KiB less 5 bytes, so the last block is short, with version 2's 21 bytes of associated data. */
function sealed(aadLength = 21, length = 65536 - 5) {
  const key = createSecretKey(randomBytes(32));
  const nonce = randomBytes(12);
  const aad = randomBytes(aadLength);
  const plain = randomBytes(length);
  const gcm = createCipheriv('aes-256-gcm', key, nonce);
  gcm.setAAD(aad);
  const text = Buffer.concat([gcm.update(plain), gcm.final()]);
  return { key, nonce, aad, plain, text, tag: gcm.getAuthTag() };
}

const flipped = (b: Buffer, at: number) => {
  const c = Buffer.from(b);
  c[at]! ^= 1;
  return c;
};

for (const [name, open] of paths) {
  test(`openPart (${name}) gives exactly the wanted bytes of an authentic message`, (t) => {
    if (open === undefined) return void skippedWithoutNative(t);
    for (const aadLength of [21, 16, 0, 33]) {
      const { key, nonce, aad, plain, text, tag } = sealed(aadLength);
      const spans: [number, number][] = [
        [0, 0],
        [100, 100],
        [0, 1],
        [0, 4096],
        [1, 4097],
        [15, 16],
        [15, 17],
        [16, 33],
        [31, 32],
        [61440, plain.length],
        [plain.length - 1, plain.length],
        [12345, 12345 + 4096],
      ];
      for (const [from, to] of spans) {
        const got = open(key, nonce, aad, text, tag, from, to);
        assert.deepEqual(got, plain.subarray(from, to), `aad ${aadLength}, ${from}..${to}`);
        assert.ok(got.buffer.byteLength < got.length + 16, 'memory of about its own size');
      }
    }
    // A message of no bytes, and one shorter than a block.
    for (const length of [0, 5]) {
      const { key, nonce, aad, plain, text, tag } = sealed(21, length);
      assert.deepEqual(open(key, nonce, aad, text, tag, 0, length), plain, `a message of ${length} bytes`);
    }
  });

  test(`openPart (${name}) gives nothing of an altered message`, (t) => {
    if (open === undefined) return void skippedWithoutNative(t);
    const { key, nonce, aad, plain, text, tag } = sealed();
    const altered: [string, () => Buffer][] = [
      ['a flipped ciphertext byte outside the wanted part', () => open(key, nonce, aad, flipped(text, 50_000), tag, 0, 4096)],
      ['a flipped ciphertext byte inside it', () => open(key, nonce, aad, flipped(text, 10), tag, 0, 4096)],
      ['a flipped last ciphertext byte, an empty part', () => open(key, nonce, aad, flipped(text, text.length - 1), tag, 0, 0)],
      ['a flipped tag byte', () => open(key, nonce, aad, text, flipped(tag, 15), 0, 4096)],
      ['another nonce', () => open(key, flipped(nonce, 0), aad, text, tag, 0, 4096)],
      ['other associated data (another index or last flag)', () => open(key, nonce, flipped(aad, 20), text, tag, 0, 4096)],
      ['associated data one byte longer', () => open(key, nonce, Buffer.concat([aad, Buffer.alloc(1)]), text, tag, 0, 4096)],
      ['the ciphertext cut by a byte', () => open(key, nonce, aad, text.subarray(0, text.length - 1), tag, 0, 4096)],
      ['the ciphertext cut by a block', () => open(key, nonce, aad, text.subarray(0, text.length - 16), tag, 0, 4096)],
      ['another key', () => open(createSecretKey(randomBytes(32)), nonce, aad, text, tag, 0, 4096)],
    ];
    for (const [what, attempt] of altered) assert.throws(attempt, what);
    // A refusal leaves the path able to open the next authentic message.
    assert.deepEqual(open(key, nonce, aad, text, tag, 5, 50), plain.subarray(5, 50), 'after the refusals');
  });
}

test('openPart: the path in use (the native one unless turned off or not built) reads what the other gives', (t) => {
  if (skippedWithoutNative(t)) return;
  const { key, nonce, aad, plain, text, tag } = sealed();
  assert.deepEqual(openPart(key, nonce, aad, text, tag, 333, 4500), plain.subarray(333, 4500));
  assert.deepEqual(openPartJs(key, nonce, aad, text, tag, 333, 4500), openPart(key, nonce, aad, text, tag, 333, 4500));
});

test('native openPart refuses a wrong argument with a TypeError, before reading it', (t) => {
  if (native === undefined) return void skippedWithoutNative(t);
  const { key, nonce, aad, plain, text, tag } = sealed();
  const keyBytes = key.export();
  const h = toBig(createCipheriv('aes-256-ecb', key, null).setAutoPadding(false).update(Buffer.alloc(16)));
  const expected = toBlock(toBig(tag) ^ tagCorrection(h, aad.length, text.length));
  const aadPadded = Buffer.concat([aad, Buffer.alloc(11)]);
  const counter = Buffer.concat([nonce, Buffer.from([0, 0, 0, 2])]);
  // text inside a larger allocation, so parts can start before it or run past its end
  const room = Buffer.alloc(text.length + 64);
  text.copy(room, 16);
  const inner = room.subarray(16, 16 + text.length);
  const part = inner.subarray(0, 4096);
  const out = Buffer.alloc(4096);
  const good = [keyBytes, nonce, aadPadded, inner, expected, counter, part, out] as const;
  assert.equal(native.openPart(...good), true, 'the right arguments');
  assert.deepEqual(out, plain.subarray(0, 4096));
  // A Uint8Array that is not a Buffer is as good.
  assert.equal(native.openPart(new Uint8Array(keyBytes), nonce, aadPadded, inner, expected, counter, part, Buffer.alloc(4096)), true, 'a Uint8Array key');
  const other = Buffer.from(text); // the same bytes elsewhere: not a view of text
  const cases: [string, number, unknown][] = [
    ['a key of 31 bytes', 0, keyBytes.subarray(0, 31)],
    ['a key of 33 bytes', 0, Buffer.concat([keyBytes, Buffer.alloc(1)])],
    ['a KeyObject as key', 0, key],
    ['a nonce of 11 bytes', 1, nonce.subarray(0, 11)],
    ['a nonce of 16 bytes', 1, Buffer.alloc(16)],
    ['a string as associated data', 2, 'aad'],
    ['undefined as text', 3, undefined],
    ['a tag of 15 bytes', 4, expected.subarray(0, 15)],
    ['a tag of 17 bytes', 4, Buffer.alloc(17)],
    ['a counter of 12 bytes', 5, counter.subarray(0, 12)],
    ['a part outside text', 6, other.subarray(0, 4096)],
    ['a part running past text', 6, room.subarray(16 + text.length - 16, 16 + text.length + 16)],
    ['a part starting before text', 6, room.subarray(0, 32)],
    ['a part longer than text', 6, room],
    ['an out shorter than part', 7, Buffer.alloc(4095)],
    ['a Uint16Array as out', 7, new Uint16Array(4096)],
    ['a DataView as out', 7, new DataView(new ArrayBuffer(4096))],
    ['an ArrayBuffer as key', 0, new ArrayBuffer(32)],
    ['a number as counter', 5, 16],
    ['null as tag', 4, null],
  ];
  for (const [what, at, value] of cases) {
    const args: unknown[] = [...good];
    args[at] = value;
    assert.throws(() => (native.openPart as (...a: unknown[]) => boolean)(...args), TypeError, what);
  }
  assert.throws(() => (native.openPart as (...a: unknown[]) => boolean)(keyBytes, nonce, aadPadded, inner), TypeError, 'four arguments');
  assert.equal(native.openPart(...good), true, 'the right arguments still, after the refusals');
});

test('native openPart: worker threads each load the module, with contexts of their own, beside the main thread', async (t) => {
  if (skippedWithoutNative(t)) return;
  const { key, nonce, aad, plain, text, tag } = sealed();
  // Each worker opens 200 parts while this thread opens its own: shared contexts would mix keys and fail.
  const code = `
    const { parentPort, workerData: w } = require('node:worker_threads');
    const { createSecretKey } = require('node:crypto');
    import(w.url).then((m) => {
      const key = createSecretKey(Buffer.from(w.key));
      let ok = 0;
      for (let i = 0; i < 200; i++) {
        const from = (i * 331) % 60000;
        if (Buffer.from(w.plain).subarray(from, from + 100).equals(m.openPart(key, Buffer.from(w.nonce), Buffer.from(w.aad), Buffer.from(w.text), Buffer.from(w.tag), from, from + 100))) ok++;
      }
      parentPort.postMessage(ok);
    });`;
  const workerData = { url: new URL('./gcm-part.js', import.meta.url).href, key: key.export(), nonce, aad, plain, text, tag };
  const workers = [new Worker(code, { eval: true, workerData }), new Worker(code, { eval: true, workerData })];
  try {
    const answers = workers.map((w) => new Promise<unknown>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    }));
    const other = sealed();
    for (let i = 0; i < 200; i++) assert.deepEqual(openPart(other.key, other.nonce, other.aad, other.text, other.tag, i, i + 50), other.plain.subarray(i, i + 50));
    assert.deepEqual(await Promise.all(answers), [200, 200]);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
});

test('nativeDisabled: which FILE_CLOUD_NATIVE_CRYPTO values turn the native path off', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['1', false],
    ['yes', false],
    ['0', true],
    [' 0 ', true],
    ['false', true],
    ['OFF', true],
    ['no', true],
  ];
  for (const [value, off] of cases) assert.equal(nativeDisabled(value), off, String(value));
});
