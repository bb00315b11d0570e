import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { CHUNK_SIZE, DecryptError, HEADER_SIZE, NONCE_SIZE, TAG_SIZE, VERSION, chunkOverhead, chunkSpan, couldBeEncrypted, hasMagic, headerFor, headerVersion, newFileKey, newMasterKeyText, openChunk, openHeader, openTail, parseMasterKey, plainSize, plainSizeOf, sealChunk, sealPartsInto, sealTail, sealedSize, openParts, storedChunk, storedSize } from './format.js';
import { nativeGcm, type NativeGcm } from './native-gcm.js';
import { skippedWithoutNative } from './native-skip.test-suite.js';
import { decryptBytes, decryptStream, encrypt } from './stream.js';
import type { FileKey } from './format.js';

const C = CHUNK_SIZE;
/** Every version is still read; the tests that hold for both run for both. */
const VERSIONS = [1, 2] as const;
const master = parseMasterKey(newMasterKeyText());
const otherMaster = parseMasterKey(newMasterKeyText());

async function collect(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of it) parts.push(b);
  return Buffer.concat(parts);
}

/** Feeds bytes in pieces of `step` bytes, as a network body would. */
async function* inPieces(bytes: Buffer, step: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += step) yield bytes.subarray(i, i + step);
}

/** decryptStream of stored bytes given in these pieces (each a storage read), from `discard` stored bytes on. */
const decryptChunks = (key: FileKey, size: number, first: number, pieces: AsyncIterable<Buffer> | Iterable<Buffer>, skip: number, length: number, discard = 0): Readable =>
  decryptStream(key, size, first, Readable.from(pieces), { discard, skip, length, fail: (e) => e as Error });

const sealed = (plain: Buffer, step = 4096, key = master, version = VERSION) => collect(encrypt(key, inPieces(plain, step), version));

type Outcome = { bytes: Buffer } | { error: unknown };
const reasonOf = (o: Outcome) => ('error' in o && o.error instanceof DecryptError ? o.error.reason : undefined);

/**
 * Stored chunks decrypted both ways, streamed in pieces of `step` bytes
 * (decryptStream) and at once from bytes in hand (decryptBytes): they must
 * give the same bytes, or fail for the same reason.
 */
async function bothWays(key: FileKey, size: number, first: number, stored: Buffer, skip: number, length: number, step: number): Promise<Buffer> {
  const streamed: Outcome = await collect(decryptChunks(key, size, first, inPieces(stored, step), skip, length)).then((bytes) => ({ bytes }), (error: unknown) => ({ error }));
  // In one buffer (one read), and in one buffer per stored chunk (a read of each).
  const perChunk = Array.from({ length: Math.ceil(stored.length / storedChunk(key.version)) }, (_, i) => stored.subarray(i * storedChunk(key.version), (i + 1) * storedChunk(key.version)));
  for (const buffers of [[stored], perChunk]) {
    let whole: Outcome;
    try {
      whole = { bytes: decryptBytes(key, size, first, buffers, skip, length) };
    } catch (error) {
      whole = { error };
    }
    if ('error' in streamed) assert.ok('error' in whole && reasonOf(whole) === reasonOf(streamed), `decryptBytes fails as decryptStream does (${String(reasonOf(streamed))})`);
    else assert.ok('bytes' in whole && whole.bytes.equals(streamed.bytes), `decryptBytes of ${buffers.length} buffers gives what decryptStream gives`);
  }
  if ('error' in streamed) throw streamed.error;
  return streamed.bytes;
}

