import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DeleteObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { newBucket, s3Client, s3Service, skipReason } from '../helpers/services.js';
import { createSearchService, type SearchService } from '../../src/services/search.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { MetadataStore } from '../../src/store/metadata-store.js';
import { listAll, type StorageBackend } from '../../src/storage/backend.js';
import type { Coordination } from '../../src/storage/coordination.js';
import type { NameIndex } from '../../src/storage/name-index.js';
import { assertCreatedThenReplaced, bodyOf, conformanceIt, keyOf, readAll, rejectsCode, resumableTests, runBackendConformance, usageLedger } from '../../src/storage/conformance/index.test-suite.js';
import { newMasterKeyText, parseMasterKey } from '../../src/lib/encryption/format.js';
import { encryptedBackend } from '../../src/storage/encrypted/encrypted-backend.js';
import { createS3Client } from '../../src/storage/s3/client.js';
import { createS3Backend } from '../../src/storage/s3/s3-backend.js';

const skip = skipReason('S3');

/**
 * An S3 backend as a server runs it: its writes ask the store's index (`names`, the store's search
 * index unless given), which the search service keeps from the backend's events. `search` is that
 * service (its rescan takes in what other tools did).
 */
function indexedBackend(loc: { bucket: string; prefix: string }, store: MetadataStore, opts: { coordination?: Coordination; names?: NameIndex; client?: ReturnType<typeof createS3Client> } = {}): { backend: StorageBackend; search: SearchService } {
  const s = s3Service();
  if (!s) throw new Error('unreachable: guarded by skip');
  const backend = createS3Backend(
    { ...loc, endpoint: s.endpoint, region: s.region, pathStyle: true },
    opts.coordination ?? { leases: store.leases, journal: store.journal },
    opts.names ?? store.search,
    opts.client ? { client: opts.client } : { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } },
  );
  const search = createSearchService({ store, backend });
  const close = backend.close.bind(backend);
  return { backend: { ...backend, close: async () => (search.close(), close()) }, search };
}

/** One bucket for this file; each test gets its own prefix in it and its own SQLite store. */
let bucket: string | undefined;
async function fresh(prefixName = randomUUID(), opts: { journalDelayMs?: number; names?: (store: MetadataStore) => NameIndex } = {}): Promise<{ backend: StorageBackend; search: SearchService; store: MetadataStore; prefix: string; cleanup(): Promise<void> }> {
  bucket ??= await newBucket('fc-conf');
  const dir = await mkdtemp(join(tmpdir(), 'fc-s3-'));
  const store = await openSqliteStore(join(dir, 'meta.db'));
  const prefix = `${prefixName}/`;
  const journal = opts.journalDelayMs ? slowJournal(store.journal, opts.journalDelayMs) : store.journal;
  const { backend, search } = indexedBackend({ bucket, prefix }, store, { coordination: { leases: store.leases, journal }, names: opts.names?.(store) });
  return {
    backend,
    search,
    store,
    prefix,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A journal whose writes take a while, as a remote database's do under load. */
function slowJournal(journal: MetadataStore['journal'], ms: number): MetadataStore['journal'] {
  const later = () => new Promise((r) => setTimeout(r, ms));
  return { ...journal, put: async (r) => (await later(), journal.put(r)), update: async (id, data, now) => (await later(), journal.update(id, data, now)) };
}

if (skip) {
  test('S3 backend conformance', { skip }, () => undefined);
} else {
  runBackendConformance('s3', async () => {
    const f = await fresh();
    return {
      backend: f.backend,
      cleanup: f.cleanup,
      // The staging area of S3 is its multipart uploads: none may be left under the prefix.
      staging: async () => {
        const r = await s3Client().send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: f.prefix }));
        return (r.Uploads ?? []).map((u) => u.Key ?? '');
      },
      resumableStaging: async () => (await objects(`${f.prefix}.file-cloud/tus/`)).map((k) => k ?? ''),
    };
  });
  // The resumable staging through the encryption layer (sealed chunks, partial-chunk records read back from S3).
  const master = parseMasterKey(newMasterKeyText());
  resumableTests(
    conformanceIt('encrypted s3', async () => {
      const f = await fresh();
      return {
        backend: encryptedBackend(f.backend, { current: master, all: [master], onBadFile: () => undefined }),
        cleanup: f.cleanup,
        resumableStaging: async () => (await objects(`${f.prefix}.file-cloud/tus/`)).map((k) => k ?? ''),
      };
    }),
  );
}

