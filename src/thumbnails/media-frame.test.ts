import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frameCommand, TOOL_OF } from './media-frame.js';

const after = (args: readonly string[], flag: string) => args[args.indexOf(flag) + 1];

test('a PDF is drawn by pdftoppm: its first page only, the long side at the size asked', () => {
  for (const size of [64, 256, 1024] as const) {
    const { command, args } = frameCommand('pdf', '/data/tmp/thumbnail-x', size, 1e8);
    assert.equal(command, 'pdftoppm');
    assert.deepEqual([after(args, '-f'), after(args, '-l'), after(args, '-scale-to')], ['1', '1', String(size)]);
    assert.ok(args.includes('-png') && args.includes('-singlefile'));
    assert.equal(args.at(-1), '/data/tmp/thumbnail-x', 'the file last, and no output root: the picture goes to stdout');
  }
});

test('a video is drawn by ffmpeg: one frame, local file only, video containers only, the pixel limit, PNG on stdout', () => {
  const { command, args } = frameCommand('video', '/data/tmp/thumbnail-y', 256, 12345);
  assert.equal(command, 'ffmpeg');
  const table: [string, string][] = [
    ['-protocol_whitelist', 'file'],
    ['-format_whitelist', 'mov,matroska,avi,ogg,mpeg,asf,flv'],
    ['-max_pixels', '12345'],
    ['-threads', '1'],
    ['-i', 'file:/data/tmp/thumbnail-y'],
    ['-map', '0:v:0'],
    ['-frames:v', '1'],
    ['-vf', "scale='min(iw,256)':'min(ih,256)':force_original_aspect_ratio=decrease"],
    ['-f', 'image2pipe'],
    ['-c:v', 'png'],
  ];
  for (const [flag, want] of table) assert.equal(after(args, flag), want, flag);
  assert.ok(args.includes('-nostdin'), 'never reads the terminal');
  assert.ok(args.indexOf('-format_whitelist') < args.indexOf('-i') && args.indexOf('-max_pixels') < args.indexOf('-i') && args.indexOf('-threads') < args.indexOf('-i'), 'input options come before the input');
  assert.equal(args.at(-1), 'pipe:1');
});

test('the program can be named, for a node where it lives elsewhere', () => {
  assert.equal(frameCommand('pdf', '/f', 64, 1, '/opt/pdftoppm').command, '/opt/pdftoppm');
  assert.deepEqual(TOOL_OF, { pdf: 'pdftoppm', video: 'ffmpeg' });
});
