import { createHash } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';

/** The edge lengths a client may ask for (CONTRACT "Search, thumbnails, usage"). */
export const THUMBNAIL_SIZES = [64, 256, 1024] as const;
export type ThumbnailSize = (typeof THUMBNAIL_SIZES)[number];

/**
 * Bumped whenever the rendering changes (quality, sizes, rotation rule), so
 * cached thumbnails and the ETags clients hold are not reused across it.
 */
export const RENDER_VERSION = 1;

/** `?thumbnail=` as a size; undefined when the parameter is absent; anything else is a 400. */
export function parseThumbnailSize(value: unknown): ThumbnailSize | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && /^[1-9][0-9]{0,4}$/.test(value) ? Number(value) : NaN;
  const size = THUMBNAIL_SIZES.find((s) => s === n);
  if (size === undefined) throw new AppError('bad_request', `thumbnail must be one of ${THUMBNAIL_SIZES.join(', ')}.`);
  return size;
}

// By name first, so an archive is never read just to find out it is no image; the decoder
// (DECODABLE in render.ts) or the tool (media-frame.ts) then checks the bytes themselves.
const KINDS: ReadonlyMap<string, ThumbnailSource> = new Map([
  ...['jpg', 'jpeg', 'jpe', 'jfif', 'png', 'apng', 'gif', 'webp', 'avif', 'tif', 'tiff', 'svg'].map((e) => [e, 'image'] as const),
  ['pdf', 'pdf'],
  // The containers ffmpeg is allowed to open (VIDEO_CONTAINERS in media-frame.ts).
  ...['mp4', 'm4v', 'mov', '3gp', 'webm', 'mkv', 'ogv', 'avi', 'mpg', 'mpeg', 'wmv', 'flv'].map((e) => [e, 'video'] as const),
]);

/** What a thumbnail is drawn from: an image (by sharp), a PDF's first page or a video's frame (by a tool). */
export type ThumbnailSource = 'image' | 'pdf' | 'video';

/** What a file of this name would be drawn from, or undefined when it has no thumbnail. */
export function thumbnailSource(name: string): ThumbnailSource | undefined {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? KINDS.get(name.slice(dot + 1).toLowerCase()) : undefined;
}

/** Whether a file of this name may have a thumbnail. */
export function mayHaveThumbnail(name: string): boolean {
  return thumbnailSource(name) !== undefined;
}

const digest = (parts: readonly unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url');

/** The thumbnail's ETag: changes with the content's ETag, the size asked for and the renderer. */
export function thumbnailEtag(contentEtag: string, size: ThumbnailSize): string {
  return `"t${size}-${digest([RENDER_VERSION, contentEtag, size]).slice(0, 27)}"`;
}

/**
 * The cache file's name. It hashes where the file lives (storage namespace,
 * user, path) with its content ETag and size, so a cached thumbnail is only
 * ever served for the very file it was drawn from: an ETag alone is not
 * proof of equal bytes (the local backend's is inode-size-mtime, and an
 * S3 ETag is an MD5 that can be made to collide), and a path alone would
 * outlive the content. Nothing a user sees or sends names a cache file.
 */
export function cacheName(namespace: string, key: StorageKey, contentEtag: string, size: ThumbnailSize): string {
  return digest([RENDER_VERSION, namespace, key.user, key.segments, contentEtag, size]).slice(0, 43);
}