const objects = async (prefix: string) => ((await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key?.slice(prefix.length));

test('s3: files are plain objects at <prefix><user>/<path> with their bytes and content type', { skip }, async () => {
  const f = await fresh();
  try {
    await f.backend.write(keyOf('docs/é x #1.txt'), bodyOf('plain bytes'), { ifExists: 'fail' });
    await f.backend.mkdir(keyOf('empty'), { parents: true, existOk: false });
    assert.deepEqual((await objects(f.prefix)).sort(), ['alice/docs/é x #1.txt', 'alice/empty/']);
    const r = await s3Client().send(new (await import('@aws-sdk/client-s3')).GetObjectCommand({ Bucket: bucket, Key: `${f.prefix}alice/docs/é x #1.txt` }));
    assert.equal(r.ContentType, 'text/plain; charset=utf-8');
    assert.equal(await r.Body?.transformToString(), 'plain bytes');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: keys written by other tools are served; keys that are no valid path are skipped', { skip }, async () => {
  const f = await fresh();
  try {
    const put = (k: string, body = 'x') => s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: `${f.prefix}alice/${k}`, Body: body }));
    await put('from-tool/report.csv', 'a,b');
    await put('bad//double.txt');
    await put('up/../escape.txt');
    await put('back\\slash.txt');
    await put('fine.txt', 'fine');
    assert.deepEqual((await listAll(f.backend, keyOf(''))).map((e) => e.name).sort(), ['bad', 'fine.txt', 'from-tool', 'up']);
    assert.deepEqual(await listAll(f.backend, keyOf('bad')), [], 'the `//` key is not an entry');
    assert.deepEqual(await listAll(f.backend, keyOf('up')), [], 'the `..` key is not an entry');
    assert.equal((await readAll((await f.backend.read(keyOf('from-tool/report.csv'))).stream)).toString(), 'a,b');
    const walked: string[] = [];
    for await (const w of f.backend.walk(keyOf(''))) walked.push(w.path.join('/'));
    assert.deepEqual(walked.sort(), ['bad', 'fine.txt', 'from-tool', 'from-tool/report.csv', 'up']);
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: a large upload goes through a multipart upload, and an aborted one leaves no upload behind', { skip }, async () => {
  const f = await fresh();
  try {
    const big = Buffer.alloc(40 * 1024 * 1024, 7);
    const e = await f.backend.write(keyOf('big.bin'), bodyOf(big), { ifExists: 'fail' });
    assert.equal(e.size, big.length);
    assert.match(e.etag, /-\d+"$/, 'a multipart ETag');
    const controller = new AbortController();
    const body = bodyOf(big);
    const p = f.backend.write(keyOf('aborted.bin'), body, { ifExists: 'fail', signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await rejectsCode(p, 'aborted');
    const r = await s3Client().send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: f.prefix }));
    assert.deepEqual(r.Uploads ?? [], []);
    assert.equal(await f.backend.stat(keyOf('aborted.bin')), undefined);
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

// `skip`: skipReason('S3'), the reason printed when there is no test S3 (under CI a missing service fails instead).
test('s3: an encrypted large upload, its sealed chunks handed back as they are copied into parts, reads back whole', { skip }, async () => {
  const f = await fresh();
  const key = parseMasterKey(newMasterKeyText());
  const backend = encryptedBackend(f.backend, { current: key, all: [key], onBadFile: () => undefined });
  try {
    // Three parts of 8 MiB and a short one: chunks kept in the first part, copied, and split across parts.
    const plain = randomBytes(3 * 8 * 1024 * 1024 + 100_003);
    const e = await backend.write(keyOf('sealed.bin'), bodyOf(plain), { ifExists: 'fail' });
    assert.equal(e.size, plain.length);
    assert.match(e.etag, /-\d+"$/, 'a multipart ETag');
    assert.ok((await readAll((await backend.read(keyOf('sealed.bin'))).stream)).equals(plain), 'the bytes read back are the bytes written');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: a multipart upload whose journal answers slowly still stores every part once, in order', { skip }, async () => {
  // Part numbers once came from (parts done + parts in flight): a part counted in both while its journal update ran
  // gave the next part a number that a later part reused, and the object silently lost a part.
  const f = await fresh(undefined, { journalDelayMs: 150 });
  try {
    const big = randomBytes(60 * 1024 * 1024 + 12_345);
    const e = await f.backend.write(keyOf('slow.bin'), bodyOf(big), { ifExists: 'fail' });
    assert.equal(e.size, big.length);
    const back = await readAll((await f.backend.read(keyOf("slow.bin"))).stream);
    assert.equal(back.length, big.length);
    assert.ok(back.equals(big), 'the stored object has the uploaded bytes in order');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: the sweeper aborts a multipart upload whose writer died', { skip }, async () => {
  const f = await fresh();
  try {
    // A writer that died mid-upload: its journal record and multipart upload are all that is left.
    const { CreateMultipartUploadCommand } = await import('@aws-sdk/client-s3');
    const key = `${f.prefix}alice/dead.bin`;
    const created = await s3Client().send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    await f.store.journal.put({ id: 'dead', kind: 's3-upload', data: JSON.stringify({ bucket, key, uploadId: created.UploadId }), now: Date.now() - 10_000 });
    await f.store.journal.put({ id: 'live', kind: 's3-upload', data: JSON.stringify({ bucket, key: `${key}.live`, uploadId: 'x' }), now: Date.now() });
    await f.backend.sweep({ staleMs: 5_000 });
    const r = await s3Client().send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: f.prefix }));
    assert.deepEqual(r.Uploads ?? [], []);
    assert.equal(await f.store.journal.get('dead'), undefined);
    assert.ok(await f.store.journal.get('live'), 'an upload still making progress is left alone');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: an unreachable object store is `unavailable`, not an internal error', { skip }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-s3-'));
  const store = await openSqliteStore(join(dir, 'meta.db'));
  const b = createS3Backend({ bucket: 'nowhere', prefix: '', endpoint: 'http://127.0.0.1:9', region: 'us-east-1', pathStyle: true }, store, store.search, { credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  try {
    await rejectsCode(b.stat(keyOf('x')), 'unavailable');
    await rejectsCode(b.ping(), 'unavailable');
    await rejectsCode(b.write(keyOf('x'), bodyOf('x'), { ifExists: 'replace' }), 'unavailable');
  } finally {
    await b.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('s3: a file another tool stores under a name an upload claimed is kept; the upload takes the next name', { skip }, async () => {
  const f = await fresh();
  try {
    const { PassThrough } = await import('node:stream');
    const body = new PassThrough();
    body.write('from file cloud, ');
    const upload = f.backend.write(keyOf('race.txt'), body, { ifExists: 'rename' });
    // The name is claimed and checked by now (the body is still arriving); another tool stores the same key.
    await new Promise((r) => setTimeout(r, 300));
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: `${f.prefix}alice/race.txt`, Body: 'from another tool' }));
    body.end('done');
    const entry = await upload;
    assert.equal(entry.name, 'race (1).txt');
    assert.equal((await readAll((await f.backend.read(keyOf('race.txt'))).stream)).toString(), 'from another tool');
    assert.equal((await readAll((await f.backend.read(keyOf('race (1).txt'))).stream)).toString(), 'from file cloud, done');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: concurrent uploads under one name on two backends sharing a metadata store never overwrite each other', { skip }, async () => {
  // Two "nodes": separate backends and S3 clients, one metadata store (as with PostgreSQL), one prefix.
  const a = await fresh();
  const { backend: b } = indexedBackend({ bucket: bucket as string, prefix: a.prefix }, a.store);
  try {
    const { slowBody } = await import('../../src/storage/conformance/index.test-suite.js');
    const writes = Array.from({ length: 12 }, (_, i) => (i % 2 ? a.backend : b).write(keyOf('same.txt'), slowBody(Buffer.from(`upload ${i}`), 4), { ifExists: 'rename' }));
    const names = (await Promise.all(writes)).map((e) => e.name);
    assert.equal(new Set(names).size, 12, `distinct names: ${names.join(', ')}`);
    const contents = await Promise.all(names.map(async (n) => (await readAll((await a.backend.read(keyOf(n))).stream)).toString()));
    assert.deepEqual(contents.sort(), Array.from({ length: 12 }, (_, i) => `upload ${i}`).sort());
  } finally {
    await b.close();
    await a.backend.close();
    await a.cleanup();
  }
});

/**
 * A fresh prefix and store, and a second backend on them that records the leases it takes, those it
 * found held by another (refused to it, or held where it looked: `busy`), and the store requests it
 * sends (at send: transfers such as PutObject go out on a second client inside it, client.ts).
 * `answered` runs when a request has its answer, before the backend sees it.
 */
async function counted(opts: { answered?: (command: string) => Promise<void> } = {}): Promise<{ b: StorageBackend; store: MetadataStore; prefix: string; taken: string[]; busy: string[]; sent: string[]; close(): Promise<void> }> {
  const f = await fresh();
  const s = s3Service();
  if (!s) throw new Error('unreachable: guarded by skip');
  const taken: string[] = [];
  const busy: string[] = [];
  const leases: MetadataStore['leases'] = {
    ...f.store.leases,
    acquire: async (name, owner, now, expiresAt) => {
      taken.push(name);
      const got = await f.store.leases.acquire(name, owner, now, expiresAt);
      if (!got) busy.push(name);
      return got;
    },
    // A set taken in one turn (a create's name and edit leases): each name counted as taken, the set as busy when refused.
    acquireAll: async (names, owner, now, expiresAt, around) => {
      taken.push(...names);
      const got = await f.store.leases.acquireAll(names, owner, now, expiresAt, around);
      if (!got) busy.push(...names);
      return got;
    },
    heldOf: async (names, now) => {
      const held = await f.store.leases.heldOf(names, now);
      busy.push(...held);
      return held;
    },
    heldWithin: async (prefix, now) => {
      const held = await f.store.leases.heldWithin(prefix, now);
      busy.push(...held);
      return held;
    },
    releaseHeldBy: (process) => f.store.leases.releaseHeldBy(process),
  };
  const loc = { bucket: bucket as string, prefix: f.prefix, endpoint: s.endpoint, region: s.region, pathStyle: true };
  const client = createS3Client(loc, { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey });
  const sent: string[] = [];
  const send = client.send.bind(client) as (command: object, options?: object) => Promise<unknown>;
  (client as { send: unknown }).send = async (command: object, options?: object) => {
    sent.push(command.constructor.name);
    const r = await send(command, options);
    await opts.answered?.(command.constructor.name);
    return r;
  };
  const { backend: b } = indexedBackend(loc, f.store, { coordination: { leases, journal: f.store.journal }, client });
  return {
    b,
    store: f.store,
    prefix: f.prefix,
    taken,
    busy,
    sent,
    async close() {
      await b.close();
      await f.backend.close();
      await f.cleanup();
    },
  };
}

test('s3: a delete of a new file or of its folder between its multipart upload\'s completion and the look after it waits for the upload; the file is reported created, then deleted', { skip }, async () => {
  // A large upload (or a tus upload's finish) to a free name appears at CompleteMultipartUpload and is asked for its
  // ETag after: a delete between the two took away, and counted, a file whose creation was then never reported (the
  // upload failed with "lost the file it just stored", and usage fell by its size).
  for (const gone of ['up/big.bin', 'up']) {
    let onComplete: (() => Promise<void>) | undefined;
    const c = await counted({ answered: async (command) => (command === 'CompleteMultipartUploadCommand' ? onComplete?.() : undefined) });
    try {
      await c.b.init();
      await c.b.mkdir(keyOf(''), { parents: true, existOk: true });
      const usage = usageLedger(c.b);
      await c.b.write(keyOf('up/small.txt'), bodyOf('x'), { ifExists: 'fail' });
      const lease = `s3-edit:${bucket}/${c.prefix}alice/up/big.bin`;
      let deleted: Promise<unknown> | undefined;
      onComplete = async () => {
        onComplete = undefined;
        let done = false;
        deleted = c.b.delete(keyOf(gone), { recursive: true }).finally(() => (done = true));
        // Until the delete is done, or waits for the upload's lease (what the backend promises): no schedule is assumed.
        while (!done && !c.busy.includes(lease)) await new Promise((r) => setTimeout(r, 10));
      };
      const big = Buffer.alloc(9 * 1024 * 1024, 3);
      const entry = await c.b.write(keyOf('up/big.bin'), bodyOf(big), { ifExists: 'fail' });
      assert.ok(deleted, `${gone}: the delete ran while the upload completed`);
      await deleted;
      assert.equal(entry.size, big.length);
      assert.equal(await c.b.stat(keyOf('up/big.bin')), undefined, `${gone}: the delete took the new file, after it was reported`);
      assert.equal(usage.total, await usage.stored(), `${gone}: the events add up to the bytes stored`);
    } finally {
      await c.close();
    }
  }
});

test('s3: a small upload to a new name is one store request: the index answers for its parents and its name, and the PutObject answer dates the entry', { skip }, async () => {
  // Issue 53: the parent's HEAD, the LIST of the name as a folder and the HEAD for the date made a small
  // upload four store requests, against the SDK's one.
  const { b, store, prefix, taken, sent, close } = await counted();
  try {
    const events: unknown[] = [];
    b.events.subscribe((e) => void events.push(e));
    await b.mkdir(keyOf('in'), { parents: true, existOk: false });
    sent.length = 0;
    taken.length = 0;
    const entry = await b.write(keyOf('in/new.txt'), bodyOf('one'), { ifExists: 'replace' });
    const name = `s3-name:${bucket}/${prefix}alice/in/new.txt`;
    assert.deepEqual(sent, ['PutObjectCommand'], 'one conditional PutObject, nothing before or after it');
    // The name lease, and its edit lease, which a change of a folder around it waits for (docs/storage.md, "Concurrency below a folder").
    assert.deepEqual(taken, [name, `s3-edit:${bucket}/${prefix}alice/in/new.txt`], 'the name and edit leases of a free name, nothing waited for');
    // The entry: the store's ETag and size; its date the answer's, which is the object's to the second
    // (docs/storage.md, "Dates of new files").
    const there = await b.stat(keyOf('in/new.txt'));
    assert.ok(there);
    assert.deepEqual({ etag: entry.etag, size: entry.size }, { etag: there.etag, size: there.size });
    assert.ok(Math.abs(entry.modified.getTime() - there.modified.getTime()) <= 1000, `${entry.modified.toISOString()} vs ${there.modified.toISOString()}`);
    sent.length = 0;
    assert.equal((await b.write(keyOf('in/a.txt'), bodyOf('two'), { ifExists: 'rename' })).name, 'a.txt');
    assert.deepEqual(sent, ['PutObjectCommand'], 'a new name in a multipart upload: the same one request');
    // New folders on the way: still one request; the folders it made reach the index with the event.
    sent.length = 0;
    await b.write(keyOf('fresh/deep/x.txt'), bodyOf('three'), { ifExists: 'replace' });
    assert.deepEqual(sent, ['PutObjectCommand'], 'no look at the folders made on the way, by the write or by the index');
    assert.deepEqual([...(await store.search.kinds('alice', ['fresh', 'fresh/deep', 'fresh/deep/x.txt']))], [['fresh', 'folder'], ['fresh/deep', 'folder'], ['fresh/deep/x.txt', 'file']]);
    // A taken name (the index says so): the replace under the leases, one HEAD for the size it replaces.
    sent.length = 0;
    taken.length = 0;
    await b.write(keyOf('in/new.txt'), bodyOf('three'), { ifExists: 'replace' });
    assert.deepEqual(sent, ['HeadObjectCommand', 'PutObjectCommand'], 'the size replaced, then the PutObject');
    assert.deepEqual(taken, [name, `s3-edit:${bucket}/${prefix}alice/in/new.txt`], 'the leases of a replace');
    assert.equal((await readAll((await b.read(keyOf('in/new.txt'))).stream)).toString(), 'three');
    await assertCreatedThenReplaced(b, events.filter((e) => (e as { key?: { segments: string[] } }).key?.segments.join('/') === 'in/new.txt'), 'in/new.txt');
    // What the index says is refused without a store request: a folder at the name, a file in the way.
    await b.mkdir(keyOf('in/dir'), { parents: true, existOk: false });
    sent.length = 0;
    await rejectsCode(b.write(keyOf('in/dir'), bodyOf('x'), { ifExists: 'replace' }), 'is_a_directory');
    await rejectsCode(b.write(keyOf('in/new.txt/x'), bodyOf('x'), { ifExists: 'replace' }), 'not_a_directory');
    await rejectsCode(b.write(keyOf('in/a.txt'), bodyOf('x'), { ifExists: 'fail' }), 'already_exists');
    await b.mkdir(keyOf('in'), { parents: true, existOk: true });
    assert.deepEqual(sent, [], 'the index answered every one');
  } finally {
    await close();
  }
});

test('s3: a small replace waits for a writer that claimed the name, whose multipart upload would otherwise replace it unseen', { skip }, async () => {
  // radosgw ignores If-None-Match on CompleteMultipartUpload: a replace that created the name while
  // a large upload held its claim lost its file to that upload, with a 201 and a `created` event.
  const f = await fresh();
  try {
    const { PassThrough } = await import('node:stream');
    const big = new PassThrough();
    const first = f.backend.write(keyOf('held.bin'), big, { ifExists: 'rename' });
    big.write(randomBytes(9 * 1024 * 1024)); // more than one part (8 MiB): a multipart upload
    // The claim is made once its multipart upload exists.
    const until = Date.now() + 20_000;
    for (;;) {
      const r = await s3Client().send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: `${f.prefix}alice/held.bin` }));
      if ((r.Uploads ?? []).length > 0) break;
      assert.ok(Date.now() < until, 'the multipart upload started within 20 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const second = f.backend.write(keyOf('held.bin'), bodyOf('small'), { ifExists: 'replace' });
    big.end(randomBytes(1024));
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.name, 'held.bin');
    assert.equal(b.name, 'held.bin');
    const there = await readAll((await f.backend.read(keyOf('held.bin'))).stream);
    assert.equal(there.length === 5 ? there.toString() : `${there.length} bytes`, 'small', 'the replace came after the claimed upload');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: a new name is claimed by the index, not by a look in the bucket: a single body is one conditional PutObject, a large one looks as its multipart upload starts', { skip }, async () => {
  // Issue 30: the claim's HEAD of the name cost every multipart-form part one radosgw request that
  // If-None-Match (or, for a large body, the look before CreateMultipartUpload) makes anyway; issue 53:
  // the index, not a LIST, says that no folder is there.
  const { b, prefix, sent, close } = await counted();
  const uploadsLeft = async () => (await s3Client().send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ?? [];
  try {
    assert.equal((await b.write(keyOf('in/a.txt'), bodyOf('one'), { ifExists: 'rename' })).name, 'a.txt');
    assert.deepEqual(sent, ['PutObjectCommand'], 'one conditional PutObject');
    // Taken (the index says so): the next name, with no request for the taken one.
    sent.length = 0;
    assert.equal((await b.write(keyOf('in/a.txt'), bodyOf('two'), { ifExists: 'rename' })).name, 'a (1).txt');
    await rejectsCode(b.write(keyOf('in/a.txt'), bodyOf('three'), { ifExists: 'fail' }), 'already_exists');
    assert.deepEqual(sent, ['PutObjectCommand']);
    // A larger single body the same: its bytes go once.
    sent.length = 0;
    const mid = randomBytes(300 * 1024);
    assert.equal((await b.write(keyOf('in/a.txt'), bodyOf(mid), { ifExists: 'rename' })).name, 'a (2).txt');
    assert.deepEqual(sent, ['PutObjectCommand'], 'one PutObject for a 300 KiB body');
    // A large body looks before its multipart upload starts: the next name, or already_exists, and no upload left behind.
    const big = randomBytes(9 * 1024 * 1024);
    assert.equal((await b.write(keyOf('in/a.txt'), bodyOf(big), { ifExists: 'rename' })).name, 'a (3).txt');
    await rejectsCode(b.write(keyOf('in/a.txt'), bodyOf(big), { ifExists: 'fail' }), 'already_exists');
    assert.deepEqual(await uploadsLeft(), []);
    assert.equal((await readAll((await b.read(keyOf('in/a.txt'))).stream)).toString(), 'one');
    assert.equal((await readAll((await b.read(keyOf('in/a (1).txt'))).stream)).toString(), 'two');
    assert.ok((await readAll((await b.read(keyOf('in/a (2).txt'))).stream)).equals(mid));
    assert.ok((await readAll((await b.read(keyOf('in/a (3).txt'))).stream)).equals(big));
    assert.deepEqual((await listAll(b, keyOf('in'))).map((e) => e.name).sort(), ['a (1).txt', 'a (2).txt', 'a (3).txt', 'a.txt']);
  } finally {
    await close();
  }
});

test('s3: a write told that its parent is a folder and its name free (a WebDAV PUT has just looked) does not look again', { skip }, async () => {
  const { b, sent, close } = await counted();
  try {
    await b.mkdir(keyOf('in'), { parents: true, existOk: false });
    sent.length = 0;
    await b.write(keyOf('in/x.txt'), bodyOf('one'), { ifExists: 'replace', freeNameInFolder: true });
    assert.deepEqual(sent, ['PutObjectCommand'], 'the PutObject alone');
    // The name is decided by the store as always: a file there after the caller's look is replaced under the leases, not lost.
    await b.write(keyOf('in/x.txt'), bodyOf('three'), { ifExists: 'replace', freeNameInFolder: true });
    assert.equal((await readAll((await b.read(keyOf('in/x.txt'))).stream)).toString(), 'three');
  } finally {
    await close();
  }
});

/** The store's index, with `between` run once right after it answered for `path`: another tool at work between a write's look-up and its create. */
function raceAfterLookup(store: MetadataStore, path: string, between: () => Promise<unknown>): NameIndex {
  let done = false;
  return {
    async kinds(user, paths) {
      const answer = await store.search.kinds(user, paths);
      if (!done && paths.includes(path)) {
        done = true;
        await between();
      }
      return answer;
    },
    times: (user, paths) => store.search.times(user, paths),
  };
}

test('s3: another tool stores a name between the write\'s look-up in the index and its create: the create yields, nothing is overwritten', { skip }, async () => {
  // CONTRACT "Backends and nodes": the index says the name is free, the conditional PutObject finds the file.
  for (const mode of ['rename', 'fail', 'replace'] as const) {
    const prefixName = randomUUID();
    const path = `race-${mode}.txt`;
    const other = `from another tool (${mode})`;
    const f = await fresh(prefixName, { names: (store) => raceAfterLookup(store, path, () => s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: `${prefixName}/alice/${path}`, Body: other }))) });
    const content = async (p: string) => (await readAll((await f.backend.read(keyOf(p))).stream)).toString();
    try {
      const events: unknown[] = [];
      f.backend.events.subscribe((e) => void events.push(e));
      if (mode === 'fail') {
        await rejectsCode(f.backend.write(keyOf(path), bodyOf('from file cloud'), { ifExists: 'fail' }), 'already_exists');
        assert.equal(await content(path), other, 'fail: the other tool\'s file is kept');
        assert.deepEqual(events, []);
      } else if (mode === 'rename') {
        assert.equal((await f.backend.write(keyOf(path), bodyOf('from file cloud'), { ifExists: 'rename' })).name, 'race-rename (1).txt');
        assert.equal(await content(path), other, 'rename: the other tool\'s file is kept');
        assert.equal(await content('race-rename (1).txt'), 'from file cloud', 'and the upload took the next name');
      } else {
        // A raw PUT replaces by contract: its create yields, and it replaces under the leases, reporting what it took away.
        await f.backend.write(keyOf(path), bodyOf('from file cloud'), { ifExists: 'replace' });
        assert.equal(await content(path), 'from file cloud');
        assert.deepEqual(
          events.map((e) => ({ ...(e as object), entry: undefined })),
          [{ type: 'replaced', key: keyOf(path), size: 15, previousSize: other.length, entry: undefined }],
        );
      }
    } finally {
      await f.backend.close();
      await f.cleanup();
    }
  }
});

test('s3: a file and a folder at one name: both stay in the bucket, listings, stat and walks show the folder, and the rescan names the file it hides', { skip }, async () => {
  const f = await fresh();
  const put = (k: string, body = 'x') => s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: `${f.prefix}alice/${k}`, Body: body }));
  try {
    await f.backend.write(keyOf('box/x'), bodyOf('a file of File Cloud'), { ifExists: 'fail' });
    // Another tool makes a folder at the same name, and names that sort between `x` and `x/` in the bucket.
    await put('box/x/inside.txt', 'inside');
    await put('box/x-1.txt');
    await put('box/x.txt');
    const shown = (entries: { name: string; isFile: boolean }[]) => entries.map((e) => `${e.name}${e.isFile ? '' : '/'}`);
    assert.deepEqual(shown(await listAll(f.backend, keyOf('box'))).sort(), ['x-1.txt', 'x.txt', 'x/']);
    const sorted: { name: string; isFile: boolean }[] = [];
    for await (const page of f.backend.listSorted(keyOf('box'))) sorted.push(...page);
    assert.deepEqual(shown(sorted), ['x/', 'x-1.txt', 'x.txt']);
    assert.equal((await f.backend.stat(keyOf('box/x')))?.isFile, false, 'stat: the folder');
    assert.deepEqual(shown(await listAll(f.backend, keyOf('box/x'))), ['inside.txt']);
    const hidden: string[] = [];
    const walked: string[] = [];
    for await (const w of f.backend.walk(keyOf(''), { onHidden: (p) => hidden.push(p.join('/')) })) walked.push(`${w.path.join('/')}${w.entry.isFile ? '' : '/'}`);
    assert.deepEqual(walked.sort(), ['box/', 'box/x-1.txt', 'box/x.txt', 'box/x/', 'box/x/inside.txt']);
    assert.deepEqual(hidden, ['box/x']);
    assert.deepEqual((await objects(`${f.prefix}alice/box/`)).sort(), ['x', 'x-1.txt', 'x.txt', 'x/inside.txt'], 'both stay in the bucket, untouched');
    // The rescan takes the folder into the index and names the hidden file; writes go by the index.
    const r = await f.search.rescanUser('alice');
    assert.deepEqual(r.hidden, ['/alice/box/x']);
    assert.deepEqual([...(await f.store.search.kinds('alice', ['box/x', 'box/x/inside.txt']))].sort(), [['box/x', 'folder'], ['box/x/inside.txt', 'file']]);
    await rejectsCode(f.backend.write(keyOf('box/x'), bodyOf('y'), { ifExists: 'replace' }), 'is_a_directory');
    await f.backend.write(keyOf('box/x/new.txt'), bodyOf('new'), { ifExists: 'fail' });
    // Removing the folder takes its keys only: the file it hid is there again.
    await f.backend.delete(keyOf('box/x'), { recursive: true });
    assert.equal((await f.backend.stat(keyOf('box/x')))?.isFile, true);
    assert.equal((await readAll((await f.backend.read(keyOf('box/x'))).stream)).toString(), 'a file of File Cloud');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: the rescan takes in files another tool added, changed and removed; until then the index decides, and the store has the last word on a create', { skip }, async () => {
  const f = await fresh();
  const key = (p: string) => `${f.prefix}alice/${p}`;
  try {
    for (const p of ['keep.txt', 'change.txt', 'remove.txt']) await f.backend.write(keyOf(p), bodyOf(`${p} by file cloud`), { ifExists: 'fail' });
    // keep.txt as when its PutObject's answer came a second after the store dated the object.
    const kept = await f.backend.stat(keyOf('keep.txt'));
    assert.ok(kept);
    await f.store.search.put([{ user: 'alice', path: 'keep.txt', isFile: true, size: kept.size, modified: kept.modified.getTime() + 1000, etag: kept.etag }]);
    const cursor = await f.store.changes.latest();
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: key('added.txt'), Body: 'added by a tool' }));
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: key('change.txt'), Body: 'changed by a tool' }));
    await s3Client().send(new DeleteObjectCommand({ Bucket: bucket, Key: key('remove.txt') }));
    const kinds = async () => [...(await f.store.search.kinds('alice', ['keep.txt', 'change.txt', 'remove.txt', 'added.txt']))].map(([p]) => p).sort();
    assert.deepEqual(await kinds(), ['change.txt', 'keep.txt', 'remove.txt'], 'before the rescan the index has what File Cloud wrote');
    // The index knows no added.txt; the conditional create finds it.
    await rejectsCode(f.backend.write(keyOf('added.txt'), bodyOf('from file cloud'), { ifExists: 'fail' }), 'already_exists');
    assert.equal((await readAll((await f.backend.read(keyOf('added.txt'))).stream)).toString(), 'added by a tool');
    const r = await f.search.rescanUser('alice');
    assert.equal(r.removed, 1);
    assert.deepEqual(await kinds(), ['added.txt', 'change.txt', 'keep.txt']);
    const changes = (await f.store.changes.changesSince(cursor, 100)).map((c) => `${c.type} ${c.path}`);
    assert.deepEqual(changes.sort(), ['created added.txt', 'deleted remove.txt', 'modified change.txt'], 'one entry each, none for the file no tool touched');
    const keep = await f.store.search.search({ user: 'alice', text: 'keep.txt', within: '', type: 'file', limit: 5 });
    assert.deepEqual(keep.entries.map((e) => e.modified), [kept.modified.getTime()], 'the store\'s date, taken in quietly (same size and ETag)');
    const found = await f.store.search.search({ user: 'alice', text: 'change.txt', within: '', type: 'file', limit: 5 });
    assert.deepEqual(found.entries.map((e) => e.size), ['changed by a tool'.length], 'the index has the changed size');
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});

