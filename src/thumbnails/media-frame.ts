import type { ThumbnailSize } from './sizes.js';

/** Files that are not images but whose thumbnail is a picture a tool draws from them. */
export type MediaKind = 'pdf' | 'video';

/** The program each kind needs: poppler-utils' pdftoppm, ffmpeg (Debian packages of the same names). */
export const TOOL_OF: Readonly<Record<MediaKind, string>> = { pdf: 'pdftoppm', video: 'ffmpeg' };

/**
 * The demuxers ffmpeg may use: the containers of the video names in
 * sizes.ts. Without this list ffmpeg probes the bytes for any of its
 * formats, and some read other files or URLs the input names (an HLS or
 * concat playlist); with it, a file that is none of these is refused.
 */
const VIDEO_CONTAINERS = ['mov', 'matroska', 'avi', 'ogg', 'mpeg', 'asf', 'flv'];

/**
 * The command line that draws the first page of a PDF or a frame of a video
 * as a PNG on stdout, at most size × size (the tool scales; sharp then
 * encodes it as images are). `file` is the staged copy of the user's file.
 * Pure: the rules about what the tools may do are here, table-tested.
 */
export function frameCommand(kind: MediaKind, file: string, size: ThumbnailSize, maxPixels: number, command = TOOL_OF[kind]): { command: string; args: string[] } {
  if (kind === 'pdf') {
    // -scale-to fixes the long side in pixels whatever the page's size, so a page declared
    // kilometres wide is drawn as small as any other.
    return { command, args: ['-png', '-f', '1', '-l', '1', '-singlefile', '-scale-to', String(size), file] };
  }
  return {
    command,
    args: [
      '-hide_banner', '-nostdin', '-loglevel', 'error',
      '-protocol_whitelist', 'file',
      '-format_whitelist', VIDEO_CONTAINERS.join(','),
      // The decoder refuses a frame over the pixel limit before allocating it, as sharp does for images.
      '-max_pixels', String(maxPixels),
      // One decoding thread: the pool counts one slot a CPU, as for sharp's images.
      '-threads', '1',
      '-i', `file:${file}`,
      '-map', '0:v:0', '-frames:v', '1',
      '-vf', `scale='min(iw,${size})':'min(ih,${size})':force_original_aspect_ratio=decrease`,
      '-f', 'image2pipe', '-c:v', 'png', 'pipe:1',
    ],
  };
}
