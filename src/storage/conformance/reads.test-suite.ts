import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { listAll, WHOLE_READ_MAX } from '../backend.js';
import { bodyOf, keyOf, put, readAll, rejectsCode, sha256, slowBody, text, type It } from './support.test-suite.js';

/** Conformance tests of stat, list and read. */
export function readTests(it: It): void {
  // --- capabilities, roots, stat ---
  it('declares its capabilities as booleans', async ({ b }) => {
    for (const v of Object.values(b.capabilities)) assert.equal(typeof v, 'boolean');
  });

  it('stat of a user root that was never created is undefined', async ({ b }) => {
    assert.equal(await b.stat(keyOf('')), undefined);
    await rejectsCode(listAll(b, keyOf('')), 'not_found');
  }, { root: false });

  it('mkdir of a user root makes an empty folder', async ({ b }) => {
    assert.equal((await b.stat(keyOf('', 'bob')))?.isFile, undefined);
    await b.mkdir(keyOf('', 'bob'), { parents: true, existOk: false });
    assert.equal((await b.stat(keyOf('', 'bob')))?.isFile, false);
    assert.deepEqual(await listAll(b, keyOf('', 'bob')), []);
  });

  it('stat returns undefined for a missing key', async ({ b }) => {
    assert.equal(await b.stat(keyOf('nope.txt')), undefined);
    assert.equal(await b.stat(keyOf('no/such/folder')), undefined);
  });

  it('parents lists the folders on the way to a key, outermost first, as far as they are folders', async ({ b }) => {
    await put(b, 'p/q/r/f.txt', 'x');
    assert.deepEqual((await b.parents(keyOf('p/q/r/f.txt'))).map((e) => [e.name, e.isFile]), [['p', false], ['q', false], ['r', false]]);
    assert.deepEqual((await b.parents(keyOf('p/q/missing/deeper/g.txt'))).map((e) => e.name), ['p', 'q']);
    // A file on the way ends the list: nothing below it can be a folder.
    assert.deepEqual((await b.parents(keyOf('p/q/r/f.txt/below/h.txt'))).map((e) => e.name), ['p', 'q', 'r']);
    assert.deepEqual(await b.parents(keyOf('top.txt')), []);
  });

  it("stat reports a file's name, size, modified date and quoted etag", async ({ b }) => {
    const before = Date.now();
    await put(b, 'a.txt', 'hello');
    const e = await b.stat(keyOf('a.txt'));
    assert.ok(e);
    assert.equal(e.name, 'a.txt');
    assert.equal(e.isFile, true);
    assert.equal(e.size, 5);
    assert.ok(e.modified instanceof Date && Math.abs(e.modified.getTime() - before) < 60_000);
    assert.match(e.etag, /^"[^"]+"$/);
  });

  it('stat reports a folder as a folder', async ({ b }) => {
    await b.mkdir(keyOf('docs'), { parents: false, existOk: false });
    const e = await b.stat(keyOf('docs'));
    assert.equal(e?.isFile, false);
    assert.equal(e?.name, 'docs');
  });

  it('stat of a path below a file is undefined', async ({ b }) => {
    await put(b, 'f', 'x');
    assert.equal(await b.stat(keyOf('f/g')), undefined);
  });

  it('etag is stable while a file is unchanged and changes when it is replaced', async ({ b }) => {
    await put(b, 'a.txt', 'aaaa');
    const first = (await b.stat(keyOf('a.txt')))?.etag;
    assert.equal((await b.stat(keyOf('a.txt')))?.etag, first);
    await put(b, 'a.txt', 'bbbb', 'replace');
    assert.notEqual((await b.stat(keyOf('a.txt')))?.etag, first);
  });

  it('keys of two users never meet', async ({ b }) => {
    await b.mkdir(keyOf('', 'bob'), { parents: false, existOk: false });
    await put(b, 'x.txt', 'alice');
    assert.equal(await b.stat(keyOf('x.txt', 'bob')), undefined);
    await b.write(keyOf('x.txt', 'bob'), bodyOf('bob'), { ifExists: 'fail' });
    assert.equal(await text(b, 'x.txt'), 'alice');
  });

  // --- list ---
  it('list returns files and folders with their kinds and sizes', async ({ b }) => {
    await put(b, 'f.txt', '123');
    await b.mkdir(keyOf('sub'), { parents: false, existOk: false });
    const entries = (await listAll(b, keyOf(''))).sort((x, y) => (x.name < y.name ? -1 : 1));
    assert.deepEqual(entries.map((e) => [e.name, e.isFile]), [['f.txt', true], ['sub', false]]);
    assert.equal(entries[0]?.size, 3);
    assert.ok(entries.every((e) => e.modified instanceof Date && typeof e.size === 'number'));
  });

  it('list entries agree with stat', async ({ b }) => {
    await put(b, 'd/one.txt', '1');
    const [listed] = await listAll(b, keyOf('d'));
    assert.deepEqual(listed, await b.stat(keyOf('d/one.txt')));
  });

  it('list of an empty folder is empty', async ({ b }) => {
    await b.mkdir(keyOf('empty'), { parents: false, existOk: false });
    assert.deepEqual(await listAll(b, keyOf('empty')), []);
  });

  it('list of a missing folder is not_found', async ({ b }) => {
    await rejectsCode(listAll(b, keyOf('nope')), 'not_found');
  });

  it('list of a file is not_a_directory', async ({ b }) => {
    await put(b, 'f.txt', 'x');
    await rejectsCode(listAll(b, keyOf('f.txt')), 'not_a_directory');
  });

  // --- read ---
  it("read streams a file's whole contents with an entry matching them", async ({ b }) => {
    const data = Buffer.from('0123456789'.repeat(1000));
    await put(b, 'r.bin', data);
    const { stream, entry } = await b.read(keyOf('r.bin'));
    assert.equal(sha256(await readAll(stream)), sha256(data));
    assert.deepEqual(entry, await b.stat(keyOf('r.bin')));
  });

  it('read honours an inclusive byte range', async ({ b }) => {
    await put(b, 'r.txt', 'abcdefghij');
    assert.equal((await readAll((await b.read(keyOf('r.txt'), { start: 2, end: 4 })).stream)).toString(), 'cde');
    assert.equal((await readAll((await b.read(keyOf('r.txt'), { start: 9, end: 9 })).stream)).toString(), 'j');
    assert.equal((await b.read(keyOf('r.txt'), { start: 2, end: 4 })).entry.size, 10, 'the entry describes the whole file');
  });

  it('a range of up to WHOLE_READ_MAX bytes comes read whole too (the bytes its stream yields), a larger one only as a stream', async ({ b }) => {
    const data = randomBytes(WHOLE_READ_MAX * 3);
    await put(b, 'w.bin', data);
    const cases: [{ start: number; end: number } | undefined, boolean][] = [
      [undefined, false],
      [{ start: 0, end: WHOLE_READ_MAX - 1 }, true],
      [{ start: 10, end: 20 }, true],
      [{ start: 5, end: WHOLE_READ_MAX + 5 }, false],
    ];
    for (const [range, whole] of cases) {
      const want = range ? data.subarray(range.start, range.end + 1) : data;
      const opened = await b.read(keyOf('w.bin'), range);
      assert.equal(opened.bytes !== undefined, whole, JSON.stringify(range));
      if (opened.bytes) assert.ok(opened.bytes.equals(want), JSON.stringify(range));
      assert.ok((await readAll(opened.stream)).equals(want), JSON.stringify(range));
    }
  });

  it('read of an empty file yields no bytes', async ({ b }) => {
    await put(b, 'empty', '');
    const { stream, entry } = await b.read(keyOf('empty'));
    assert.equal((await readAll(stream)).length, 0);
    assert.equal(entry.size, 0);
  });

  it('read of a missing file is not_found', async ({ b }) => {
    await rejectsCode(b.read(keyOf('nope')), 'not_found');
  });

  it('read of a folder is is_a_directory', async ({ b }) => {
    await b.mkdir(keyOf('dir'), { parents: false, existOk: false });
    await rejectsCode(b.read(keyOf('dir')), 'is_a_directory');
    await rejectsCode(b.read(keyOf('')), 'is_a_directory');
  });

  it('a read opened before a replace yields the old bytes whole', async ({ b }) => {
    const oldData = Buffer.alloc(1 << 20, 'a');
    await put(b, 'race.bin', oldData);
    const opened = await b.read(keyOf('race.bin'));
    await put(b, 'race.bin', Buffer.alloc(3 << 19, 'b'), 'replace');
    const got = await readAll(opened.stream);
    assert.equal(opened.entry.size, oldData.length);
    assert.equal(sha256(got), sha256(oldData));
  });

  it('reads racing a replace return the old or the new bytes, whole', async ({ b }) => {
    const [oldData, newData] = [Buffer.alloc(1 << 20, 'o'), Buffer.alloc(1 << 19, 'n')];
    await put(b, 'race.bin', oldData);
    const writing = b.write(keyOf('race.bin'), slowBody(newData, 32), { ifExists: 'replace' });
    const reads = [];
    for (let i = 0; i < 12; i++) {
      reads.push(b.read(keyOf('race.bin')).then(async ({ stream, entry }) => ({ bytes: await readAll(stream), entry })));
      await new Promise((r) => setTimeout(r, 3));
    }
    await writing;
    for (const { bytes, entry } of await Promise.all(reads)) {
      assert.ok([sha256(oldData), sha256(newData)].includes(sha256(bytes)), 'a read must yield one version whole');
      assert.equal(entry.size, bytes.length);
    }
  });

}
