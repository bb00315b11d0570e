import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import { QueueFullError, Semaphore } from '../lib/semaphore.js';
import type { Entry, StorageBackend } from '../storage/backend.js';
import { createDiskCache, type Outcome } from '../thumbnails/disk-cache.js';
import { drawMediaFrame } from '../thumbnails/draw-media.js';
import { TOOL_OF } from '../thumbnails/media-frame.js';
import { NotDrawable, readCapped, renderThumbnail, type RenderLimits } from '../thumbnails/render.js';
import { ToolMissing } from '../thumbnails/run-tool.js';
import { cacheName, thumbnailEtag, thumbnailSource, type ThumbnailSize, type ThumbnailSource } from '../thumbnails/sizes.js';
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
  /** data/tmp: where a PDF or video is copied for the tool that draws it. */
  readonly stagingDir: string;
  /** Bytes of a PDF or video copied at most (to disk, not memory); a bigger one gets no thumbnail. */
  readonly maxMediaBytes: number;
  /** Time pdftoppm or ffmpeg may run for one thumbnail before it is killed. */
  readonly toolTimeoutMs: number;
  /** The program names, here so a node without one can be tried (defaults: TOOL_OF). */
  readonly tools?: Partial<Record<'pdf' | 'video', string>>;
};

export const DEFAULT_THUMBNAIL_LIMITS = {
  maxInputBytes: 64 * 1024 * 1024,
  maxInputPixels: 100_000_000,
  maxQueue: 256,
  cacheMaxBytes: 1024 * 1024 * 1024,
  maxMediaBytes: 1024 * 1024 * 1024,
  toolTimeoutMs: 15_000,
} as const;

export type Thumbnail = { readonly data: Buffer; readonly etag: string; readonly outcome: Outcome };

/** The one refusal for a file without a thumbnail, whatever the reason (the reason is not the client's to know). */
export const noThumbnail = () => new AppError('no_thumbnail', 'There is no thumbnail for this file: it is not an image, PDF or video File Cloud can draw.');

export type ThumbnailService = ReturnType<typeof createThumbnailService>;

/**
 * Thumbnails of users' images, PDFs and videos (CONTRACT "Search,
 * thumbnails, usage"): read from the storage seam, drawn by libvips (sharp)
 * in a bounded pool (a PDF's first page or a video's frame first drawn by
 * pdftoppm or ffmpeg, in the same pool slot), cached
 * on this node's disk by file identity and content ETag, so a changed file
 * gets a new thumbnail and a folder of 5 000 photos queues rather than
 * starving the server. Knows no HTTP.
 */
export function createThumbnailService(deps: {
  backend: StorageBackend;
  options: ThumbnailOptions;
  /** Told once per tool that is not installed; its kind then gets no thumbnail (the UI's icon) until restart. */
  onToolMissing?: (tool: string) => void;
}) {
  const { backend, options } = deps;
  const toolOf = (kind: 'pdf' | 'video') => options.tools?.[kind] ?? TOOL_OF[kind];
  /** Tools found missing in this process: not tried again, and not remembered in the shared cache (another node may have them). */
  const missingTools = new Set<string>();
  const maxBytes = (source: ThumbnailSource) => (source === 'image' ? options.maxInputBytes : options.maxMediaBytes);
  const cache = createDiskCache(options.cacheDir);
  const pool = new Semaphore(Math.max(1, options.concurrency), options.maxQueue);

  /** The ETag the thumbnail of this version of the file has, known without drawing it (for 304). */
  const etagFor = (entry: Entry, size: ThumbnailSize) => thumbnailEtag(entry.etag, size);

  async function draw(key: StorageKey, entry: Entry, size: ThumbnailSize, source: ThumbnailSource) {
    const opened = await storageCall(() => backend.read(key));
    if (opened.entry.etag !== entry.etag) {
      // Replaced since the stat: this cache name is for the old bytes, which are gone.
      opened.stream.destroy();
      throw new AppError('unavailable', 'The file changed while its thumbnail was being drawn; try again.', { headers: { 'retry-after': '1' } });
    }
    if (source !== 'image') {
      const frame = await drawMediaFrame(source, opened.stream, size, {
        stagingDir: options.stagingDir, maxBytes: options.maxMediaBytes, maxPixels: options.maxInputPixels, timeoutMs: options.toolTimeoutMs, tool: toolOf(source),
      });
      return renderThumbnail(frame, size, options);
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
     * folder, a name that is no image, PDF or video, bytes that are not
     * drawable (unknown, corrupt, over the byte, pixel or time limit:
     * remembered, so they are not decoded again), or a PDF or video whose
     * tool is not installed (not remembered); `unavailable` (503) when the
     * pool's queue is full.
     */
    async get(key: StorageKey, entry: Entry, size: ThumbnailSize): Promise<Thumbnail> {
      const source = entry.isFile ? thumbnailSource(entry.name) : undefined;
      if (!source || entry.size > maxBytes(source)) throw noThumbnail();
      if (source !== 'image' && missingTools.has(toolOf(source))) throw noThumbnail();
      const name = cacheName(options.namespace, key, entry.etag, size);
      let result;
      try {
        result = await cache.get(name, async () => {
          try {
            return { kind: 'image', data: await pool.run(() => draw(key, entry, size, source)) };
          } catch (e) {
            if (e instanceof NotDrawable) return { kind: 'none' };
            throw e;
          }
        });
      } catch (e) {
        if (e instanceof ToolMissing) {
          if (!missingTools.has(e.tool)) deps.onToolMissing?.(e.tool);
          missingTools.add(e.tool);
          throw noThumbnail();
        }
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
