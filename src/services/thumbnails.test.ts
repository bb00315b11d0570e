import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { isAppError } from '../domain/errors.js';
import { parseDecodedStoragePath } from '../domain/storage-path.js';
import { leasingIn } from '../storage/conformance/index.test-suite.js';
import { createLocalBackend } from '../storage/local/local-backend.js';
import type { StorageBackend } from '../storage/backend.js';
import { cacheName } from '../thumbnails/sizes.js';
import { createThumbnailService, DEFAULT_THUMBNAIL_LIMITS, type ThumbnailOptions } from './thumbnails.js';
import { missingMediaTools, video } from '../../test/helpers/media.js';

async function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const dir = await mkdtemp(join(tmpdir(), 'fc-thumbs-'));
  await mkdir(join(dir, 'storage'));
  await mkdir(join(dir, 'tmp'));
  const leasing = await leasingIn(dir);
  const backend = createLocalBackend({ storageDir: join(dir, 'storage'), tmpDir: join(dir, 'tmp') }, leasing);
  await backend.init();
  t.after(async () => {
    await backend.close();
    await leasing.close();
    await rm(dir, { recursive: true, force: true });
  });
  const options = (o: Partial<ThumbnailOptions> = {}): ThumbnailOptions => ({
    ...DEFAULT_THUMBNAIL_LIMITS,
    cacheDir: join(dir, 'cache', 'thumbnails'),
    namespace: 'file',
    concurrency: 1,
    stagingDir: join(dir, 'tmp'),
    ...o,
  });
  const put = async (name: string, width: number, height: number) => {
    const data = await sharp({ create: { width, height, channels: 3, background: { r: 9, g: 99, b: 199 } } }).jpeg().toBuffer();
    return putBytes(name, data);
  };
  const putBytes = async (name: string, data: Buffer) => {
    const key = parseDecodedStoragePath(`alice/${name}`).key;
    await backend.write(key, Readable.from([data]), { ifExists: 'replace' });
    return { key, entry: (await backend.stat(key))! };
  };
  return { dir, backend, options, put, putBytes };
}

const service = (backend: StorageBackend, options: ThumbnailOptions) => createThumbnailService({ backend, options });

test('a full queue answers 503 unavailable with Retry-After instead of piling up', async (t) => {
  const { backend, options, put } = await setup(t);
  const thumbs = service(backend, options({ concurrency: 1, maxQueue: 1 }));
  // Eight at once against one slot and one queue place: the first draws for tens of milliseconds,
  // while the others arrive within a few, so some must be refused.
  const files = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((i) => put(`p${i}.jpg`, 4000, 3000)));
  const results = await Promise.allSettled(files.map((f) => thumbs.get(f.key, f.entry, 256)));
  const refused = results.filter((r) => r.status === 'rejected');
  assert.ok(results.filter((r) => r.status === 'fulfilled').length >= 2, 'one drawing, one waiting');
  assert.ok(refused.length >= 1, 'the rest refused');
  for (const r of refused) {
    const e = (r as PromiseRejectedResult).reason;
    assert.ok(isAppError(e) && e.code === 'unavailable' && e.status === 503 && e.headers['retry-after'] === '2', String(e));
  }
  // Nothing was remembered for the refused ones: they are drawn when asked again.
  const i = results.findIndex((r) => r.status === 'rejected');
  const again = await thumbs.get(files[i]!.key, files[i]!.entry, 256);
  assert.equal(again.outcome, 'generated');
});

test('two processes on one cache directory draw a thumbnail once between them (the lock file)', async (t) => {
  const { backend, options, put } = await setup(t);
  // Two services = two single-flight maps, as two worker processes have; they share only the directory.
  const a = service(backend, options({ concurrency: 2 }));
  const b = service(backend, options({ concurrency: 2 }));
  const f = await put('shared.jpg', 2400, 1600);
  const got = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).get(f.key, f.entry, 1024)));
  assert.equal(got.filter((g) => g.outcome === 'generated').length, 1, got.map((g) => g.outcome).join(' '));
  for (const g of got) assert.ok(g.data.equals(got[0]!.data));
});