/** The plaintext start..end of a stored file, as a ranged read does it (header, then only the chunks touched). */
async function readRange(stored: Buffer, start: number, end: number, keys = [master]): Promise<Buffer> {
  const size = plainSizeOf(stored.length, stored);
  if (size === undefined) throw new DecryptError('bad_size', 'not a stored size');
  const key = openHeader(stored.subarray(0, HEADER_SIZE), keys);
  const span = chunkSpan(size, start, end, key.version);
  return bothWays(key, size, span.first, stored.subarray(span.stored.start, span.stored.end + 1), span.skip, span.length, 5000);
}
/** The whole plaintext of a stored file, as a full read does it (every chunk, even an empty file's one). */
async function readAll(stored: Buffer, keys = [master]): Promise<Buffer> {
  const size = plainSizeOf(stored.length, stored);
  if (size === undefined) throw new DecryptError('bad_size', 'not a stored size');
  const key = openHeader(stored.subarray(0, HEADER_SIZE), keys);
  const plain = await bothWays(key, size, 0, stored.subarray(HEADER_SIZE), 0, size, 3000);
  // As a whole file's read stream gives it: the header first (cut across reads here), dropped by the decryption.
  assert.deepEqual(await collect(decryptChunks(key, size, 0, inPieces(stored, 61), 0, size, HEADER_SIZE)), plain, 'streamed with its header discarded');
  return plain;
}

test('parseMasterKey takes 32 bytes of base64 and nothing else', () => {
  const good = randomBytes(32).toString('base64');
  const cases: [string, boolean][] = [
    [good, true],
    [`  ${good}\n`, true],
    [randomBytes(31).toString('base64'), false],
    [randomBytes(33).toString('base64'), false],
    ['', false],
    [`${good.slice(0, 20)}!${good.slice(21)}`, false],
    [randomBytes(32).toString('hex'), false],
  ];
  for (const [text, ok] of cases) assert.equal(ok ? parseMasterKey(text).key.length : (() => assert.throws(() => parseMasterKey(text)))(), ok ? 32 : undefined, JSON.stringify(text));
  assert.deepEqual(parseMasterKey(good).id, parseMasterKey(`${good}\n`).id, 'the key id is the key’s, not the file’s');
  assert.notDeepEqual(master.id, otherMaster.id);
});

for (const v of VERSIONS) {
test(`version ${v}: storedSize and plainSize are inverse, and plainSize rejects sizes no stored file has`, () => {
  const X = chunkOverhead(v);
  const S = storedChunk(v);
  const plainCases = [0, 1, 15, 16, 17, C - 1, C, C + 1, 2 * C - 1, 2 * C, 2 * C + 1, 10 * C + 12345, 2 ** 40 + 3];
  for (const n of plainCases) assert.equal(plainSize(storedSize(n, v), v), n, `plain ${n}`);
  const storedCases: [number, number | undefined][] = [
    [0, undefined],
    [HEADER_SIZE, undefined],
    [HEADER_SIZE + X - 1, undefined],
    [HEADER_SIZE + X, 0],
    [HEADER_SIZE + X + 1, 1],
    [HEADER_SIZE + S, C],
    [HEADER_SIZE + S + 1, undefined],
    [HEADER_SIZE + S + X, undefined],
    [HEADER_SIZE + S + X + 1, C + 1],
    [HEADER_SIZE + 3 * S, 3 * C],
  ];
  for (const [stored, want] of storedCases) {
    assert.equal(plainSize(stored, v), want, `stored ${stored}`);
    if (want !== undefined) assert.ok(couldBeEncrypted(stored), `stored ${stored} could be encrypted`);
  }
  assert.equal(storedSize(0, v), HEADER_SIZE + X, 'an empty file is its header and one empty chunk');
  assert.equal(storedSize(C, v), HEADER_SIZE + C + X, 'a file of one full chunk has no empty chunk after it');
});
}

for (const v of VERSIONS) {
test(`version ${v}: chunkSpan maps a plaintext range onto the chunks that hold it`, () => {
  const size = 3 * C + 100;
  const cases: [number, number, { first: number; last: number; skip: number }][] = [
    [0, 0, { first: 0, last: 0, skip: 0 }],
    [0, C - 1, { first: 0, last: 0, skip: 0 }],
    [C - 1, C, { first: 0, last: 1, skip: C - 1 }],
    [C, C, { first: 1, last: 1, skip: 0 }],
    [C + 5, 2 * C + 5, { first: 1, last: 2, skip: 5 }],
    [size - 1, size - 1, { first: 3, last: 3, skip: 100 - 1 }],
    [0, size - 1, { first: 0, last: 3, skip: 0 }],
  ];
  for (const [start, end, want] of cases) {
    const span = chunkSpan(size, start, end, v);
    assert.deepEqual({ first: span.first, last: span.last, skip: span.skip }, want, `${start}-${end}`);
    assert.equal(span.stored.start, HEADER_SIZE + want.first * storedChunk(v));
    assert.equal(span.stored.end, Math.min(HEADER_SIZE + (want.last + 1) * storedChunk(v), storedSize(size, v)) - 1);
    assert.equal(span.length, end - start + 1);
  }
});
}

