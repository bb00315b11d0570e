import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { collisionName } from '../domain/names.js';
import { parseDecodedStoragePath, type StorageKey } from '../domain/storage-path.js';
import { isStorageError, type StorageBackend, type StorageErrorCode } from './backend.js';

/** What a backend's test file hands the suite for each test. */
export type BackendUnderTest = {
  readonly backend: StorageBackend;
  cleanup(): Promise<void>;
  /** Names left in the staging area, for backends that have one; lets the suite prove aborts leave nothing. */
  staging?(): Promise<string[]>;
};

/** A key from a plain path below the user (`a/b.txt`, `` for the root); only the parser makes keys. */
export const keyOf = (path: string, user = 'alice'): StorageKey => parseDecodedStoragePath(`${user}/${path}`).key;

export const bodyOf = (data: string | Buffer): Readable => Readable.from([Buffer.from(data)]);

/** A body that yields `chunks` pieces, one per macrotask, so concurrent writers really interleave. */
export function slowBody(data: Buffer, chunks = 16): Readable {
  const size = Math.ceil(data.length / chunks);
  return Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += size) {
        await new Promise((r) => setTimeout(r, 1));
        yield data.subarray(i, i + size);
      }
    })(),
  );
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.from(c as Buffer));
  return Buffer.concat(parts);
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export async function rejectsCode(p: Promise<unknown>, code: StorageErrorCode): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isStorageError(e), `expected StorageError "${code}", got ${String(e)}`);
    assert.equal(e.code, code);
    return true;
  });
}

/**
 * The storage backend conformance suite: every StorageBackend (local disk
 * now, S3 later) runs exactly these tests. Each test gets a fresh backend,
 * initialised, with the root of user `alice` created (unless it says not to).
 */
