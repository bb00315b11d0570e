import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { keyOf, names, put, readAll, rejectsCode, text, bodyOf, type Ctx, type It } from './support.test-suite.js';

const sha1 = (s: string | Buffer) => createHash('sha1').update(s).digest();

/** A body that yields `data` and then fails, as a request does when its client goes away. */
function cutBody(data: Buffer): Readable {
  return Readable.from(
    (async function* () {
      yield data;
      await new Promise((r) => setTimeout(r, 5));
      throw new Error('connection reset');
    })(),
  );
}

/** What the resumable staging holds, when the backend under test can tell. */
const left = async (c: Ctx) => (c.resumableStaging ? c.resumableStaging() : []);

/**
 * Conformance of the resumable staging (backend.resumable): appends at
 * recorded offsets, cut bodies, checksums, limits, commit with the PUT
 * rules, removal, and leftovers of a crash never surfacing.
 */
export function resumableTests(it: It): void {
  it('resumable: appends in pieces, reports durable offsets, commits the file whole; nothing is listed before', async (c) => {
    const { b } = c;
    const r = b.resumable;
    const id = randomUUID();
    await r.create(id);
    const durable: number[] = [];
    const a = await r.append(id, 0, bodyOf('hello '), { maxBytes: 11, onDurable: async (o) => void durable.push(o) });
    assert.deepEqual(a, { offset: 6, outcome: 'complete' });
    assert.deepEqual(durable, [6], 'each new durable offset is reported');
    assert.deepEqual(await names(b, ''), [], 'staging is not in the tree');
    assert.deepEqual(await r.append(id, 6, bodyOf('world'), { maxBytes: 5 }), { offset: 11, outcome: 'complete' });
    const entry = await r.commit(id, 11, keyOf('docs/hello.txt'), { ifExists: 'rename' });
    assert.equal(entry?.name, 'hello.txt');
    assert.equal(entry?.size, 11);
    assert.equal(await text(b, 'docs/hello.txt'), 'hello world');
    assert.deepEqual(await left(c), [], 'commit removed the staging');
  });

  it('resumable: a body cut off midway keeps exactly what arrived; with a checksum it keeps nothing', async (c) => {
    const r = c.b.resumable;
    const id = randomUUID();
    await r.create(id);
    const data = Buffer.alloc(100_000, 1);
    assert.deepEqual(await r.append(id, 0, cutBody(data), { maxBytes: 1_000_000 }), { offset: 100_000, outcome: 'cut' });
    assert.deepEqual(await r.append(id, 100_000, cutBody(Buffer.from('xyz')), { maxBytes: 1_000_000, sha1: sha1('xyz') }), { offset: 100_000, outcome: 'cut' });
    assert.deepEqual(await r.append(id, 100_000, bodyOf('end'), { maxBytes: 3 }), { offset: 100_003, outcome: 'complete' });
    await r.commit(id, 100_003, keyOf('cut.bin'), { ifExists: 'replace' });
    assert.ok((await readAll((await c.b.read(keyOf('cut.bin'))).stream)).equals(Buffer.concat([data, Buffer.from('end')])));
  });

  it('resumable: chunks of mixed sizes (above and below S3\'s 5 MiB part minimum) commit whole and in order', async (c) => {
    const r = c.b.resumable;
    const id = randomUUID();
    await r.create(id);
    const MiB = 1024 * 1024;
    const data = Buffer.alloc(17 * MiB + 5);
    for (let i = 0; i + 4 <= data.length; i += 4) data.writeUInt32LE(i, i);
    let at = 0;
    for (const n of [9 * MiB, 2 * MiB, 1, 6 * MiB + 4]) {
      assert.equal((await r.append(id, at, bodyOf(data.subarray(at, at + n)), { maxBytes: n })).offset, at + n);
      at += n;
    }
    await r.commit(id, data.length, keyOf('mixed.bin'), { ifExists: 'rename' });
    assert.ok((await readAll((await c.b.read(keyOf('mixed.bin'))).stream)).equals(data));
    assert.deepEqual(await left(c), []);
  });

  it('resumable: a checksum mismatch discards the chunk, a match keeps it', async (c) => {
    const r = c.b.resumable;
    const id = randomUUID();
    await r.create(id);
    const durable: number[] = [];
    assert.deepEqual(await r.append(id, 0, bodyOf('abcd'), { maxBytes: 8, sha1: sha1('abcd'), onDurable: async (o) => void durable.push(o) }), { offset: 4, outcome: 'complete' });
    assert.deepEqual(durable, [], 'with a checksum, the caller records the offset from the result only');
    assert.deepEqual(await r.append(id, 4, bodyOf('efgh'), { maxBytes: 4, sha1: sha1('EFGH') }), { offset: 4, outcome: 'checksum_mismatch' });
    assert.deepEqual(await r.append(id, 4, bodyOf('efgh'), { maxBytes: 4, sha1: sha1('efgh') }), { offset: 8, outcome: 'complete' });
    await r.commit(id, 8, keyOf('summed.txt'), { ifExists: 'replace' });
    assert.equal(await text(c.b, 'summed.txt'), 'abcdefgh');
  });

  it('resumable: more bytes than allowed is too_large and the chunk is dropped', async (c) => {
    const r = c.b.resumable;
    const id = randomUUID();
    await r.create(id);
    await rejectsCode(r.append(id, 0, bodyOf('toolong'), { maxBytes: 4, sha1: sha1('toolong') }), 'too_large');
    assert.deepEqual(await r.append(id, 0, bodyOf('four'), { maxBytes: 4 }), { offset: 4, outcome: 'complete' });
    await r.commit(id, 4, keyOf('four.txt'), { ifExists: 'replace' });
    assert.equal(await text(c.b, 'four.txt'), 'four');
  });

  it('resumable: bytes past the recorded offset (a crash before they were recorded) never reach the file', async (c) => {
    const r = c.b.resumable;
    const id = randomUUID();
    await r.create(id);
    await r.append(id, 0, bodyOf('abc'), { maxBytes: 6 });
    // Stored, but the process "died" before recording offset 6: the upload is still at 3.
    await r.append(id, 3, bodyOf('def'), { maxBytes: 3 });
    await r.append(id, 3, bodyOf('XY'), { maxBytes: 3 });
    await r.append(id, 5, bodyOf('Z'), { maxBytes: 1 });
    await r.commit(id, 6, keyOf('crash.txt'), { ifExists: 'replace' });
    assert.equal(await text(c.b, 'crash.txt'), 'abcXYZ');
  });

  it('resumable: commit follows the PUT rules: rename takes a collision name, replace replaces', async (c) => {
    const { b } = c;
    await put(b, 'taken.txt', 'old');
    const one = randomUUID();
    await b.resumable.create(one);
    await b.resumable.append(one, 0, bodyOf('new'), { maxBytes: 3 });
    assert.equal((await b.resumable.commit(one, 3, keyOf('taken.txt'), { ifExists: 'rename' }))?.name, 'taken (1).txt');
    assert.equal(await text(b, 'taken.txt'), 'old');
    assert.equal(await text(b, 'taken (1).txt'), 'new');
    const two = randomUUID();
    await b.resumable.create(two);
    await b.resumable.append(two, 0, bodyOf('newer'), { maxBytes: 5 });
    assert.equal((await b.resumable.commit(two, 5, keyOf('taken.txt'), { ifExists: 'replace' }))?.name, 'taken.txt');
    assert.equal(await text(b, 'taken.txt'), 'newer');
  });

  it('resumable: a second commit of the same upload (its first one died before being recorded) makes no second file', async (c) => {
    const { b } = c;
    for (const ifExists of ['rename', 'replace'] as const) {
      const id = randomUUID();
      await b.resumable.create(id);
      await b.resumable.append(id, 0, bodyOf('once'), { maxBytes: 4 });
      assert.ok(await b.resumable.commit(id, 4, keyOf(`${ifExists}/once.txt`), { ifExists }));
      assert.equal(await b.resumable.commit(id, 4, keyOf(`${ifExists}/once.txt`), { ifExists }), undefined, ifExists);
      assert.deepEqual(await names(b, ifExists), ['once.txt'], ifExists);
    }
  });

  it('resumable: remove drops the staged bytes; ids that are not upload ids are refused', async (c) => {
    const r = c.b.resumable;
    const id = randomUUID();
    await r.create(id);
    await r.append(id, 0, bodyOf(Buffer.alloc(10_000, 2)), { maxBytes: 10_000 });
    assert.ok((await left(c)).length > 0);
    const listed = (await r.list()).find((s) => s.id === id);
    assert.ok(listed, 'list names the upload');
    assert.ok(Math.abs(listed.modified - Date.now()) < 60_000, 'with the time it last changed');
    await r.remove(id);
    assert.equal((await r.list()).find((s) => s.id === id), undefined);
    await r.remove(id);
    assert.deepEqual(await left(c), []);
    for (const bad of ['../x', 'a/b', '', 'ABC']) await rejectsCode(r.create(bad), 'invalid_path');
  });
}
