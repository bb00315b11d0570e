import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { newBucket, s3Client, s3Service, skipReason } from '../../../test/helpers/services.js';
import { CHUNK_SIZE, HEADER_SIZE, STORED_CHUNK, headerVersion, newMasterKeyText, parseMasterKey, storedSize, type MasterKey } from '../../lib/encryption/format.js';
import { encrypt } from '../../lib/encryption/stream.js';
import { Readable } from 'node:stream';
import { openSqliteStore } from '../../store/sqlite.js';
import { listAll, type StorageBackend } from '../backend.js';
import { bodyOf, keyOf, leasingIn, readAll, rejectsCode } from '../conformance/index.test-suite.js';
import { createLocalBackend } from '../local/local-backend.js';
import { createS3Backend } from '../s3/s3-backend.js';
import { encryptedBackend } from './encrypted-backend.js';
import { migrateTrash } from './migrate.js';

/** What each storage under test gives: the backend below, and raw access to what it stores. */
type Raw = { readonly inner: StorageBackend; get(path: string): Promise<Buffer>; put(path: string, bytes: Buffer): Promise<void>; all(): Promise<Buffer[]>; cleanup(): Promise<void> };

const closers: (() => Promise<void>)[] = [];
after(() => Promise.all(closers.map((c) => c())));