export function runBackendConformance(name: string, makeBackend: () => Promise<BackendUnderTest>): void {
  type Ctx = BackendUnderTest & { b: StorageBackend };
  const it = (title: string, fn: (c: Ctx) => Promise<void>, opts: { root?: boolean } = {}) =>
    test(`${name}: ${title}`, async () => {
      const h = await makeBackend();
      try {
        await h.backend.init();
        if (opts.root !== false) await h.backend.mkdir(keyOf(''), { parents: true, existOk: true });
        await fn({ ...h, b: h.backend });
      } finally {
        await h.backend.close();
        await h.cleanup();
      }
    });
  const put = (b: StorageBackend, path: string, data: string | Buffer, ifExists: 'fail' | 'replace' | 'rename' = 'fail') =>
    b.write(keyOf(path), bodyOf(data), { ifExists });
  const text = async (b: StorageBackend, path: string) => (await readAll((await b.read(keyOf(path))).stream)).toString();
  const names = async (b: StorageBackend, path: string) => (await b.list(keyOf(path))).map((e) => e.name).sort();
  const stagingIsEmpty = async (c: Ctx) => {
    if (c.staging) assert.deepEqual(await c.staging(), [], 'staging area must be empty');
  };

  // --- capabilities, roots, stat ---
  it('declares its capabilities as booleans', async ({ b }) => {
    for (const v of Object.values(b.capabilities)) assert.equal(typeof v, 'boolean');
  });

  it('stat of a user root that was never created is undefined', async ({ b }) => {
    assert.equal(await b.stat(keyOf('')), undefined);
    await rejectsCode(b.list(keyOf('')), 'not_found');
  }, { root: false });

  it('mkdir of a user root makes an empty folder', async ({ b }) => {
    assert.equal((await b.stat(keyOf('', 'bob')))?.isFile, undefined);
    await b.mkdir(keyOf('', 'bob'), { parents: true, existOk: false });
    assert.equal((await b.stat(keyOf('', 'bob')))?.isFile, false);
    assert.deepEqual(await b.list(keyOf('', 'bob')), []);
  });

  it('stat returns undefined for a missing key', async ({ b }) => {
    assert.equal(await b.stat(keyOf('nope.txt')), undefined);
    assert.equal(await b.stat(keyOf('no/such/folder')), undefined);
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
    const entries = (await b.list(keyOf(''))).sort((x, y) => (x.name < y.name ? -1 : 1));
    assert.deepEqual(entries.map((e) => [e.name, e.isFile]), [['f.txt', true], ['sub', false]]);
    assert.equal(entries[0]?.size, 3);
    assert.ok(entries.every((e) => e.modified instanceof Date && typeof e.size === 'number'));
  });

  it('list entries agree with stat', async ({ b }) => {
    await put(b, 'd/one.txt', '1');
    const [listed] = await b.list(keyOf('d'));
    assert.deepEqual(listed, await b.stat(keyOf('d/one.txt')));
  });

  it('list of an empty folder is empty', async ({ b }) => {
    await b.mkdir(keyOf('empty'), { parents: false, existOk: false });
    assert.deepEqual(await b.list(keyOf('empty')), []);
  });

  it('list of a missing folder is not_found', async ({ b }) => {
    await rejectsCode(b.list(keyOf('nope')), 'not_found');
  });

  it('list of a file is not_a_directory', async ({ b }) => {
    await put(b, 'f.txt', 'x');
    await rejectsCode(b.list(keyOf('f.txt')), 'not_a_directory');
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

  // --- write ---
  it('write creates a file and returns its entry', async ({ b }) => {
    const entry = await put(b, 'new.txt', 'content');
    assert.equal(entry.name, 'new.txt');
    assert.equal(entry.isFile, true);
    assert.equal(entry.size, 7);
    assert.equal(entry.etag, (await b.stat(keyOf('new.txt')))?.etag);
    assert.equal(await text(b, 'new.txt'), 'content');
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

  // --- mkdir ---
  it('mkdir creates a folder', async ({ b }) => {
    await b.mkdir(keyOf('new'), { parents: false, existOk: false });
    assert.equal((await b.stat(keyOf('new')))?.isFile, false);
  });

  it('mkdir without parents under a missing folder is not_found', async ({ b }) => {
    await rejectsCode(b.mkdir(keyOf('no/such'), { parents: false, existOk: false }), 'not_found');
  });

  it('mkdir with parents creates every missing parent', async ({ b }) => {
    await b.mkdir(keyOf('p/q/r'), { parents: true, existOk: false });
    assert.deepEqual(await names(b, 'p/q'), ['r']);
  });

  it('mkdir of an existing folder is already_exists unless existOk', async ({ b }) => {
    await b.mkdir(keyOf('d'), { parents: false, existOk: false });
    await rejectsCode(b.mkdir(keyOf('d'), { parents: false, existOk: false }), 'already_exists');
    await b.mkdir(keyOf('d'), { parents: false, existOk: true });
    await b.mkdir(keyOf(''), { parents: false, existOk: true });
  });

  it('mkdir where a file is is already_exists, even with existOk', async ({ b }) => {
    await put(b, 'f', 'x');
    await rejectsCode(b.mkdir(keyOf('f'), { parents: true, existOk: true }), 'already_exists');
  });

  it('mkdir below a file is not_a_directory', async ({ b }) => {
    await put(b, 'f', 'x');
    await rejectsCode(b.mkdir(keyOf('f/sub'), { parents: true, existOk: true }), 'not_a_directory');
  });

  // --- delete ---
  it('delete removes a file', async ({ b }) => {
    await put(b, 'gone.txt', 'x');
    await b.delete(keyOf('gone.txt'), { recursive: false });
    assert.equal(await b.stat(keyOf('gone.txt')), undefined);
  });

  it('delete removes a folder with everything in it when recursive', async (c) => {
    await put(c.b, 'tree/a/b/c.txt', 'x');
    await put(c.b, 'tree/d.txt', 'y');
    await c.b.delete(keyOf('tree'), { recursive: true });
    assert.equal(await c.b.stat(keyOf('tree')), undefined);
    assert.deepEqual(await names(c.b, ''), []);
    await stagingIsEmpty(c);
  });

  it('delete without recursive removes an empty folder but refuses a full one', async ({ b }) => {
    await b.mkdir(keyOf('empty'), { parents: false, existOk: false });
    await b.delete(keyOf('empty'), { recursive: false });
    assert.equal(await b.stat(keyOf('empty')), undefined);
    await put(b, 'full/x.txt', 'x');
    await assert.rejects(b.delete(keyOf('full'), { recursive: false }), (e: unknown) => isStorageError(e));
    assert.equal(await text(b, 'full/x.txt'), 'x');
  });

  it('delete of a missing key is not_found', async ({ b }) => {
    await rejectsCode(b.delete(keyOf('nope'), { recursive: true }), 'not_found');
    await rejectsCode(b.delete(keyOf('no/such/thing'), { recursive: true }), 'not_found');
  });

  it("delete of a user root removes that user's files only", async ({ b }) => {
    await b.mkdir(keyOf('', 'bob'), { parents: false, existOk: false });
    await put(b, 'a/x.txt', 'x');
    await b.write(keyOf('y.txt', 'bob'), bodyOf('y'), { ifExists: 'fail' });
    await b.delete(keyOf(''), { recursive: true });
    assert.equal(await b.stat(keyOf('')), undefined);
    assert.equal((await b.stat(keyOf('y.txt', 'bob')))?.size, 1);
  });

  // --- move ---
  it('move renames a file', async ({ b }) => {
    await put(b, 'a.txt', 'A');
    await b.move(keyOf('a.txt'), keyOf('b.txt'), { overwrite: false });
    assert.equal(await b.stat(keyOf('a.txt')), undefined);
    assert.equal(await text(b, 'b.txt'), 'A');
  });

  it('move renames a folder with its contents', async ({ b }) => {
    await put(b, 'old/sub/f.txt', 'F');
    await b.move(keyOf('old'), keyOf('new'), { overwrite: false });
    assert.equal(await b.stat(keyOf('old')), undefined);
    assert.equal(await text(b, 'new/sub/f.txt'), 'F');
  });

  it("move creates the destination's parents", async ({ b }) => {
    await put(b, 'f.txt', 'F');
    await b.move(keyOf('f.txt'), keyOf('x/y/z.txt'), { overwrite: false });
    assert.equal(await text(b, 'x/y/z.txt'), 'F');
  });

  it('move onto a taken file or folder without overwrite is already_exists and changes nothing', async ({ b }) => {
    await put(b, 'src.txt', 'S');
    await put(b, 'dst.txt', 'D');
    await put(b, 'dir/in.txt', 'I');
    await rejectsCode(b.move(keyOf('src.txt'), keyOf('dst.txt'), { overwrite: false }), 'already_exists');
    await rejectsCode(b.move(keyOf('src.txt'), keyOf('dir'), { overwrite: false }), 'already_exists');
    await rejectsCode(b.move(keyOf('dir'), keyOf('dst.txt'), { overwrite: false }), 'already_exists');
    assert.deepEqual([await text(b, 'src.txt'), await text(b, 'dst.txt'), await text(b, 'dir/in.txt')], ['S', 'D', 'I']);
  });

  it('move with overwrite replaces a file', async ({ b }) => {
    await put(b, 'src.txt', 'S');
    await put(b, 'dst.txt', 'D');
    await b.move(keyOf('src.txt'), keyOf('dst.txt'), { overwrite: true });
    assert.equal(await text(b, 'dst.txt'), 'S');
    assert.deepEqual(await names(b, ''), ['dst.txt']);
  });

  it('move with overwrite replaces a folder and everything in it', async (c) => {
    await put(c.b, 'src/new.txt', 'N');
    await put(c.b, 'dst/old/old.txt', 'O');
    await c.b.move(keyOf('src'), keyOf('dst'), { overwrite: true });
    assert.deepEqual(await names(c.b, 'dst'), ['new.txt']);
    assert.deepEqual(await names(c.b, ''), ['dst']);
    await stagingIsEmpty(c);
  });

  it('move with overwrite replaces a folder by a file and a file by a folder', async (c) => {
    await put(c.b, 'file.txt', 'F');
    await put(c.b, 'folder/x.txt', 'X');
    await c.b.move(keyOf('file.txt'), keyOf('folder'), { overwrite: true });
    assert.equal(await text(c.b, 'folder'), 'F');
    await put(c.b, 'tree/y.txt', 'Y');
    await c.b.move(keyOf('tree'), keyOf('folder'), { overwrite: true });
    assert.equal(await text(c.b, 'folder/y.txt'), 'Y');
    await stagingIsEmpty(c);
  });

  it('move of a folder into itself or below it is into_itself', async ({ b }) => {
    await put(b, 'a/b/f.txt', 'x');
    await rejectsCode(b.move(keyOf('a'), keyOf('a'), { overwrite: false }), 'into_itself');
    await rejectsCode(b.move(keyOf('a'), keyOf('a/b/c'), { overwrite: true }), 'into_itself');
    assert.equal(await text(b, 'a/b/f.txt'), 'x');
  });

  it('move of a missing source is not_found', async ({ b }) => {
    await rejectsCode(b.move(keyOf('nope'), keyOf('x'), { overwrite: true }), 'not_found');
  });

  it('move to a path below a file is not_a_directory', async ({ b }) => {
    await put(b, 'src.txt', 'S');
    await put(b, 'file', 'F');
    await rejectsCode(b.move(keyOf('src.txt'), keyOf('file/x.txt'), { overwrite: true }), 'not_a_directory');
    assert.equal(await text(b, 'src.txt'), 'S');
  });

  it('two concurrent moves to one free name: one wins, the other is already_exists', async ({ b }) => {
    await put(b, 'one.txt', '1');
    await put(b, 'two.txt', '2');
    const results = await Promise.allSettled([
      b.move(keyOf('one.txt'), keyOf('target.txt'), { overwrite: false }),
      b.move(keyOf('two.txt'), keyOf('target.txt'), { overwrite: false }),
    ]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const failed = results.find((r) => r.status === 'rejected');
    assert.ok(failed && isStorageError(failed.reason, 'already_exists'));
    assert.equal((await names(b, '')).length, 2, 'no file is lost');
  });

  it('close resolves', async ({ b }) => {
    await b.close();
  });
}