for (const v of VERSIONS) {
test(`version ${v}: a file round-trips at every size around the chunk edges, fed in any pieces`, async () => {
  const sizes = [0, 1, C - 1, C, C + 1, 2 * C, 3 * C + 7];
  for (const n of sizes)
    for (const step of [1000, C, C + 3, 7 * C]) {
      const plain = randomBytes(n);
      const stored = await sealed(plain, step, master, v);
      assert.equal(stored.length, storedSize(n, v), `size ${n} step ${step}`);
      assert.ok(hasMagic(stored));
      assert.equal(headerVersion(stored), v);
      if (n >= 32) assert.ok(!stored.includes(plain.subarray(0, 32)), 'no plaintext in the stored bytes');
      assert.deepEqual(await readAll(stored), plain, `size ${n} step ${step}`);
    }
});

test(`version ${v}: a small range decrypted from bytes in hand holds no memory of its chunk's plaintext (sent while the chunk would otherwise live on)`, async () => {
  const plain = randomBytes(2 * C);
  const stored = await sealed(plain, C, master, v);
  const key = openHeader(stored.subarray(0, HEADER_SIZE), [master]);
  const span = chunkSpan(plain.length, C + 100, C + 4195, v);
  const got = decryptBytes(key, plain.length, span.first, [stored.subarray(span.stored.start, span.stored.end + 1)], span.skip, span.length);
  assert.deepEqual(got, plain.subarray(C + 100, C + 4196));
  // Its own: the bytes decrypted for it, from the AES block the range starts in.
  assert.ok(got.buffer.byteLength < got.length + 16, "the answer's memory is its own, not the chunk's");
});

test(`version ${v}: ranges: first, middle, suffix and across a chunk edge give exactly those bytes`, async () => {
  const plain = randomBytes(3 * C + 100);
  const stored = await sealed(plain, 4096, master, v);
  const n = plain.length;
  const cases: [number, number][] = [
    [0, 0],
    [0, 99],
    [C - 10, C + 10],
    [C, 2 * C - 1],
    [C + 1, 3 * C + 1],
    [n - 100, n - 1],
    [n - 1, n - 1],
    [5, n - 1],
  ];
  for (const [start, end] of cases) assert.deepEqual(await readRange(stored, start, end), plain.subarray(start, end + 1), `${start}-${end}`);
});

test(`version ${v}: tampered files never decrypt: flipped bytes, cuts, swapped, appended or foreign chunks, another key`, async () => {
  const STORED_CHUNK = storedChunk(v);
  const plain = randomBytes(3 * C + 100);
  const stored = await sealed(plain, 4096, master, v);
  const other = await sealed(randomBytes(3 * C + 100), 4096, master, v);
  const chunk = (s: Buffer, i: number) => s.subarray(HEADER_SIZE + i * STORED_CHUNK, HEADER_SIZE + (i + 1) * STORED_CHUNK);
  const flip = (at: number) => {
    const b = Buffer.from(stored);
    b[at]! ^= 1;
    return b;
  };
  const header = stored.subarray(0, HEADER_SIZE);
  const n3 = plain.length;
  const cases: [string, Buffer, DecryptError['reason']][] = [
    ['a flipped byte in the first chunk', flip(HEADER_SIZE + 10), 'bad_chunk'],
    ['a flipped byte in the first chunk’s first bytes (version 2: its nonce)', flip(HEADER_SIZE + 1), 'bad_chunk'],
    ['the header’s version byte changed', Buffer.concat([Buffer.from(stored.subarray(0, 4)), Buffer.of(3 - v), stored.subarray(5)]), 'bad_header'],
    ['a flipped byte in a tag', flip(HEADER_SIZE + STORED_CHUNK - 1), 'bad_chunk'],
    ['a flipped byte in the last chunk', flip(stored.length - 50), 'bad_chunk'],
    ['a flipped byte in the wrapped key', flip(HEADER_SIZE - 20), 'bad_header'],
    ['a flipped byte in the file id', flip(20), 'bad_header'],
    ['cut at a chunk edge', stored.subarray(0, HEADER_SIZE + 2 * STORED_CHUNK), 'bad_chunk'],
    ['cut inside the last chunk', stored.subarray(0, stored.length - 30), 'bad_chunk'],
    ['the last chunk dropped, the one before repeated', Buffer.concat([header, chunk(stored, 0), chunk(stored, 1), chunk(stored, 2), chunk(stored, 2)]), 'bad_chunk'],
    ['two chunks swapped', Buffer.concat([header, chunk(stored, 1), chunk(stored, 0), stored.subarray(HEADER_SIZE + 2 * STORED_CHUNK)]), 'bad_chunk'],
    ['a chunk from another file', Buffer.concat([header, chunk(other, 0), stored.subarray(HEADER_SIZE + STORED_CHUNK)]), 'bad_chunk'],
    ['another file’s header', Buffer.concat([other.subarray(0, HEADER_SIZE), stored.subarray(HEADER_SIZE)]), 'bad_chunk'],
    ['a full chunk appended', Buffer.concat([stored.subarray(0, HEADER_SIZE + 3 * STORED_CHUNK), chunk(stored, 1), stored.subarray(HEADER_SIZE + 3 * STORED_CHUNK)]), 'bad_chunk'],
  ];
  for (const [what, bytes, reason] of cases) {
    await assert.rejects(readAll(bytes), (e: unknown) => e instanceof DecryptError && e.reason === reason, what);
  }
  await assert.rejects(readAll(stored, [otherMaster]), (e: unknown) => e instanceof DecryptError && e.reason === 'other_key');
  // Small ranges decrypt only their bytes (gcm-part.ts), yet the whole chunk they lie in is authenticated.
  const swapped = Buffer.concat([header, chunk(stored, 1), chunk(stored, 0), stored.subarray(HEADER_SIZE + 2 * STORED_CHUNK)]);
  const foreign = Buffer.concat([header, chunk(other, 0), stored.subarray(HEADER_SIZE + STORED_CHUNK)]);
  const small: [string, Buffer, number, number][] = [
    ['a flipped byte of the chunk far from the range', flip(HEADER_SIZE + 60_000), 0, 4095],
    ['a flipped byte inside the range', flip(HEADER_SIZE + 200), 100, 4195],
    ['a flipped byte of the chunk’s first bytes (version 2: its nonce)', flip(HEADER_SIZE + 1), 5000, 9095],
    ['a flipped tag byte', flip(HEADER_SIZE + STORED_CHUNK - 1), 100, 199],
    ['a flipped byte of the second chunk, the range across the edge', flip(HEADER_SIZE + STORED_CHUNK + 30_000), C - 100, C + 3995],
    ['a flipped byte of the last (short) chunk', flip(stored.length - 50), n3 - 10, n3 - 1],
    ['two chunks swapped', swapped, C + 10, C + 4105],
    ['a chunk from another file', foreign, 0, 99],
  ];
  for (const [what, bytes, start, end] of small) {
    await assert.rejects(readRange(bytes, start, end), (e: unknown) => e instanceof DecryptError && e.reason === 'bad_chunk', `range ${start}-${end}: ${what}`);
  }
  // A range that touches only untouched chunks still reads: each chunk stands on its own.
  assert.deepEqual(await readRange(flip(stored.length - 50), 0, 99), plain.subarray(0, 100));
});

test(`version ${v}: stored chunks fed in pieces that cut a nonce or tag anywhere decrypt, and a flipped tag byte still fails`, async () => {
  const STORED_CHUNK = storedChunk(v);
  const plain = randomBytes(2 * C + 50);
  const stored = await sealed(plain, C, master, v);
  const size = plain.length;
  const key = openHeader(stored.subarray(0, HEADER_SIZE), [master]);
  const body = stored.subarray(HEADER_SIZE);
  // Edges 1, 8 and 15 bytes into the first chunk's tag, and one byte at a time across it.
  for (const cut of [1, 8, 15]) {
    const at = STORED_CHUNK - TAG_SIZE + cut;
    assert.deepEqual(await collect(decryptChunks(key, size, 0, [body.subarray(0, at), body.subarray(at)], 0, size)), plain, `cut ${cut} bytes into the tag`);
  }
  const nonceCut = [body.subarray(0, 1), body.subarray(1, 7), body.subarray(7, 13), body.subarray(13, STORED_CHUNK + 5), body.subarray(STORED_CHUNK + 5)];
  assert.deepEqual(await collect(decryptChunks(key, size, 0, nonceCut, 0, size)), plain, 'cut inside the first bytes of two chunks');
  const bytewise = [body.subarray(0, STORED_CHUNK - 20), ...Array.from({ length: 40 }, (_, i) => body.subarray(STORED_CHUNK - 20 + i, STORED_CHUNK - 19 + i)), body.subarray(STORED_CHUNK + 20)];
  assert.deepEqual(await collect(decryptChunks(key, size, 0, bytewise, 0, size)), plain, 'one byte at a time across a tag');
  const flipped = Buffer.from(body);
  flipped[STORED_CHUNK - 3]! ^= 1;
  const at = STORED_CHUNK - 8;
  await assert.rejects(collect(decryptChunks(key, size, 0, [flipped.subarray(0, at), flipped.subarray(at)], 0, size)), (e: unknown) => e instanceof DecryptError && e.reason === 'bad_chunk');
  await assert.rejects(collect(decryptChunks(key, size, 0, [stored.subarray(0, HEADER_SIZE - 1)], 0, size, HEADER_SIZE)), (e: unknown) => e instanceof DecryptError && e.reason === 'bad_size', 'a stream that ends inside the header');
});

test(`version ${v}: a streamed read whose storage read holds a failed chunk gives the chunks before it, then fails`, async () => {
  const plain = randomBytes(4 * C);
  const stored = await sealed(plain, C, master, v);
  const key = openHeader(stored.subarray(0, HEADER_SIZE), [master]);
  const flipped = Buffer.from(stored);
  flipped[HEADER_SIZE + 2 * storedChunk(v) + 100]! ^= 1;
  const got: Buffer[] = [];
  // The whole file in one storage read: chunks 0 and 1 open, chunk 2 fails.
  await assert.rejects(
    (async () => {
      for await (const b of decryptChunks(key, plain.length, 0, [flipped], 0, plain.length, HEADER_SIZE)) got.push(b as Buffer);
    })(),
    (e: unknown) => e instanceof DecryptError && e.reason === 'bad_chunk',
  );
  assert.deepEqual(Buffer.concat(got), plain.subarray(0, 2 * C), 'the authenticated chunks before the altered one, nothing of it');
});

test(`version ${v}: a header re-wrapped under a new master key opens the same chunks`, async () => {
  const plain = randomBytes(C + 5);
  const stored = await sealed(plain, 4096, master, v);
  const key = openHeader(stored.subarray(0, HEADER_SIZE), [master]);
  const rewrapped = Buffer.concat([headerFor(otherMaster, key), stored.subarray(HEADER_SIZE)]);
  assert.deepEqual(await readAll(rewrapped, [otherMaster]), plain);
  assert.deepEqual(rewrapped.subarray(HEADER_SIZE), stored.subarray(HEADER_SIZE), 'the chunks are unchanged');
  assert.equal(headerVersion(rewrapped), v, 'the version stays the chunks’');
  await assert.rejects(readAll(rewrapped, [master]), (e: unknown) => e instanceof DecryptError && e.reason === 'other_key');
});
}

