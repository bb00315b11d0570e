import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { collisionName } from '../../domain/names.js';
import { listAll } from '../backend.js';
import type { StorageEvent } from '../events.js';
import { bodyOf, keyOf, put, readAll, rejectsCode, sha256, slowBody, stagingIsEmpty, names, text, type It } from './support.test-suite.js';

/** Conformance tests of write: names, collisions, concurrency, limits, aborts and failures. */
export function writeTests(it: It): void {
  // --- write ---
  it('write creates a file and returns its entry', async ({ b }) => {
    const entry = await put(b, 'new.txt', 'content');
    assert.equal(entry.name, 'new.txt');
    assert.equal(entry.isFile, true);
    assert.equal(entry.size, 7);
    assert.equal(entry.etag, (await b.stat(keyOf('new.txt')))?.etag);
    assert.equal(await text(b, 'new.txt'), 'content');
  });

  it('write with modified: where the backend keeps times, the entry, stat, listings and a move show it; elsewhere the file has its write\'s time', async ({ b }) => {
    const when = new Date('2001-02-03T04:05:06Z');
    const big = Buffer.alloc(300 * 1024, 7);
    const since = Date.now() - 2000;
    const written = [
      await b.write(keyOf('dated.txt'), bodyOf('dated'), { ifExists: 'fail', modified: when }),
      await b.write(keyOf('dated.bin'), slowBody(big), { ifExists: 'fail', modified: when }),
      await b.write(keyOf('dated.txt'), bodyOf('again'), { ifExists: 'replace', modified: when }),
    ];
    await b.move(keyOf('dated.bin'), keyOf('moved.bin'), { overwrite: false });
    const listed = (await listAll(b, keyOf(''))).filter((e) => e.isFile);
    const sorted = [];
    for await (const page of b.listSorted(keyOf(''))) sorted.push(...page.filter((e) => e.isFile));
    const seen = [...written, await b.stat(keyOf('dated.txt')), await b.stat(keyOf('moved.bin')), ...listed, ...sorted];
    assert.equal(seen.length, 9);
    for (const e of seen) {
      const t = e?.modified.getTime() ?? NaN;
      if (b.capabilities.keepsModified) assert.equal(t, when.getTime(), e?.name);
      else assert.ok(t >= since, `${e?.name}: dated by its write`);
    }
  });

  it('redate gives a stored file the time where the backend keeps times, its bytes untouched; a folder or nothing is refused', async ({ b }) => {
    const when = new Date('2003-04-05T06:07:08Z');
    const written = await put(b, 'r/redated.txt', 'same bytes');
    const events: StorageEvent[] = [];
    const stop = b.events.subscribe((e) => void events.push(e));
    let entry;
    try {
      entry = await b.redate(keyOf('r/redated.txt'), when);
    } finally {
      stop();
    }
    const listed = (await listAll(b, keyOf('r'))).find((e) => e.name === 'redated.txt');
    const seen = [entry, await b.stat(keyOf('r/redated.txt')), listed].map((e) => e?.modified.getTime());
    if (b.capabilities.keepsModified) {
      assert.deepEqual(seen, [when.getTime(), when.getTime(), when.getTime()]);
      // Sizes as the layer below stores them (an encrypting layer's are larger): the same before and after.
      const [e] = events;
      assert.equal(events.length, 1);
      assert.ok(e?.type === 'replaced', e?.type);
      assert.deepEqual([e.type, e.key, e.size === e.previousSize, e.entry?.modified.getTime(), e.copyOf], ['replaced', keyOf('r/redated.txt'), true, when.getTime(), { from: keyOf('r/redated.txt'), to: keyOf('r/redated.txt') }]);
    } else {
      // Dated by its write, as before (an S3 PutObject's answer can be a second off the object's own date).
      assert.ok(seen.every((t) => t !== undefined && t === seen[1] && Math.abs(t - written.modified.getTime()) <= 1000), String(seen));
      assert.deepEqual(events, []);
    }
    assert.equal(await text(b, 'r/redated.txt'), 'same bytes');
    await rejectsCode(b.redate(keyOf('r'), when), 'is_a_directory');
    await rejectsCode(b.redate(keyOf('r/missing.txt'), when), 'not_found');
  });

  it('write of an empty body creates an empty file', async ({ b }) => {
    assert.equal((await put(b, 'zero', '')).size, 0);
    assert.equal((await b.stat(keyOf('zero')))?.size, 0);
  });

  it('write creates missing parent folders', async ({ b }) => {
    await put(b, 'a/b/c/deep.txt', 'x');
    assert.equal((await b.stat(keyOf('a/b')))?.isFile, false);
    assert.equal(await text(b, 'a/b/c/deep.txt'), 'x');
  });

  it('write below a file is not_a_directory', async ({ b }) => {
    await put(b, 'file', 'x');
    await rejectsCode(put(b, 'file/child.txt', 'y'), 'not_a_directory');
    await rejectsCode(put(b, 'file/deeper/child.txt', 'y'), 'not_a_directory');
    assert.equal(await text(b, 'file'), 'x');
  });

  it('write to the user root is is_a_directory', async ({ b }) => {
    await rejectsCode(b.write(keyOf(''), bodyOf('x'), { ifExists: 'replace' }), 'is_a_directory');
  });

  it('write with fail refuses a taken name and keeps the old contents', async ({ b }) => {
    await put(b, 'f.txt', 'old');
    await rejectsCode(put(b, 'f.txt', 'new', 'fail'), 'already_exists');
    assert.equal(await text(b, 'f.txt'), 'old');
  });

  it("write with replace replaces a file's contents", async ({ b }) => {
    await put(b, 'f.txt', 'old contents');
    const entry = await put(b, 'f.txt', 'new', 'replace');
    assert.equal(entry.name, 'f.txt');
    assert.equal(await text(b, 'f.txt'), 'new');
    assert.deepEqual(await names(b, ''), ['f.txt']);
  });

  it('write with fail or replace onto a folder is is_a_directory', async ({ b }) => {
    await b.mkdir(keyOf('dir'), { parents: false, existOk: false });
    await put(b, 'dir/inside.txt', 'keep');
    await rejectsCode(put(b, 'dir', 'x', 'fail'), 'is_a_directory');
    await rejectsCode(put(b, 'dir', 'x', 'replace'), 'is_a_directory');
    assert.equal(await text(b, 'dir/inside.txt'), 'keep');
  });

  it('write with rename claims "name (1).ext", then "name (2).ext"', async ({ b }) => {
    await put(b, 'report.pdf', '0');
    assert.equal((await put(b, 'report.pdf', '1', 'rename')).name, 'report (1).pdf');
    assert.equal((await put(b, 'report.pdf', '2', 'rename')).name, 'report (2).pdf');
    assert.equal(await text(b, 'report (2).pdf'), '2');
    assert.equal(await text(b, 'report.pdf'), '0');
  });

  it('write with rename takes the name itself when it is free', async ({ b }) => {
    assert.equal((await put(b, 'free.txt', 'x', 'rename')).name, 'free.txt');
  });

  it('write with rename counts a folder as a taken name', async ({ b }) => {
    await b.mkdir(keyOf('photos'), { parents: false, existOk: false });
    assert.equal((await put(b, 'photos', 'x', 'rename')).name, collisionName('photos', 1));
    assert.equal((await b.stat(keyOf('photos')))?.isFile, false);
  });

  it('write with rename claims distinct names under 20 concurrent writers', async (c) => {
    const inputs = Array.from({ length: 20 }, (_, i) => Buffer.from(`writer ${i} `.repeat(2000 + i)));
    const entries = await Promise.all(inputs.map((data) => c.b.write(keyOf('up/same.txt'), slowBody(data), { ifExists: 'rename' })));
    const got = entries.map((e) => e.name);
    assert.equal(new Set(got).size, 20, 'every writer gets its own name');
    assert.deepEqual([...got].sort(), Array.from({ length: 20 }, (_, n) => collisionName('same.txt', n)).sort());
    for (const [i, e] of entries.entries()) {
      assert.equal(sha256(await readAll((await c.b.read(keyOf(`up/${e.name}`))).stream)), sha256(inputs[i] as Buffer));
    }
    await stagingIsEmpty(c);
  });

  it('write with replace under 10 concurrent writers leaves exactly one input, whole', async (c) => {
    const inputs = Array.from({ length: 10 }, (_, i) => Buffer.from(`replace ${i} `.repeat(3000 + 7 * i)));
    await Promise.all(inputs.map((data) => c.b.write(keyOf('one.txt'), slowBody(data), { ifExists: 'replace' })));
    const final = sha256(await readAll((await c.b.read(keyOf('one.txt'))).stream));
    assert.ok(inputs.some((d) => sha256(d) === final));
    assert.deepEqual(await names(c.b, ''), ['one.txt']);
    await stagingIsEmpty(c);
  });

  it('write streams an 8 MiB body intact', async ({ b }) => {
    const data = Buffer.alloc(8 << 20);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE(i, i);
    const entry = await b.write(keyOf('big.bin'), slowBody(data, 128), { ifExists: 'fail' });
    assert.equal(entry.size, data.length);
    assert.equal(sha256(await readAll((await b.read(keyOf('big.bin'))).stream)), sha256(data));
  });

  it('write stores names with unicode, spaces, #, %, ? and leading dots', async ({ b }) => {
    const odd = ['hello world.txt', 'naïve café.txt', '日本語.md', 'emoji 😀.txt', '#hash', '100%.txt', '%2e%2e', 'what?.txt', '.hidden', 'a+b=c&d.txt', 'trailing.', ' leading space', `quote'"`];
    for (const n of odd) await b.write(keyOf(`odd/${n}`), bodyOf(`is ${n}`), { ifExists: 'fail' });
    assert.deepEqual(await names(b, 'odd'), [...odd].sort());
    for (const n of odd) assert.equal(await text(b, `odd/${n}`), `is ${n}`);
  });

  // --- limits, aborts, failures ---
  it('write over maxBytes is too_large and leaves no file and no staging', async (c) => {
    await rejectsCode(c.b.write(keyOf('big.txt'), slowBody(Buffer.alloc(1000, 'x'), 10), { ifExists: 'fail', maxBytes: 999 }), 'too_large');
    assert.equal(await c.b.stat(keyOf('big.txt')), undefined);
    await stagingIsEmpty(c);
  });

  it('write of exactly maxBytes succeeds', async ({ b }) => {
    assert.equal((await b.write(keyOf('fits.txt'), bodyOf(Buffer.alloc(1000)), { ifExists: 'fail', maxBytes: 1000 })).size, 1000);
  });

  it('write with an already aborted signal is aborted and leaves nothing', async (c) => {
    const ac = new AbortController();
    ac.abort();
    await rejectsCode(c.b.write(keyOf('x.txt'), bodyOf('data'), { ifExists: 'fail', signal: ac.signal }), 'aborted');
    assert.equal(await c.b.stat(keyOf('x.txt')), undefined);
    await stagingIsEmpty(c);
  });

  it('write aborted mid-stream leaves no file and no staging', async (c) => {
    const ac = new AbortController();
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(64 * 1024, 'p'));
    const writing = c.b.write(keyOf('partial.bin'), body, { ifExists: 'fail', signal: ac.signal });
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    await rejectsCode(writing, 'aborted');
    body.destroy();
    assert.equal(await c.b.stat(keyOf('partial.bin')), undefined);
    await stagingIsEmpty(c);
  });

  it('write whose body fails before the backend reads it is aborted and leaves nothing', async (c) => {
    // A client gone while the backend still checks parents and claims the name: no uncaught error.
    const body = new Readable({ read() {} });
    body.destroy(new Error('connection reset'));
    await rejectsCode(c.b.write(keyOf('early.bin'), body, { ifExists: 'fail' }), 'aborted');
    assert.equal(await c.b.stat(keyOf('early.bin')), undefined);
    await stagingIsEmpty(c);
  });

  it('write whose body stream fails is aborted and leaves nothing', async (c) => {
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(10_000, 'e'));
    setTimeout(() => body.destroy(new Error('connection reset')), 20);
    await rejectsCode(c.b.write(keyOf('broken.bin'), body, { ifExists: 'fail' }), 'aborted');
    assert.equal(await c.b.stat(keyOf('broken.bin')), undefined);
    await stagingIsEmpty(c);
  });

  it('a failed replace keeps the previous contents', async (c) => {
    await put(c.b, 'keep.txt', 'previous');
    await rejectsCode(c.b.write(keyOf('keep.txt'), bodyOf('much too long'), { ifExists: 'replace', maxBytes: 4 }), 'too_large');
    assert.equal(await text(c.b, 'keep.txt'), 'previous');
    await stagingIsEmpty(c);
  });

}
