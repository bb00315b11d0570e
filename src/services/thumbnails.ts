import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import { QueueFullError, Semaphore } from '../lib/semaphore.js';
import type { Entry, StorageBackend } from '../storage/backend.js';
import { createDiskCache, type Outcome } from '../thumbnails/disk-cache.js';
import { NotDrawable, readCapped, renderThumbnail, type RenderLimits } from '../thumbnails/render.js';
import { cacheName, mayHaveThumbnail, thumbnailEtag, type ThumbnailSize } from '../thumbnails/sizes.js';
import { storageCall } from './storage-errors.js';

export type ThumbnailOptions = RenderLimits & {
  /** data/cache/thumbnails: this node's cache, whatever the storage backend. */
  readonly cacheDir: string;
  /** Names the storage (file, or the S3 bucket and prefix), so one cache never serves another storage's file. */
  readonly namespace: string;
  /** Thumbnails drawn at once in this process. */
  readonly concurrency: number;
  /** Requests waiting for a slot at most; beyond that 503 + Retry-After. */
  readonly maxQueue: number;
  /** Cache size kept by prune(). */
  readonly cacheMaxBytes: number;
};

export const DEFAULT_THUMBNAIL_LIMITS = {
  maxInputBytes: 64 * 1024 * 1024,
  maxInputPixels: 100_000_000,
  maxQueue: 256,
  cacheMaxBytes: 1024 * 1024 * 1024,
} as const;

export type Thumbnail = { readonly data: Buffer; readonly etag: string; readonly outcome: Outcome };

const noThumbnail = () => new AppError('no_thumbnail', 'There is no thumbnail for this file: it is not an image File Cloud can draw.');

export type ThumbnailService = ReturnType<typeof createThumbnailService>;

/**
 * Thumbnails of users' images (CONTRACT "Search, thumbnails, usage"): read
 * from the storage seam, drawn by libvips (sharp) in a bounded pool, cached
 * on this node's disk by file identity and content ETag, so a changed file
 * gets a new thumbnail and a folder of 5 000 photos queues rather than
 * starving the server. Knows no HTTP.
 */
export function createThumbnailService(deps: { backend: StorageBackend; options: ThumbnailOptions }) {
  const { backend, options } = deps;
  const cache = createDiskCache(options.cacheDir);
  const pool = new Semaphore(Math.max(1, options.concurrency), options.maxQueue);

  /** The ETag the thumbnail of this version of the file has, known without drawing it (for 304). */
  const etagFor = (entry: Entry, size: ThumbnailSize) => thumbnailEtag(entry.etag, size);

  async function draw(key: StorageKey, entry: Entry, size: ThumbnailSize) {
    const opened = await storageCall(() => backend.read(key));
    if (opened.entry.etag !== entry.etag) {
      // Replaced since the stat: this cache name is for the old bytes, which are gone.
      opened.stream.destroy();
      throw new AppError('unavailable', 'The file changed while its thumbnail was being drawn; try again.', { headers: { 'retry-after': '1' } });
    }
    // The one place a user's file is held whole: libvips decodes an encoded image from one buffer (a
    // stream piped into sharp is buffered the same way). Bounded: files over maxInputBytes are refused
    // before this, and the read happens inside a pool slot, so at most maxInputBytes × the pool's size.
    const input = await readCapped(opened.stream, options.maxInputBytes);
    return renderThumbnail(input, size, options);
  }

  return {
    etagFor,

    /**
     * The WebP thumbnail of the file `entry` describes. `no_thumbnail` for a
     * folder, a name that is no image, or bytes that are not a drawable
     * image (unknown, corrupt, over the byte or pixel limit: remembered, so
     * they are not decoded again); `unavailable` (503) when the pool's queue
     * is full.
     */
    async get(key: StorageKey, entry: Entry, size: ThumbnailSize): Promise<Thumbnail> {
      if (!entry.isFile || !mayHaveThumbnail(entry.name)) throw noThumbnail();
      if (entry.size > options.maxInputBytes) throw noThumbnail();
      const name = cacheName(options.namespace, key, entry.etag, size);
      let result;
      try {
        result = await cache.get(name, async () => {
          try {
            return { kind: 'image', data: await pool.run(() => draw(key, entry, size)) };
          } catch (e) {
            if (e instanceof NotDrawable) return { kind: 'none' };
            throw e;
          }
        });
      } catch (e) {
        if (e instanceof QueueFullError) {
          throw new AppError('unavailable', 'Too many thumbnails are being drawn; try again shortly.', { headers: { 'retry-after': '2' } });
        }
        throw e;
      }
      if (result.value.kind === 'none') throw noThumbnail();
      return { data: result.value.data, etag: etagFor(entry, size), outcome: result.outcome };
    },

    /** Trims the cache to its size limit (the oldest drawn go first). */
    prune: () => cache.prune(options.cacheMaxBytes),
  };
}
