import { deflateSync, crc32 } from 'node:zlib';
import sharp from 'sharp';

/**
 * Real image files for the thumbnail tests, made by libvips (sharp) in the
 * test itself, and one made by hand: a PNG "decompression bomb".
 */
const solid = (width: number, height: number, rgb: { r: number; g: number; b: number }) =>
  sharp({ create: { width, height, channels: 3, background: rgb } });

export const RED = { r: 255, g: 0, b: 0 };
export const BLUE = { r: 0, g: 0, b: 255 };

/** A 400 × 200 JPEG whose EXIF says "rotate 90° clockwise" (orientation 6), so it shows 200 × 400. */
export const jpegOrientation6 = () => solid(400, 200, RED).withMetadata({ orientation: 6 }).jpeg().toBuffer();

/** A plain JPEG of the given size and colour. */
export const jpeg = (width: number, height: number, rgb = RED) => solid(width, height, rgb).jpeg().toBuffer();

/** A 300 × 300 PNG: a red square in the middle, transparent around it. */
export const pngWithAlpha = () =>
  sharp({ create: { width: 300, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: { create: { width: 100, height: 100, channels: 4, background: { ...RED, alpha: 1 } } }, left: 100, top: 100 }])
    .png()
    .toBuffer();

/** A two-frame animated GIF, 80 × 60: red, then blue. */
export async function animatedGif(): Promise<Buffer> {
  const frames = await Promise.all([RED, BLUE].map((c) => solid(80, 60, c).png().toBuffer()));
  return sharp(frames, { join: { animated: true } }).gif({ delay: [100, 100], loop: 0 }).toBuffer();
}

export const webp = () => solid(120, 90, RED).webp().toBuffer();
export const avif = () => solid(120, 90, RED).avif({ effort: 0 }).toBuffer();
export const tiff = () => solid(120, 90, RED).tiff().toBuffer();

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/**
 * A valid 1-bit grayscale PNG of width × height, all black: 20 000 × 20 000
 * (400 megapixels) is about 50 KB on disk and 1.2 GB as RGB pixels.
 */
export function pngBomb(width = 20_000, height = 20_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  const rows = Buffer.alloc((1 + Math.ceil(width / 8)) * height);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(rows, { level: 9 })), pngChunk('IEND', Buffer.alloc(0))]);
}

/** An SVG that would fetch `url` (as <image href> and xlink:href, and by a script) if a renderer followed external references. */
export const svgWithExternalImage = (url: string) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100">` +
      `<rect width="200" height="100" fill="#00ff00"/>` +
      `<image href="${url}/x.png" x="0" y="0" width="100" height="100"/>` +
      `<image xlink:href="${url}/y.png" x="100" y="0" width="100" height="100"/>` +
      `<script>fetch("${url}/script")</script>` +
      `<style>@import url("${url}/style.css");</style>` +
      `</svg>`,
  );

/** Width, height, format, frames and whether EXIF is present, as the decoder reads them. */
export async function describe(data: Buffer) {
  const m = await sharp(data, { animated: true }).metadata();
  return { width: m.width, height: m.pageHeight ?? m.height, format: m.format, pages: m.pages ?? 1, exif: m.exif !== undefined, hasAlpha: m.hasAlpha };
}

/** The RGBA pixel at (x, y). */
export async function pixel(data: Buffer, x: number, y: number): Promise<number[]> {
  const { data: raw, info } = await sharp(data).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * 4;
  return [...raw.subarray(i, i + 4)];
}