async function localRaw(): Promise<Raw> {
  const base = await mkdtemp(join(tmpdir(), 'fc-enc-'));
  const storageDir = join(base, 'storage');
  const leasing = await leasingIn(base);
  closers.push(() => leasing.close());
  const inner = createLocalBackend({ storageDir, tmpDir: join(base, 'tmp'), trashDir: join(base, 'trash'), versionsDir: join(base, 'versions') }, leasing);
  return {
    inner,
    get: (path) => readFile(join(storageDir, path)),
    put: (path, bytes) => writeFile(join(storageDir, path), bytes),
    async all() {
      const names = await readdir(base, { recursive: true, withFileTypes: true });
      return Promise.all(names.filter((n) => n.isFile() && !n.name.endsWith('.db') && !n.name.includes('.db-')).map((n) => readFile(join(n.parentPath, n.name))));
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

let bucket: string | undefined;
async function s3Raw(): Promise<Raw> {
  const s = s3Service();
  if (!s) throw new Error('unreachable: guarded by skip');
  bucket ??= await newBucket('fc-enc');
  const Bucket = bucket;
  const dir = await mkdtemp(join(tmpdir(), 'fc-enc-s3-'));
  const store = await openSqliteStore(join(dir, 'meta.db'));
  const prefix = `${randomUUID()}/`;
  const inner = createS3Backend({ bucket: Bucket, prefix, endpoint: s.endpoint, region: s.region, pathStyle: true }, { leases: store.leases, journal: store.journal }, store.search, { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } });
  const get = async (Key: string) => Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket, Key }))).Body!.transformToByteArray());
  return {
    inner,
    get: (path) => get(prefix + path),
    put: async (path, bytes) => void (await s3Client().send(new PutObjectCommand({ Bucket, Key: prefix + path, Body: bytes }))),
    async all() {
      const r = await s3Client().send(new ListObjectsV2Command({ Bucket, Prefix: prefix }));
      return Promise.all((r.Contents ?? []).map((o) => get(o.Key!)));
    },
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const master = parseMasterKey(newMasterKeyText());
const s3Skip = skipReason('S3');
const storages: [string, () => Promise<Raw>, string | undefined][] = [
  ['local', localRaw, undefined],
  ['s3', s3Raw, s3Skip],
];

type Under = Raw & { backend: StorageBackend; bad: string[] };
function it(title: string, fn: (u: Under) => Promise<void>, keys: (m: MasterKey) => { current: MasterKey; all: MasterKey[] } = (m) => ({ current: m, all: [m] })): void {
  for (const [name, make, skip] of storages)
    test(`${name}: ${title}`, { skip }, async () => {
      const raw = await make();
      const bad: string[] = [];
      const backend = encryptedBackend(raw.inner, { ...keys(master), onBadFile: (label) => bad.push(label) });
      try {
        await backend.init();
        await backend.mkdir(keyOf(''), { parents: true, existOk: true });
        await fn({ ...raw, backend, bad });
      } finally {
        await backend.close();
        await raw.cleanup();
      }
    });
}

const MARK = Buffer.from('PLAINTEXT-MARKER-7f3a');
/** Bytes with the marker in every chunk, so any plaintext chunk in storage would show. */
const marked = (n: number): Buffer => {
  const b = randomBytes(n);
  for (let at = 0; at + MARK.length <= n; at += 4096) MARK.copy(b, at);
  return b;
};
const read = async (b: StorageBackend, path: string, range?: { start: number; end: number }) => {
  const o = await b.read(keyOf(path), range);
  return { entry: o.entry, bytes: o.bytes ?? (await readAll(o.stream)) };
};

it('files written through it are stored encrypted and read back whole, at their plaintext size', async ({ backend, all }) => {
  const sizes = [0, 1, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 1, 3 * CHUNK_SIZE + 100];
  for (const n of sizes) {
    const data = marked(n);
    const written = await backend.write(keyOf(`f${n}`), bodyOf(data), { ifExists: 'fail', maxBytes: n });
    assert.equal(written.size, n);
    assert.equal((await backend.stat(keyOf(`f${n}`)))?.size, n);
    const got = await read(backend, `f${n}`);
    assert.equal(got.entry.size, n);
    assert.deepEqual(got.bytes, data, `size ${n}`);
  }
  const staged = await backend.stage(keyOf('staged'), bodyOf(marked(1000)), { ifExists: 'fail' });
  assert.equal(staged.size, 1000);
  assert.equal((await staged.commit()).size, 1000);
  for (const stored of await all()) assert.ok(!stored.includes(MARK), 'no plaintext marker in storage');
  const listed = new Map((await listAll(backend, keyOf(''))).map((e) => [e.name, e.size]));
  for (const n of sizes) assert.equal(listed.get(`f${n}`), n);
  const walked = [];
  for await (const w of backend.walk(keyOf(''))) if (w.entry.isFile) walked.push(w.entry.size);
  assert.deepEqual(walked.sort((a, b) => a - b), [...sizes, 1000].sort((a, b) => a - b));
});

it('a body over maxBytes is too_large, counted in plaintext bytes', async ({ backend }) => {
  await rejectsCode(backend.write(keyOf('big'), bodyOf(randomBytes(CHUNK_SIZE + 1)), { ifExists: 'fail', maxBytes: CHUNK_SIZE }), 'too_large');
  assert.equal((await backend.write(keyOf('fits'), bodyOf(randomBytes(CHUNK_SIZE)), { ifExists: 'fail', maxBytes: CHUNK_SIZE })).size, CHUNK_SIZE);
});

it('ranges (first, middle, suffix, across a chunk edge) give exactly those bytes', async ({ backend }) => {
  const data = marked(3 * CHUNK_SIZE + 100);
  await backend.write(keyOf('r'), bodyOf(data), { ifExists: 'fail' });
  const n = data.length;
  const cases: [number, number][] = [
    [0, 0],
    [0, 1023],
    [CHUNK_SIZE - 5, CHUNK_SIZE + 5],
    [CHUNK_SIZE + 10, 3 * CHUNK_SIZE + 10],
    [n - 500, n - 1],
    [n - 1, n - 1],
    [0, n - 1],
  ];
  for (const [start, end] of cases) {
    const got = await read(backend, 'r', { start, end });
    assert.equal(got.entry.size, n);
    assert.deepEqual(got.bytes, data.subarray(start, end + 1), `${start}-${end}`);
  }
});

it('a file read before: a range is one storage read of its chunks (a small one across a chunk edge: one of each, both whole) and a stat reads no header; once replaced, its new bytes', async ({ inner }) => {
  const calls: string[] = [];
  const counted: StorageBackend = {
    ...inner,
    read: (key, range) => (calls.push(range ? `read ${range.start}-${range.end}` : 'read'), inner.read(key, range)),
    stat: (key) => (calls.push('stat'), inner.stat(key)),
  };
  const backend = encryptedBackend(counted, { current: master, all: [master], onBadFile: () => undefined });
  const data = marked(3 * CHUNK_SIZE + 100);
  const n = data.length;
  await backend.write(keyOf('c'), bodyOf(data), { ifExists: 'fail' });
  assert.deepEqual((await read(backend, 'c', { start: 10, end: 20 })).bytes, data.subarray(10, 21));
  const at = (i: number) => HEADER_SIZE + i * STORED_CHUNK;
  const last = storedSize(n) - 1;
  const cases: [number, number, string[]][] = [
    [CHUNK_SIZE - 5, CHUNK_SIZE + 5, [`read ${at(0)}-${at(1) - 1}`, `read ${at(1)}-${at(2) - 1}`]],
    [2 * CHUNK_SIZE + 1, 5 * CHUNK_SIZE, [`read ${at(2)}-${last}`]],
    [2 * CHUNK_SIZE + 1, 3 * CHUNK_SIZE + 9, [`read ${at(2)}-${at(3) - 1}`, `read ${at(3)}-${last}`]],
    [n - 1, n - 1, [`read ${at(3)}-${last}`]],
  ];
  for (const [start, end, want] of cases) {
    calls.length = 0;
    const got = await read(backend, 'c', { start, end });
    assert.equal(got.entry.size, n);
    assert.deepEqual(got.bytes, data.subarray(start, end + 1), `${start}-${end}`);
    assert.deepEqual(calls, want, `${start}-${end}: the chunks' storage reads alone`);
  }
  calls.length = 0;
  assert.equal((await backend.stat(keyOf('c')))?.size, n);
  assert.deepEqual(calls, ['stat'], 'a stat of a file read before reads no header');
  assert.equal((await read(backend, 'c', { start: n + 10, end: n + 20 })).bytes.length, 0, 'a range past the end is empty');

  // Replaced through the layer (a new data key), then below it by a plain file: each read gives the new bytes.
  const next = marked(2 * CHUNK_SIZE + 7);
  await backend.write(keyOf('c'), bodyOf(next), { ifExists: 'replace' });
  assert.equal((await backend.stat(keyOf('c')))?.size, next.length);
  assert.deepEqual((await read(backend, 'c', { start: CHUNK_SIZE - 5, end: CHUNK_SIZE + 5 })).bytes, next.subarray(CHUNK_SIZE - 5, CHUNK_SIZE + 6));
  const plain = marked(storedSize(CHUNK_SIZE));
  await inner.write(keyOf('c'), bodyOf(plain), { ifExists: 'replace' });
  assert.equal((await backend.stat(keyOf('c')))?.size, plain.length, 'a plain file at an encrypted size is told apart by its header');
  assert.deepEqual((await read(backend, 'c', { start: 100, end: 200 })).bytes, plain.subarray(100, 201));
});

it('a small range inside a chunk is read whole from storage, as a plain file’s is: its stored chunk as bytes, no stream', async ({ inner }) => {
  const answers: string[] = [];
  const counted: StorageBackend = {
    ...inner,
    read: async (key, range) => {
      const opened = await inner.read(key, range);
      answers.push(`${range ? `${range.start}-${range.end}` : 'whole'} ${opened.bytes ? 'bytes' : 'stream'}`);
      return opened;
    },
  };
  const backend = encryptedBackend(counted, { current: master, all: [master], onBadFile: () => undefined });
  const data = marked(3 * CHUNK_SIZE + 100);
  await backend.write(keyOf('s'), bodyOf(data), { ifExists: 'fail' });
  const at = (i: number) => HEADER_SIZE + i * STORED_CHUNK;
  // First read: stat, header, then the chunk; then the key is known and a range is its chunk alone.
  for (const [start, end] of [[10, 4105], [CHUNK_SIZE + 7, CHUNK_SIZE + 4102], [2 * CHUNK_SIZE, 3 * CHUNK_SIZE - 1]] as const) {
    answers.length = 0;
    const got = await backend.read(keyOf('s'), { start, end });
    assert.ok(got.bytes, `${start}-${end}: answered as bytes`);
    assert.deepEqual(got.bytes, data.subarray(start, end + 1));
    const chunk = Math.floor(start / CHUNK_SIZE);
    assert.equal(answers.at(-1), `${at(chunk)}-${at(chunk + 1) - 1} bytes`, `${start}-${end}: its stored chunk read whole`);
  }
});

it('plain files written before the key stay readable, at their own size', async ({ backend, inner }) => {
  const data = marked(2 * CHUNK_SIZE + 500);
  await inner.write(keyOf('old'), bodyOf(data), { ifExists: 'fail' });
  await inner.write(keyOf('tiny'), bodyOf('hi'), { ifExists: 'fail' });
  assert.equal((await backend.stat(keyOf('old')))?.size, data.length);
  assert.deepEqual((await read(backend, 'old')).bytes, data);
  assert.deepEqual((await read(backend, 'old', { start: CHUNK_SIZE - 3, end: CHUNK_SIZE + 3 })).bytes, data.subarray(CHUNK_SIZE - 3, CHUNK_SIZE + 4));
  assert.deepEqual((await read(backend, 'tiny')).bytes, Buffer.from('hi'));
  const listed = new Map((await listAll(backend, keyOf(''))).map((e) => [e.name, e.size]));
  assert.deepEqual([listed.get('old'), listed.get('tiny')], [data.length, 2]);
});

it('files of format version 1 (written before version 2) stay readable: whole, ranges before and after the key is known, stat, listing, redate', async ({ backend, inner, get }) => {
  const data = marked(3 * CHUNK_SIZE + 100);
  await inner.write(keyOf('old1'), Readable.from(encrypt(master, Readable.from([data]), 1)), { ifExists: 'fail' });
  const stored = await get('alice/old1');
  assert.equal(headerVersion(stored), 1);
  assert.equal(stored.length, storedSize(data.length, 1));
  assert.equal((await backend.stat(keyOf('old1')))?.size, data.length);
  const n = data.length;
  // The first range reads the header; the same ones again go by the key kept for the file.
  for (let round = 0; round < 2; round++)
    for (const [start, end] of [
      [CHUNK_SIZE - 5, CHUNK_SIZE + 5],
      [2 * CHUNK_SIZE + 1, n - 1],
      [0, 0],
    ] as const)
      assert.deepEqual((await read(backend, 'old1', { start, end })).bytes, data.subarray(start, end + 1), `round ${round}: ${start}-${end}`);
  assert.equal((await backend.stat(keyOf('old1')))?.size, n, 'the stat of a file whose key is kept');
  assert.deepEqual((await read(backend, 'old1')).bytes, data);
  assert.equal(new Map((await listAll(backend, keyOf(''))).map((e) => [e.name, e.size])).get('old1'), n);
  assert.equal((await backend.redate(keyOf('old1'), new Date('2020-01-02T03:04:05Z'))).size, n);
  // New files are version 2.
  await backend.write(keyOf('new2'), bodyOf(data), { ifExists: 'fail' });
  assert.equal(headerVersion(await get('alice/new2')), 2);
});

it('an altered stored file is never served: the read fails and names the file', async ({ backend, get, put, bad }) => {
  const data = marked(3 * CHUNK_SIZE + 100);
  const other = marked(3 * CHUNK_SIZE + 100);
  await backend.write(keyOf('t'), bodyOf(data), { ifExists: 'fail' });
  await backend.write(keyOf('o'), bodyOf(other), { ifExists: 'fail' });
  const stored = await get('alice/t');
  const otherStored = await get('alice/o');
  const chunk = (s: Buffer, i: number) => s.subarray(HEADER_SIZE + i * STORED_CHUNK, HEADER_SIZE + (i + 1) * STORED_CHUNK);
  const flipped = Buffer.from(stored);
  flipped[HEADER_SIZE + STORED_CHUNK + 7]! ^= 0x20;
  const cases: [string, Buffer][] = [
    ['a flipped byte', flipped],
    ['cut at a chunk edge', stored.subarray(0, HEADER_SIZE + 2 * STORED_CHUNK)],
    ['two chunks swapped', Buffer.concat([stored.subarray(0, HEADER_SIZE), chunk(stored, 1), chunk(stored, 0), stored.subarray(HEADER_SIZE + 2 * STORED_CHUNK)])],
    ['a chunk from another file', Buffer.concat([stored.subarray(0, HEADER_SIZE + STORED_CHUNK), chunk(otherStored, 1), stored.subarray(HEADER_SIZE + 2 * STORED_CHUNK)])],
  ];
  for (const [what, bytes] of cases) {
    await put('alice/t', bytes);
    bad.length = 0;
    // A whole read fails while streaming at the bad chunk, before any of its bytes are given out.
    await assert.rejects(async () => {
      const o = await backend.read(keyOf('t'));
      return o.bytes ?? readAll(o.stream);
    }, `${what}: a whole read fails`);
    // The range over chunk 1 fails before anything is sent.
    await rejectsCode(backend.read(keyOf('t'), { start: CHUNK_SIZE, end: CHUNK_SIZE + 100 }), 'failed');
    assert.deepEqual([...new Set(bad)], ['alice/t'], `${what}: the log names the file`);
  }
  await put('alice/t', stored);
  assert.deepEqual((await read(backend, 't')).bytes, data, 'the untouched file reads again');
});

it('a small file read before (its plaintext kept, plain-memo.ts) is still never served altered', async ({ backend, get, put, bad }) => {
  const data = marked(4096);
  await backend.write(keyOf('s'), bodyOf(data), { ifExists: 'fail' });
  await backend.write(keyOf('s2'), bodyOf(marked(4096)), { ifExists: 'fail' });
  const stored = await get('alice/s');
  const other = await get('alice/s2');
  assert.deepEqual((await read(backend, 's')).bytes, data, 'the first read');
  assert.deepEqual((await read(backend, 's')).bytes, data, 'read again');
  const flippedAt = (at: number) => {
    const b = Buffer.from(stored);
    b[at]! ^= 0x01;
    return b;
  };
  const cases: [string, Buffer][] = [
    ['a flipped byte of the text', flippedAt(HEADER_SIZE + 2000)],
    ['a flipped byte of the tag', flippedAt(stored.length - 1)],
    ['a flipped byte of the wrapped key', flippedAt(HEADER_SIZE - 20)],
    ['another file’s header', Buffer.concat([other.subarray(0, HEADER_SIZE), stored.subarray(HEADER_SIZE)])],
    ['another file’s chunk', Buffer.concat([stored.subarray(0, HEADER_SIZE), other.subarray(HEADER_SIZE)])],
  ];
  for (const [what, bytes] of cases) {
    await put('alice/s', bytes);
    bad.length = 0;
    await assert.rejects(async () => {
      const o = await backend.read(keyOf('s'));
      return o.bytes ?? readAll(o.stream);
    }, `${what}: the read fails`);
    assert.deepEqual(bad, ['alice/s'], `${what}: the log names the file`);
  }
  await put('alice/s', stored);
  assert.deepEqual((await read(backend, 's')).bytes, data, 'the untouched bytes read again');
  const next = marked(4096);
  await backend.write(keyOf('s'), bodyOf(next), { ifExists: 'replace' });
  assert.deepEqual((await read(backend, 's')).bytes, next, 'a new version reads as itself');
});

it('a file under another key is refused; a key ring with the old key reads it', async ({ backend, inner }) => {
  const data = marked(1000);
  await backend.write(keyOf('k'), bodyOf(data), { ifExists: 'fail' });
  const fresh = parseMasterKey(newMasterKeyText());
  const bad: string[] = [];
  const other = encryptedBackend(inner, { current: fresh, all: [fresh], onBadFile: (l) => bad.push(l) });
  await rejectsCode(other.read(keyOf('k')), 'failed');
  assert.deepEqual(bad, ['alice/k']);
  const ring = encryptedBackend(inner, { current: fresh, all: [fresh, master], onBadFile: (l) => bad.push(l) });
  assert.deepEqual((await ring.read(keyOf('k'))).bytes, data);
});

it('a trash item’s files are listed, read and rewritten in place: migrate encrypts a trashed folder, which restores whole; a path out of the item is refused', async ({ backend, inner }) => {
  const files: Record<string, Buffer> = { 'd/a.txt': marked(1000), 'd/sub/b.txt': marked(CHUNK_SIZE + 3) };
  await inner.mkdir(keyOf('d/sub'), { parents: true, existOk: false });
  for (const [path, data] of Object.entries(files)) await inner.write(keyOf(path), bodyOf(data), { ifExists: 'fail' });
  await inner.trash.put(keyOf('d'), 't1');
  const listed: string[] = [];
  for await (const p of inner.trash.files('alice', 't1')) listed.push(p);
  assert.deepEqual(listed.sort(), ['d/a.txt', 'd/sub/b.txt']);
  const held: string[] = [];
  const c = await migrateTrash(inner, backend, [{ owner: 'alice', id: 't1' }], async (id) => (held.push(id), { release: async () => undefined }));
  assert.deepEqual(c, { encrypted: 2, already: 0, changed: 0 });
  assert.deepEqual(held, ['t1'], 'the item is held while its files are rewritten');
  for (const [path, data] of Object.entries(files)) {
    const raw = await readAll((await inner.trash.readFile('alice', 't1', path)).stream);
    assert.equal(headerVersion(raw), 2, `${path} is stored encrypted in the trash`);
    const plain = await backend.trash.readFile('alice', 't1', path);
    assert.deepEqual(plain.bytes ?? (await readAll(plain.stream)), data, `${path} reads back through the layer`);
  }
  assert.deepEqual(await migrateTrash(inner, backend, [{ owner: 'alice', id: 't1' }], async () => ({ release: async () => undefined })), { encrypted: 0, already: 2, changed: 0 });
  for (const bad of ['../x', 'd/../../x', '', 'd//a.txt']) await rejectsCode(inner.trash.rewriteFile('alice', 't1', bad, bodyOf('x')), 'invalid_path');
  await rejectsCode(inner.trash.rewriteFile('alice', 't1', 'd/none.txt', bodyOf('x')), 'not_found');
  await backend.trash.restore('alice', 't1', keyOf('back'));
  for (const [path, data] of Object.entries(files)) assert.deepEqual((await read(backend, path.replace(/^d/, 'back'))).bytes, data, `${path} restored`);
});

it('versions kept of an encrypted file read back as plaintext, whole and in ranges', async ({ backend }) => {
  const data = marked(CHUNK_SIZE + 300);
  await backend.write(keyOf('v'), bodyOf(data), { ifExists: 'fail' });
  assert.equal(await backend.versions.keep(keyOf('v'), 'v1'), storedSize(data.length));
  const whole = await backend.versions.read('alice', 'v1', 'v');
  assert.deepEqual(whole.bytes ?? (await readAll(whole.stream)), data);
  const part = await backend.versions.read('alice', 'v1', 'v', { start: CHUNK_SIZE - 1, end: CHUNK_SIZE });
  assert.deepEqual(part.bytes ?? (await readAll(part.stream)), data.subarray(CHUNK_SIZE - 1, CHUNK_SIZE + 1));
});
