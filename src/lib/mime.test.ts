import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentTypeFor } from './mime.js';

test('contentTypeFor maps common extensions, case-insensitively, with a charset on text', () => {
  const rows: [string, string][] = [
    ['index.html', 'text/html; charset=utf-8'],
    ['INDEX.HTM', 'text/html; charset=utf-8'],
    ['style.css', 'text/css; charset=utf-8'],
    ['app.js', 'text/javascript; charset=utf-8'],
    ['mod.mjs', 'text/javascript; charset=utf-8'],
    ['data.json', 'application/json; charset=utf-8'],
    ['notes.txt', 'text/plain; charset=utf-8'],
    ['README.md', 'text/markdown; charset=utf-8'],
    ['table.csv', 'text/csv; charset=utf-8'],
    ['feed.xml', 'application/xml; charset=utf-8'],
    ['logo.svg', 'image/svg+xml; charset=utf-8'],
    ['a.png', 'image/png'],
    ['a.JPG', 'image/jpeg'],
    ['a.jpeg', 'image/jpeg'],
    ['a.gif', 'image/gif'],
    ['a.webp', 'image/webp'],
    ['a.avif', 'image/avif'],
    ['favicon.ico', 'image/vnd.microsoft.icon'],
    ['a.bmp', 'image/bmp'],
    ['a.tiff', 'image/tiff'],
    ['doc.pdf', 'application/pdf'],
    ['a.zip', 'application/zip'],
    ['backup.tar.gz', 'application/gzip'],
    ['a.tar', 'application/x-tar'],
    ['a.7z', 'application/x-7z-compressed'],
    ['song.mp3', 'audio/mpeg'],
    ['a.m4a', 'audio/mp4'],
    ['a.ogg', 'audio/ogg'],
    ['a.oga', 'audio/ogg'],
    ['a.opus', 'audio/ogg'],
    ['a.wav', 'audio/wav'],
    ['a.flac', 'audio/flac'],
    ['film.mp4', 'video/mp4'],
    ['a.m4v', 'video/mp4'],
    ['a.webm', 'video/webm'],
    ['a.mkv', 'video/x-matroska'],
    ['a.MOV', 'video/quicktime'],
    ['a.avi', 'video/x-msvideo'],
    ['a.woff', 'font/woff'],
    ['a.woff2', 'font/woff2'],
    ['a.ttf', 'font/ttf'],
    ['a.otf', 'font/otf'],
    ['a.wasm', 'application/wasm'],
    ['dir/sub.d/page.html', 'text/html; charset=utf-8'],
  ];
  for (const [name, want] of rows) assert.equal(contentTypeFor(name), want, name);
});

test('contentTypeFor falls back to application/octet-stream', () => {
  const names = ['noext', 'a.unknownext', '.bashrc', '.png', 'trailing.', '', 'a.constructor', 'a.__proto__', 'a.toString', 'a.hasOwnProperty', 'dir.html/file', 'dir.html\\file'];
  for (const name of names) assert.equal(contentTypeFor(name), 'application/octet-stream', name);
});