test('a lock left by a killed process is taken over once stale; a fresh one is waited for', async (t) => {
  const { backend, options, put } = await setup(t);
  const opts = options();
  const f = await put('locked.jpg', 300, 200);
  const name = cacheName('file', f.key, f.entry.etag, 64);
  const lock = join(opts.cacheDir, name.slice(0, 2), `${name}.lock`);
  await mkdir(join(opts.cacheDir, name.slice(0, 2)), { recursive: true });
  await writeFile(lock, '999999');
  const old = new Date(Date.now() - 10 * 60_000);
  await utimes(lock, old, old);
  const got = await service(backend, opts).get(f.key, f.entry, 64);
  assert.equal(got.outcome, 'generated');
  assert.deepEqual((await readdir(join(opts.cacheDir, name.slice(0, 2)))).sort(), [`${name}.webp`]);
});

test('prune keeps the cache under its limit, oldest first', async (t) => {
  const { backend, options, put } = await setup(t);
  const opts = options({ cacheMaxBytes: 1 });
  const thumbs = service(backend, opts);
  const f = await put('a.jpg', 500, 500);
  await thumbs.get(f.key, f.entry, 64);
  await thumbs.get(f.key, f.entry, 256);
  const before = await thumbs.prune();
  assert.equal(before.removed, 2);
  assert.equal(before.bytes, 0);
  assert.equal((await thumbs.get(f.key, f.entry, 64)).outcome, 'generated');
});

const noThumbnail = (e: unknown) => isAppError(e) && e.code === 'no_thumbnail';
const mediaSkip = { skip: await missingMediaTools() };

test('a missing tool gives no thumbnail, is told once, is not tried again and is not remembered in the cache', mediaSkip, async (t) => {
  const { dir, backend, options, putBytes } = await setup(t);
  const told: string[] = [];
  const missing = join(dir, 'no-such-ffmpeg');
  const thumbs = createThumbnailService({ backend, options: options({ tools: { video: missing } }), onToolMissing: (tool) => told.push(tool) });
  const f = await putBytes('clip.mp4', await video(160, 120));
  for (let i = 0; i < 3; i++) await assert.rejects(thumbs.get(f.key, f.entry, 64), noThumbnail);
  assert.deepEqual(told, [missing]);
  assert.deepEqual(await readdir(join(dir, 'tmp')), [], 'the staged copy is removed');
  // A node that has the tool (same cache directory) draws it: the refusal was not cached.
  const drawn = await service(backend, options()).get(f.key, f.entry, 64);
  assert.equal(drawn.outcome, 'generated');
});

test('a video frame over the pixel limit, or a tool past its time limit, gives no thumbnail and leaves no copy', mediaSkip, async (t) => {
  const { dir, backend, options, putBytes } = await setup(t);
  const f = await putBytes('clip.mp4', await video(320, 240));
  await assert.rejects(service(backend, options({ maxInputPixels: 320 * 240 - 1 })).get(f.key, f.entry, 64), noThumbnail);
  const g = await putBytes('clip2.mp4', await video(320, 240));
  // No ffmpeg starts, reads a video and writes a frame within a millisecond: it is killed.
  const started = Date.now();
  await assert.rejects(service(backend, options({ toolTimeoutMs: 1 })).get(g.key, g.entry, 64), noThumbnail);
  assert.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
  assert.deepEqual(await readdir(join(dir, 'tmp')), [], 'the staged copies are removed');
});

test('a video over the media byte limit is not read at all', mediaSkip, async (t) => {
  const { backend, options, putBytes } = await setup(t);
  const data = await video(160, 120);
  const f = await putBytes('clip.mp4', data);
  await assert.rejects(service(backend, options({ maxMediaBytes: data.length - 1 })).get(f.key, f.entry, 64), noThumbnail);
  assert.equal((await service(backend, options({ maxMediaBytes: data.length })).get(f.key, f.entry, 64)).outcome, 'generated');
});