test('version 2: sealing a chunk index again, as a resume after a crash does, never reuses a nonce; the stored nonce is what opens it', () => {
  const { key } = newFileKey(master);
  assert.equal(key.version, 2);
  const a = Buffer.alloc(C, 'a');
  const b = Buffer.alloc(C, 'b');
  const seen = new Set<string>();
  for (const plain of [a, b, a, b]) {
    const chunk = sealChunk(key, 3, false, plain);
    assert.equal(chunk.length, storedChunk(2));
    const nonce = chunk.subarray(0, NONCE_SIZE).toString('hex');
    assert.ok(!seen.has(nonce), 'a fresh nonce for every sealing of the index');
    seen.add(nonce);
    assert.deepEqual(openChunk(key, 3, false, chunk), plain);
    assert.throws(() => openChunk(key, 4, false, chunk), (e: unknown) => e instanceof DecryptError, 'the index is authenticated');
    assert.throws(() => openChunk(key, 3, true, chunk), (e: unknown) => e instanceof DecryptError, 'the last flag is authenticated');
  }
  // Version 1 (kept only to read old files) makes the same nonce each time: why version 2 exists.
  const { key: old } = newFileKey(master, 1);
  const x = sealChunk(old, 3, false, a);
  const y = sealChunk(old, 3, false, b);
  const xor = Buffer.alloc(64);
  for (let i = 0; i < 64; i++) xor[i] = x[i]! ^ y[i]!;
  assert.ok(xor.equals(Buffer.alloc(64, 'a'.charCodeAt(0) ^ 'b'.charCodeAt(0))), 'version 1: the XOR of two sealings is the XOR of the plaintexts');
  assert.equal(TAG_SIZE + NONCE_SIZE, chunkOverhead(2));
});



