import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, test } from 'node:test';
import type { StorageBackend } from './backend.js';
import { bodyOf, keyOf, leasingIn, readAll, runBackendConformance, sha256 } from './conformance/index.test-suite.js';
import type { StorageEvent } from './events.js';
import { withHashes } from './hashing.js';
import { createLocalBackend } from './local/local-backend.js';

const leasings: { close(): Promise<void> }[] = [];
after(() => Promise.all(leasings.map((l) => l.close())));

/** A local backend under the hashing layer, with a count of the reads that reach the backend below. */
async function fresh() {
  const base = await mkdtemp(join(tmpdir(), 'fc-hashing-'));
  const storageDir = join(base, 'storage');
  const tmpDir = join(base, 'tmp');
  const leasing = await leasingIn(base);
  leasings.push(leasing);
  const inner = createLocalBackend({ storageDir, tmpDir }, leasing);
  const reads = { n: 0 };
  const counted: StorageBackend = Object.create(inner) as StorageBackend;
  Object.defineProperty(counted, 'read', { value: (...args: Parameters<StorageBackend['read']>) => (reads.n++, inner.read(...args)) });
  const backend = withHashes(counted);
  const events: StorageEvent[] = [];
  backend.events.subscribe((e) => void events.push(e));
  return { base, tmpDir, storageDir, inner, backend, reads, events, cleanup: () => rm(base, { recursive: true, force: true }) };
}

/** fresh(), started, with alice's root. */
async function started() {
  const h = await fresh();
  await h.backend.init();
  await h.backend.mkdir(keyOf(''), { parents: true, existOk: true });
  return h;
}

// The layer is a backend like any other: the seam's whole suite holds through it.
runBackendConformance('local under the hashing layer', async () => {
  const { backend, tmpDir, storageDir, cleanup } = await fresh();
  return {
    backend,
    cleanup,
    staging: async () => (await readdir(tmpDir)).filter((n) => n !== 'tus'),
    resumableStaging: () => readdir(join(tmpDir, 'tus')).catch(() => []),
    removeStorage: () => rm(storageDir, { recursive: true }),
  };
});

test('a write\'s entry and its created / replaced events carry the SHA-256 of its bytes, taken as they streamed (no read of the file)', async () => {
  const h = await started();
  try {
    const first = await h.backend.write(keyOf('a/x.bin'), bodyOf('first'), { ifExists: 'replace' });
    const second = await h.backend.write(keyOf('a/x.bin'), bodyOf('second'), { ifExists: 'replace' });
    assert.equal(first.sha256, sha256(Buffer.from('first')));
    assert.equal(second.sha256, sha256(Buffer.from('second')));
    const written = h.events.filter((e) => e.type === 'created' || e.type === 'replaced').filter((e) => 'key' in e && e.key.segments.join('/') === 'a/x.bin');
    assert.deepEqual(written.map((e) => [e.type, 'sha256' in e ? e.sha256 : undefined]), [['created', first.sha256], ['replaced', second.sha256]]);
    assert.equal(h.reads.n, 0, 'never read back');
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, 7);
    const staged = await h.backend.stage(keyOf('big.bin'), bodyOf(big), { ifExists: 'fail' });
    assert.equal(staged.sha256, sha256(big), 'known before the commit (a digest check needs it there)');
    assert.equal((await staged.commit()).sha256, sha256(big));
    assert.equal(h.reads.n, 0);
    assert.deepEqual(await readAll((await h.backend.read(keyOf('big.bin'))).stream), big);
  } finally {
    await h.cleanup();
  }
});

test('a copy\'s events say what they copy; moves and deletes pass as they are', async () => {
  const h = await started();
  try {
    await h.backend.write(keyOf('src/f.txt'), bodyOf('f'), { ifExists: 'fail' });
    await h.backend.copy(keyOf('src'), keyOf('dst'), { overwrite: false });
    const copied = h.events.filter((e) => e.type === 'created' && e.copyOf);
    assert.ok(copied.length > 0);
    for (const e of copied) assert.deepEqual(e.type === 'created' && e.copyOf && [e.copyOf.from.segments, e.copyOf.to.segments], [['src'], ['dst']]);
    await h.backend.move(keyOf('dst'), keyOf('moved'), { overwrite: false });
    assert.equal(h.events.at(-1)?.type, 'moved');
  } finally {
    await h.cleanup();
  }
});

test('a resumable upload is hashed chunk by chunk; a chunk that came elsewhere leaves its hash unknown', async () => {
  const h = await started();
  try {
    const id = '00000000-0000-4000-8000-000000000001';
    await h.backend.resumable.create(id);
    let offset = 0;
    for (const part of ['one ', 'two ', 'three']) offset = (await h.backend.resumable.append(id, offset, bodyOf(part), { maxBytes: 100 })).offset;
    await h.backend.mkdir(keyOf('up'), { parents: true, existOk: true });
    const entry = await h.backend.resumable.commit(id, offset, keyOf('up/r.txt'), { ifExists: 'replace' });
    assert.equal(entry?.sha256, sha256(Buffer.from('one two three')));
    assert.equal(h.events.find((e) => e.type === 'created' && e.key.segments.join('/') === 'up/r.txt' && e.sha256 !== undefined)?.type, 'created');
    // Another process (another hashing layer over the same storage) took the second chunk: this one cannot know the hash, and says none.
    const elsewhere = withHashes(h.inner);
    const other = '00000000-0000-4000-8000-000000000002';
    await h.backend.resumable.create(other);
    await h.backend.resumable.append(other, 0, bodyOf('aa'), { maxBytes: 100 });
    await elsewhere.resumable.append(other, 2, bodyOf('cc'), { maxBytes: 100 });
    const unknown = await h.backend.resumable.commit(other, 4, keyOf('up/u.txt'), { ifExists: 'replace' });
    assert.ok(unknown);
    assert.equal(unknown.sha256, undefined);
    assert.deepEqual(await readAll((await h.backend.read(keyOf('up/u.txt'))).stream), Buffer.from('aacc'));
  } finally {
    await h.cleanup();
  }
});

test('a body that stops midway fails the write and leaves nothing: the tap never waits for bytes that will not come', async () => {
  const h = await started();
  try {
    const body = new PassThrough();
    body.write('partial');
    const writing = h.backend.write(keyOf('cut.txt'), body, { ifExists: 'replace' });
    setImmediate(() => body.destroy());
    await assert.rejects(writing);
    assert.equal(await h.backend.stat(keyOf('cut.txt')), undefined);
  } finally {
    await h.cleanup();
  }
});
