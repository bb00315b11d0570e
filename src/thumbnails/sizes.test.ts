import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAppError } from '../domain/errors.js';
import { cacheName, mayHaveThumbnail, parseThumbnailSize, thumbnailEtag, thumbnailSource } from './sizes.js';

test('parseThumbnailSize accepts exactly 64, 256 and 1024', () => {
  const table: [unknown, number | undefined | 'bad'][] = [
    [undefined, undefined],
    ['64', 64],
    ['256', 256],
    ['1024', 1024],
    ['128', 'bad'],
    ['0256', 'bad'],
    ['', 'bad'],
    ['256px', 'bad'],
    [' 256', 'bad'],
    ['1e3', 'bad'],
    [['256', '64'], 'bad'],
    ['99999999999', 'bad'],
  ];
  for (const [input, want] of table) {
    if (want === 'bad') {
      assert.throws(() => parseThumbnailSize(input), (e) => isAppError(e) && e.code === 'bad_request', JSON.stringify(input));
    } else {
      assert.equal(parseThumbnailSize(input), want, JSON.stringify(input));
    }
  }
});

test('mayHaveThumbnail goes by the extension, case-insensitively', () => {
  const table: [string, boolean][] = [
    ['a.jpg', true], ['A.JPEG', true], ['x.png', true], ['x.gif', true], ['x.webp', true], ['x.avif', true],
    ['x.tif', true], ['x.TIFF', true], ['drawing.svg', true], ['movie.mp4', true], ['notes.txt', false],
    ['jpg', false], ['.png', false], ['archive.png.zip', false], ['noext', false], ['report.pdf', true], ['.pdf', false],
  ];
  for (const [name, want] of table) assert.equal(mayHaveThumbnail(name), want, name);
});

test('thumbnailSource: images by sharp, PDFs and the video containers ffmpeg may open by their tool, nothing else', () => {
  const table: [string, string | undefined][] = [
    ['a.jpg', 'image'], ['a.SVG', 'image'], ['Report.PDF', 'pdf'], ['a.pdf.txt', undefined],
    ['clip.mp4', 'video'], ['clip.MOV', 'video'], ['clip.m4v', 'video'], ['clip.webm', 'video'], ['clip.mkv', 'video'],
    ['clip.ogv', 'video'], ['clip.avi', 'video'], ['clip.mpg', 'video'], ['clip.wmv', 'video'], ['clip.3gp', 'video'],
    // A TypeScript file and a playlist are not videos, though ffmpeg has formats of those names.
    ['main.ts', undefined], ['list.m3u8', undefined], ['song.mp3', undefined], ['book.epub', undefined], ['mp4', undefined],
  ];
  for (const [name, want] of table) assert.equal(thumbnailSource(name), want, name);
});

test('thumbnail ETags and cache names change with every input and never with nothing', () => {
  const key = { user: 'alice', segments: ['p', 'a.jpg'] };
  const e = thumbnailEtag('"abc"', 256);
  assert.match(e, /^"t256-[A-Za-z0-9_-]{27}"$/);
  assert.equal(thumbnailEtag('"abc"', 256), e);
  assert.notEqual(thumbnailEtag('"abd"', 256), e);
  assert.notEqual(thumbnailEtag('"abc"', 64), thumbnailEtag('"abc"', 256));
  const n = cacheName('file', key, '"abc"', 256);
  assert.match(n, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(cacheName('file', key, '"abc"', 256), n);
  for (const other of [
    cacheName('s3:b/p', key, '"abc"', 256),
    cacheName('file', { user: 'bob', segments: ['p', 'a.jpg'] }, '"abc"', 256),
    cacheName('file', { user: 'alice', segments: ['p', 'b.jpg'] }, '"abc"', 256),
    cacheName('file', { user: 'alice', segments: ['p/a.jpg'] }, '"abc"', 256),
    cacheName('file', key, '"abd"', 256),
    cacheName('file', key, '"abc"', 1024),
  ]) assert.notEqual(other, n);
});