test('a staged partial chunk opens only with its file key and at its offset, and sealing it again never repeats the ciphertext', () => {
  const { key } = newFileKey(master);
  const { key: other } = newFileKey(master);
  const plain = Buffer.from('partial chunk of an upload');
  const record = sealTail(key, 100_026, plain);
  assert.deepEqual(openTail(key, 100_026, record), plain);
  assert.ok(!sealTail(key, 100_026, plain).equals(record), 'a random iv each time');
  assert.ok(!record.includes(plain), 'no plaintext in the record');
  const flipped = Buffer.from(record);
  flipped[20] = flipped[20]! ^ 1;
  const refusals: [string, () => Buffer][] = [
    ['another offset', () => openTail(key, 100_027, record)],
    ['another file', () => openTail(other, 100_026, record)],
    ['a flipped byte', () => openTail(key, 100_026, flipped)],
    ['cut short', () => openTail(key, 100_026, record.subarray(0, 20))],
    ['cut by one byte', () => openTail(key, 100_026, record.subarray(0, record.length - 1))],
  ];
  for (const [what, open] of refusals) assert.throws(open, (e: unknown) => e instanceof DecryptError && e.reason === 'bad_chunk', what);
});

/**
 * A source that recycles its reads, as a local file's reader does: every
 * buffer handed back is overwritten at once (the next read into it), so a
 * decryption that kept any byte of a read it gave back would give wrong
 * bytes or fail a tag.
 */
