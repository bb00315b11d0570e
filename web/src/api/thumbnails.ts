import type { Segments } from './paths';
import type { ApiClient } from './client';

/** The edge lengths the server draws (docs/api.md, `?thumbnail=`). */
export type ThumbSize = 64 | 256 | 1024;

// The names the server draws (src/thumbnails/sizes.ts): images, a PDF's first page, a video's frame;
// anything else is not asked for.
const DRAWN = new Set([
  ...['jpg', 'jpeg', 'jpe', 'jfif', 'png', 'apng', 'gif', 'webp', 'avif', 'tif', 'tiff', 'svg'],
  'pdf',
  ...['mp4', 'm4v', 'mov', '3gp', 'webm', 'mkv', 'ogv', 'avi', 'mpg', 'mpeg', 'wmv', 'flv'],
]);

export function hasThumbnail(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot > 0 && DRAWN.has(name.slice(dot + 1).toLowerCase());
}

/** At most this many thumbnails load at once, so a grid of photos leaves connections for everything else. */
const PARALLEL = 4;
/** Object URLs kept; the least recently used are revoked beyond this. */
const KEEP = 600;

type Slot = { url: string | null; promise: Promise<string | null> };

/**
 * Loads thumbnails with the signed-in user's token (an <img> cannot send
 * one) into object URLs, a few at a time, and keeps the recent ones, so
 * scrolling back or switching views does not fetch again. The key includes
 * the file's modification time: a changed file gets a new thumbnail. The
 * browser's cache revalidates by ETag (304).
 */
export class ThumbnailLoader {
  private readonly slots = new Map<string, Slot>();
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    private readonly client: ApiClient,
    /** The storage URL of a path of this user. */
    private readonly urlOf: (path: Segments) => string,
  ) {}

  /** The object URL of the thumbnail if it is loaded already (to show it at once, without a flash of the icon). */
  peek(path: Segments, size: ThumbSize, modified: string): string | undefined {
    return this.slots.get(this.key(path, size, modified))?.url ?? undefined;
  }

  /** The thumbnail's object URL, or null when the server has none for this file. */
  load(path: Segments, size: ThumbSize, modified: string): Promise<string | null> {
    const key = this.key(path, size, modified);
    const hit = this.slots.get(key);
    if (hit) {
      this.slots.delete(key);
      this.slots.set(key, hit);
      return hit.promise;
    }
    const slot: Slot = { url: null, promise: Promise.resolve(null) };
    slot.promise = this.limited(() => this.fetchOne(path, size)).then(
      (url) => {
        slot.url = url;
        return url;
      },
      () => {
        // A failure (network, 503 when the server is busy) is not remembered: the next view tries again.
        this.slots.delete(key);
        return null;
      },
    );
    this.slots.set(key, slot);
    this.evict();
    return slot.promise;
  }

  private key(path: Segments, size: ThumbSize, modified: string): string {
    return `${size}\0${modified}\0${path.join('\0')}`;
  }

  private async fetchOne(path: Segments, size: ThumbSize): Promise<string | null> {
    try {
      const res = await this.client.request(`${this.urlOf(path)}?thumbnail=${size}`, { cache: 'no-cache' });
      return URL.createObjectURL(await res.blob());
    } catch (e) {
      if ((e as { status?: number }).status === 404) return null;
      throw e;
    }
  }

  private async limited<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= PARALLEL) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.running--;
    }
  }

  private evict(): void {
    for (const [key, slot] of this.slots) {
      if (this.slots.size <= KEEP) break;
      this.slots.delete(key);
      void slot.promise.then((url) => url && URL.revokeObjectURL(url));
    }
  }
}
