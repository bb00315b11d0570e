import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { CHUNK_SIZE, HEADER_SIZE, STORED_CHUNK, hasMagic, newMasterKeyText, openHeader, parseMasterKey, storedSize } from './format.js';
import { sealingStream } from './seal-stream.js';
import { decryptBytes } from './stream.js';
import { nativeGcm, nativeGcmPath } from './native-gcm.js';
import { skippedWithoutNative } from './native-skip.test-suite.js';

const C = CHUNK_SIZE;
const master = parseMasterKey(newMasterKeyText());

/** A body giving bytes in pieces of `step`, as a network body would, counting what was taken from it. */
function bodyOf(bytes: Buffer, step: number): Readable & { taken: number } {
  let at = 0;
  const body = new Readable({
    read() {
      if (at >= bytes.length) return void this.push(null);
      const piece = bytes.subarray(at, at + step);
      at += piece.length;
      body.taken = at;
      this.push(piece);
    },
  }) as Readable & { taken: number };
  body.taken = 0;
  return body;
}

/** A body that gives `bytes` and then neither ends nor fails, as a stalled client's. */
function stalled(bytes: Buffer): Readable {
  let given = false;
  return new Readable({
    read() {
      if (!given) this.push(bytes);
      given = true;
    },
  });
}

/** Every buffer the stream gives, as its reader gets them. */
async function buffers(stream: Readable): Promise<Buffer[]> {
  const got: Buffer[] = [];
  for await (const b of stream) got.push(b as Buffer);
  return got;
}

function plainOf(stored: Buffer, size: number): Buffer {
  assert.ok(hasMagic(stored));
  assert.equal(stored.length, storedSize(size));
  return decryptBytes(openHeader(stored.subarray(0, HEADER_SIZE), [master]), size, 0, [stored.subarray(HEADER_SIZE)], 0, size);
}

test('a sealed body decrypts to its bytes at every size around the chunk edges, fed in any pieces, on node:crypto and on the native module', async () => {
  for (const [path, native] of [['node:crypto', null], ['native', nativeGcm ?? null]] as const) {
    for (const size of [0, 1, 4096, C - 1, C, C + 1, 3 * C, 3 * C + 5]) {
      const plain = randomBytes(size);
      for (const step of [7, 4096, C, C + 3, 200_000]) {
        if (step === 7 && size > C + 1) continue;
        const stored = Buffer.concat(await buffers(sealingStream(master, bodyOf(plain, step), native)));
        assert.ok(plainOf(stored, size).equals(plain), `${path}${native === null && path === 'native' ? ` (not loaded: ${nativeGcmPath})` : ''}: size ${size}, pieces of ${step}`);
      }
    }
  }
});

test('native: a reader that hands each chunk back once stored gets the body, sealed again and again into the memory it handed back', async (t) => {
  if (skippedWithoutNative(t)) return;
  const size = 5 * 1024 * 1024 + 123;
  const plain = randomBytes(size);
  const sealed = sealingStream(master, bodyOf(plain, 16 * 1024));
  const copies: Buffer[] = [];
  const memory = new Set<ArrayBufferLike>();
  assert.equal(typeof sealed.recycle, 'function', 'a stream that lends its chunks takes them back');
  assert.equal(sealingStream(master, bodyOf(plain, 1), null).recycle, undefined, 'on node:crypto: nothing to take back');
  for await (const b of sealed) {
    copies.push(Buffer.from(b as Buffer));
    memory.add((b as Buffer).buffer);
    sealed.recycle?.(b as Buffer);
  }
  assert.ok(plainOf(Buffer.concat(copies), size).equals(plain));
  const chunks = Math.ceil(size / C);
  // The chunks in the stream's queue and one being sealed are out at once; the rest is memory handed back.
  assert.ok(memory.size <= 20, `${chunks} chunks sealed into ${memory.size} buffers`);
});

test('native: a chunk not handed back is never written over, and one handed back twice is reused once', async (t) => {
  if (skippedWithoutNative(t)) return;
  const size = 3 * 1024 * 1024 + 7;
  const plain = randomBytes(size);
  const sealed = sealingStream(master, bodyOf(plain, 10_000));
  const copies: Buffer[] = [];
  const kept: [Buffer, Buffer][] = [];
  let previous: Buffer | undefined;
  let n = 0;
  for await (const b of sealed) {
    const chunk = b as Buffer;
    copies.push(Buffer.from(chunk));
    if (n++ % 5 === 0) kept.push([chunk, Buffer.from(chunk)]);
    else {
      // Handed back a chunk late, twice: were it lent again twice, two chunks would be sealed into one memory.
      if (previous) {
        sealed.recycle?.(previous);
        sealed.recycle?.(previous);
      }
      previous = chunk;
    }
    await sleep(0);
  }
  assert.ok(plainOf(Buffer.concat(copies), size).equals(plain), 'every chunk as it was given');
  for (const [chunk, copy] of kept) assert.ok(chunk.equals(copy), 'a chunk kept by the reader is as it was given');
});

test('a body that ends within its first chunk is given as one buffer, header and chunk together', async () => {
  for (const size of [0, 4096, C]) {
    const plain = randomBytes(size);
    const got = await buffers(sealingStream(master, bodyOf(plain, 1000)));
    assert.equal(got.length, 1, `size ${size}`);
    assert.ok(plainOf(got[0]!, size).equals(plain));
  }
});

test('the body is read only as the stream is read: nothing before the first read, at most about 1 MiB ahead of the reader', async () => {
  const size = 64 * 1024 * 1024;
  const plain = Buffer.alloc(size, 7);
  const body = bodyOf(plain, 16 * 1024);
  const sealed = sealingStream(master, body);
  await sleep(50);
  assert.equal(body.taken, 0, 'read before the stream was');
  const it = sealed[Symbol.asyncIterator]();
  await it.next();
  // The body's own buffer (16 KiB) and one chunk being filled come on top of the queued chunks.
  const bound = 17 * STORED_CHUNK + 2 * 16 * 1024;
  await sleep(100);
  assert.ok(body.taken > 0 && body.taken <= bound, `taken ${body.taken} of ${size} with the reader stopped (bound ${bound})`);
  let stored = 0;
  for (let next = await it.next(); !next.done; next = await it.next()) stored += (next.value as Buffer).length;
  assert.equal(stored + HEADER_SIZE, storedSize(size), 'the header comes first and alone, then every chunk');
});

test('a body that fails or closes early fails the stream; destroying the stream destroys the body', async () => {
  const failing = stalled(randomBytes(3 * C));
  const reading = buffers(sealingStream(master, failing));
  await sleep(10);
  failing.destroy(new Error('the client went away'));
  await assert.rejects(reading, /the client went away/);

  const closing = stalled(randomBytes(3 * C));
  const cut = buffers(sealingStream(master, closing));
  await sleep(10);
  closing.destroy();
  await assert.rejects(cut, { code: 'ERR_STREAM_PREMATURE_CLOSE' });

  // Failing before anything reads the stream: kept for its reader, never uncaught.
  const early = bodyOf(randomBytes(C), 4096);
  const waiting = sealingStream(master, early);
  early.destroy(new Error('gone before the read'));
  await sleep(10);
  await assert.rejects(buffers(waiting), /gone before the read/);

  const source = stalled(randomBytes(3 * C));
  const given = sealingStream(master, source);
  given.destroy();
  await once(source, 'close');
  assert.ok(source.destroyed);
});
