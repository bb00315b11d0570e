import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Real PDF and video files for the thumbnail tests: a PDF written by hand
 * (one page of solid colour), a video made by ffmpeg from its test pattern.
 */

/** Whether ffmpeg and pdftoppm are installed (scripts/test-services.sh installs them), or why not. */
export async function missingMediaTools(): Promise<string | undefined> {
  for (const tool of ['ffmpeg', 'pdftoppm']) {
    try {
      await promisify(execFile)(tool, ['-version']);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return `${tool} is not installed (scripts/test-services.sh installs it)`;
    }
  }
  return undefined;
}

/**
 * A one-page PDF of width × height points: red, with a blue quarter in its
 * lower left corner. The cross-reference table's offsets are counted, so it
 * is a valid file, not one a reader has to repair.
 */
export function pdf(width: number, height: number): Buffer {
  const content = `1 0 0 rg 0 0 ${width} ${height} re f 0 0 1 rg 0 0 ${width / 2} ${height / 2} re f`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Contents 4 0 R /Resources << >> >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/**
 * A one-second H.264 MP4 of ffmpeg's colour-bar test pattern, width ×
 * height, with its index (moov) at the end as ffmpeg writes it by default:
 * the layout that cannot be read from a pipe.
 */
export async function video(width: number, height: number, ext = 'mp4'): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-video-'));
  try {
    const file = join(dir, `v.${ext}`);
    await promisify(execFile)('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=10`, '-t', '1', '-pix_fmt', 'yuv420p', file]);
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bytes that are no file format at all (a fixed pattern, so a failure can be reproduced). */
export function garbage(length: number): Buffer {
  const b = Buffer.alloc(length);
  let x = 2463534242;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
