import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWebModule } from '../helpers/web-module.js';
import { mayHaveThumbnail } from '../../src/thumbnails/sizes.js';

/** web/src/api/thumbnails.ts, compiled here: which names the web UI asks a thumbnail for. No browser. */
type Thumbnails = { hasThumbnail(name: string): boolean };

test('the web UI asks a thumbnail for exactly the names the server draws: images, PDFs, videos', async () => {
  const { hasThumbnail } = await loadWebModule<Thumbnails>('api/thumbnails.ts');
  const names = [
    'a.jpg', 'a.JPEG', 'a.jpe', 'a.jfif', 'a.png', 'a.apng', 'a.gif', 'a.webp', 'a.avif', 'a.tif', 'a.tiff', 'a.svg',
    'a.pdf', 'A.PDF', 'a.mp4', 'a.m4v', 'a.mov', 'a.3gp', 'a.webm', 'a.mkv', 'a.ogv', 'a.avi', 'a.mpg', 'a.mpeg', 'a.wmv', 'a.flv',
    'a.txt', 'a.ts', 'a.m3u8', 'a.mp3', 'a.zip', 'a.docx', 'pdf', '.pdf', 'noext',
  ];
  for (const name of names) assert.equal(hasThumbnail(name), mayHaveThumbnail(name), name);
  assert.ok(hasThumbnail('report.pdf') && hasThumbnail('clip.mp4') && !hasThumbnail('notes.txt'));
});