class RecyclingSource extends Readable {
  private at = 0;
  readonly handedBack: Buffer[] = [];
  constructor(
    private readonly bytes: Buffer,
    private readonly step: number,
  ) {
    super();
  }
  recycle(chunk: Buffer): void {
    this.handedBack.push(chunk);
    chunk.fill(0xa5);
  }
  override _read(): void {
    if (this.at >= this.bytes.length) return void this.push(null);
    const piece = Buffer.from(this.bytes.subarray(this.at, this.at + this.step));
    this.at += piece.length;
    setImmediate(() => this.push(piece));
  }
}

test('decryptStream of a recycling source: every read is handed back, and bytes held across reads are its own', async () => {
  for (const version of VERSIONS) {
    const stored = storedChunk(version);
    const cases = [
      { size: 3 * C + 777, step: stored - 5 },
      { size: 3 * C + 777, step: 3 * stored + 11 },
      { size: 2 * C, step: 7 },
      { size: 5 * C + 1, step: 1024 * 1024 },
    ];
    for (const { size, step } of cases) {
      const plain = randomBytes(size);
      const file = await sealed(plain, 4096, master, version);
      const source = new RecyclingSource(file, step);
      const key = openHeader(file.subarray(0, HEADER_SIZE), [master]);
      const out = await collect(decryptStream(key, size, 0, source, { discard: HEADER_SIZE, skip: 0, length: size, fail: (e) => e as Error }));
      assert.ok(out.equals(plain), `v${version}, ${size} bytes read ${step} at a time: the plaintext`);
      assert.equal(source.handedBack.length, Math.ceil(file.length / step), `v${version}, ${size} bytes read ${step} at a time: every read handed back`);
    }
  }
});

