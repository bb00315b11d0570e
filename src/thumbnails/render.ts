import type { Readable } from 'node:stream';
import type { Metadata } from 'sharp';
import type { ThumbnailSize } from './sizes.js';

type SharpModule = typeof import('sharp');
let sharpModule: Promise<SharpModule['default']> | undefined;

/**
 * libvips is loaded on the first thumbnail, not at startup: it adds memory
 * and start-up time to every serving process, most of which never draws one
 * (docs/performance.md "Memory"). Its operation cache is off: every
 * thumbnail is of a different image, so the cache would only hold memory.
 */
function loadSharp(): Promise<SharpModule['default']> {
  return (sharpModule ??= import('sharp').then((m) => {
    m.default.cache(false);
    return m.default;
  }));
}

/** What the decoder recognised in the bytes; anything else is not drawn, whatever its name. */
const DECODABLE: ReadonlySet<string> = new Set(['jpeg', 'png', 'gif', 'webp', 'heif', 'tiff', 'svg']);
/** heif covers AVIF only in sharp's prebuilt libvips (no HEVC decoder): the compression is checked too. */
const HEIF_COMPRESSIONS: ReadonlySet<string> = new Set(['av1']);

/** The input is not an image we draw: unknown format, corrupt, too big. */
export class NotDrawable extends Error {}

export type RenderLimits = {
  /** Bytes of the source read at most; a bigger file is not drawn. */
  readonly maxInputBytes: number;
  /** Pixels (width × height of the first frame) decoded at most: decompression bombs are refused from the header. */
  readonly maxInputPixels: number;
};

/**
 * Reads a stream into one buffer, refusing past `max` bytes (and destroying
 * the stream, so an S3 body is not drained). libvips needs the encoded image
 * whole; the cap bounds memory per thumbnail in the pool.
 */
export async function readCapped(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      total += (chunk as Buffer).length;
      if (total > max) throw new NotDrawable(`the file is larger than ${max} bytes`);
      chunks.push(chunk as Buffer);
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks, total);
}

/**
 * A WebP thumbnail that fits in size × size, never enlarged: the first frame
 * of an animation, EXIF orientation applied, no metadata kept (sharp writes
 * none unless asked). SVG is rasterized by librsvg from a buffer, which has
 * no base URL, so it loads no external file or URL and runs no script.
 */
export async function renderThumbnail(input: Buffer, size: ThumbnailSize, limits: RenderLimits): Promise<Buffer> {
  const sharp = await loadSharp();
  const options = { limitInputPixels: limits.maxInputPixels, failOn: 'error' as const, pages: 1, page: 0 };
  let meta: Metadata;
  try {
    meta = await sharp(input, options).metadata();
  } catch (e) {
    throw new NotDrawable('not an image the decoder reads', { cause: e });
  }
  if (!meta.format || !DECODABLE.has(meta.format)) throw new NotDrawable(`format ${meta.format ?? 'unknown'} is not drawn`);
  if (meta.format === 'heif' && !HEIF_COMPRESSIONS.has(meta.compression ?? '')) throw new NotDrawable('HEIF other than AVIF is not drawn');
  const frameHeight = meta.pageHeight ?? meta.height ?? 0;
  if (!meta.width || !frameHeight || meta.width * frameHeight > limits.maxInputPixels) throw new NotDrawable('the image has too many pixels');
  try {
    return await sharp(input, options)
      .rotate()
      .resize(size, size, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: size <= 64 ? 70 : 80, effort: 2 })
      .toBuffer();
  } catch (e) {
    throw new NotDrawable('the image could not be decoded', { cause: e });
  }
}