test('s3: a client\'s time is the object\'s mtime metadata (rclone\'s); stat, listings, walks and a rescan keep it, a move keeps it, bytes another tool writes date the file again', { skip }, async () => {
  const f = await fresh();
  const objKey = (p: string) => `${f.prefix}alice/${p}`;
  const when = new Date('2001-02-03T04:05:06Z');
  const later = new Date('2005-06-07T08:09:10Z');
  try {
    await f.backend.write(keyOf('d/written.txt'), bodyOf('written with a time'), { ifExists: 'fail', modified: when });
    await f.backend.write(keyOf('d/dated.txt'), bodyOf('dated after'), { ifExists: 'fail' });
    await f.backend.redate(keyOf('d/dated.txt'), later);
    await f.backend.write(keyOf('d/plain.txt'), bodyOf('no time'), { ifExists: 'fail' });
    // What rclone's S3 backend writes and reads: seconds since 1970 under `mtime`.
    const head = await s3Client().send(new HeadObjectCommand({ Bucket: bucket, Key: objKey('d/dated.txt') }));
    assert.equal(Number(head.Metadata?.mtime), later.getTime() / 1000);
    const timesOf = async () => {
      const listed = Object.fromEntries((await listAll(f.backend, keyOf('d'))).map((e) => [e.name, e.modified.getTime()]));
      const walked: Record<string, number> = {};
      for await (const w of f.backend.walk(keyOf('d'))) walked[w.path.join('/')] = w.entry.modified.getTime();
      const stat = async (p: string) => (await f.backend.stat(keyOf(`d/${p}`)))?.modified.getTime();
      return { listed, walked, stat: { 'written.txt': await stat('written.txt'), 'dated.txt': await stat('dated.txt') } };
    };
    const expect = (t: Awaited<ReturnType<typeof timesOf>>, why: string) => {
      for (const seen of [t.listed, t.walked, t.stat]) assert.deepEqual([seen['written.txt'], seen['dated.txt']], [when.getTime(), later.getTime()], why);
      assert.ok(Math.abs((t.listed['plain.txt'] ?? 0) - Date.now()) < 120_000, `${why}: a file without a time has the store's`);
    };
    expect(await timesOf(), 'after the writes');
    // The rescan's walk reads the times from the index too, so it leaves them there (no change entry either).
    const cursor = await f.store.changes.latest();
    await f.search.rescanUser('alice');
    expect(await timesOf(), 'after a rescan');
    assert.deepEqual(await f.store.changes.changesSince(cursor, 100), [], 'a rescan journals nothing');
    const opened = await f.backend.read(keyOf('d/dated.txt'));
    await readAll(opened.stream);
    assert.equal(opened.entry.modified.getTime(), later.getTime(), 'a download is dated by the client');

    await f.backend.move(keyOf('d/written.txt'), keyOf('d/renamed.md'), { overwrite: false });
    await f.backend.move(keyOf('d'), keyOf('e'), { overwrite: false });
    const moved = Object.fromEntries((await listAll(f.backend, keyOf('e'))).map((e) => [e.name, e.modified.getTime()]));
    assert.deepEqual([moved['renamed.md'], moved['dated.txt']], [when.getTime(), later.getTime()], 'a rename to another type and a folder move keep the times');
    assert.equal((await f.backend.stat(keyOf('e/renamed.md')))?.modified.getTime(), when.getTime());

    // Other bytes under the name (another tool's PutObject, no metadata): the index's time is no longer this file's.
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: objKey('e/dated.txt'), Body: 'replaced by a tool' }));
    const replaced = (await listAll(f.backend, keyOf('e'))).find((e) => e.name === 'dated.txt');
    assert.ok(replaced && Math.abs(replaced.modified.getTime() - Date.now()) < 120_000, String(replaced?.modified));
    assert.ok(Math.abs(((await f.backend.stat(keyOf('e/dated.txt')))?.modified.getTime() ?? 0) - Date.now()) < 120_000);
  } finally {
    await f.backend.close();
    await f.cleanup();
  }
});
