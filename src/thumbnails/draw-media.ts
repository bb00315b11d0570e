import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { frameCommand, type MediaKind } from './media-frame.js';
import { NotDrawable } from './render.js';
import { runTool, ToolFailed } from './run-tool.js';
import type { ThumbnailSize } from './sizes.js';

export type MediaOptions = {
  /** Where the copy the tool reads is staged (data/tmp: on the same disk, cleared at start-up). */
  readonly stagingDir: string;
  /** Bytes of the source copied at most; a bigger file is not drawn. */
  readonly maxBytes: number;
  /** Pixels of a video frame decoded at most. */
  readonly maxPixels: number;
  /** Time the tool may run before it is killed. */
  readonly timeoutMs: number;
  /** The program to run instead of TOOL_OF's. */
  readonly tool?: string;
};

/** A PNG of 1024 × 1024 RGBA is 4 MiB before compression: more than this is not a thumbnail. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** Passes bytes through until `max`, then fails: the copy never grows past the limit, whatever the entry said. */
function capped(max: number): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      total += chunk.length;
      if (total > max) done(new NotDrawable(`the file is larger than ${max} bytes`));
      else done(null, chunk);
    },
  });
}

/**
 * The first page of a PDF or a frame of a video, as a PNG at most size ×
 * size. The file's bytes come from the storage seam (so S3 and encryption
 * at rest work) and are staged to a private file first: a PDF's index and
 * often an MP4's are at the end of the file, which a tool reading a pipe
 * cannot reach. The copy is removed whatever happens. A file the tool
 * cannot draw, or one it takes too long on, is NotDrawable; a missing tool
 * is ToolMissing, for the caller to tell apart.
 */
export async function drawMediaFrame(kind: MediaKind, source: Readable, size: ThumbnailSize, limits: MediaOptions): Promise<Buffer> {
  const staged = join(limits.stagingDir, `thumbnail-${randomBytes(12).toString('hex')}`);
  try {
    try {
      await pipeline(source, capped(limits.maxBytes), createWriteStream(staged, { flags: 'wx', mode: 0o600 }));
    } finally {
      source.destroy();
    }
    const { command, args } = frameCommand(kind, staged, size, limits.maxPixels, limits.tool);
    try {
      return await runTool(command, args, { timeoutMs: limits.timeoutMs, maxOutputBytes: MAX_OUTPUT_BYTES });
    } catch (e) {
      if (e instanceof ToolFailed) throw new NotDrawable(`the ${kind} could not be drawn`, { cause: e });
      throw e;
    }
  } finally {
    await rm(staged, { force: true });
  }
}