/** A chunk's plaintext cut into parts as a network body might: whole, in 7-byte pieces, with empty parts between. */
const partsOf = (plain: Buffer): Buffer[][] => [
  [plain],
  Array.from({ length: Math.ceil(plain.length / 7) }, (_, i) => plain.subarray(i * 7, i * 7 + 7)),
  [Buffer.alloc(0), plain.subarray(0, 5), Buffer.alloc(0), plain.subarray(5), Buffer.alloc(0)],
];

test('sealPartsInto (native) writes what node:crypto seals: the same bytes under version 1 (its nonce is the index), bytes that open under version 2, in the given memory', (t) => {
  if (skippedWithoutNative(t)) return;
  const native = nativeGcm as NativeGcm;
  for (const version of VERSIONS) {
    const { key } = newFileKey(master, version);
    for (const size of [0, 1, 15, 16, 17, 4096, C - 5, C]) {
      const plain = randomBytes(size);
      for (const [index, last] of [[0, false], [3, true], [70000, false]] as const) {
        for (const parts of partsOf(plain)) {
          const out = Buffer.alloc(sealedSize(version, size) + 10, 0xaa);
          const got = sealPartsInto(native, key, index, last, parts, out);
          const what = `version ${version}, ${size} bytes in ${parts.length} parts, chunk ${index}${last ? ' (last)' : ''}`;
          assert.equal(got.length, sealedSize(version, size), what);
          assert.equal(got.buffer, out.buffer, `${what}: written into the memory given`);
          assert.ok(out.subarray(got.length).equals(Buffer.alloc(10, 0xaa)), `${what}: nothing past the chunk`);
          if (version === 1) assert.ok(got.equals(sealChunk(key, index, last, plain)), what);
          assert.ok(Buffer.concat(openParts(key, index, last, [got])).equals(plain), what);
          // Opened as another chunk, or as the last one when it is not: refused, as node:crypto's would be.
          assert.throws(() => openParts(key, index + 1, last, [got]), DecryptError, what);
          assert.throws(() => openParts(key, index, !last, [got]), DecryptError, what);
        }
      }
    }
  }
  const { key } = newFileKey(master);
  assert.throws(() => sealPartsInto(native, key, 0, false, [randomBytes(100)], Buffer.alloc(sealedSize(VERSION, 100) - 1)), RangeError, 'memory too short for the chunk');
});

test('native seal: every wrong argument is a TypeError before a byte of out is written', (t) => {
  if (skippedWithoutNative(t)) return;
  const native = nativeGcm as NativeGcm;
  const out = Buffer.alloc(200, 0xaa);
  const tag = Buffer.alloc(16, 0xaa);
  const [key, nonce, aad, plain] = [randomBytes(32), randomBytes(12), randomBytes(21), randomBytes(100)];
  const cases: [string, () => void][] = [
    ['a key of 31 bytes', () => native.seal(key.subarray(1), nonce, aad, [plain], out, tag)],
    ['a nonce of 16 bytes', () => native.seal(key, randomBytes(16), aad, [plain], out, tag)],
    ['a tag of 15 bytes', () => native.seal(key, nonce, aad, [plain], out, Buffer.alloc(15))],
    ['parts not an array', () => native.seal(key, nonce, aad, plain as unknown as Buffer[], out, tag)],
    ['a part not bytes', () => native.seal(key, nonce, aad, [plain, 'text' as unknown as Buffer], out, tag)],
    ['out shorter than the parts', () => native.seal(key, nonce, aad, [plain, plain], out.subarray(0, 199), tag)],
    ['out overlapping a part', () => native.seal(key, nonce, aad, [out.subarray(150, 200)], out.subarray(100, 160), tag)],
    ['aad not bytes', () => native.seal(key, nonce, 'aad' as unknown as Buffer, [plain], out, tag)],
  ];
  for (const [what, call] of cases) {
    assert.throws(call, TypeError, what);
    assert.ok(out.equals(Buffer.alloc(200, 0xaa)) && tag.equals(Buffer.alloc(16, 0xaa)), `${what}: nothing written`);
  }
});
