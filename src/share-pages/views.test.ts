import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deadLinkPage, filePage, folderPage, formatSize, passwordPage, previewKind, uploadPage } from './views.js';
import { uiFor } from '../lib/i18n/ui.js';

const urls = { base: '/files', id: 'ID' };
const EVIL = '<script>alert("x")</script>\'`&';

/** No markup from a name: no tag opened by it, no attribute ended by it. */
function assertNoInjection(page: string) {
  assert.ok(!page.includes('<script>alert'), 'no script tag from a name');
  assert.ok(!page.includes('"x"'), 'no raw quote from a name');
  assert.ok(!/<script(?! nonce="nonce-slot-[0-9a-f]+" src="\/files\/s\/_assets\/share\.js" defer><\/script>)/.test(page), 'the only script is our own file, with the nonce slot');
}

test('previewKind and formatSize', () => {
  const kinds: [string, string | undefined][] = [
    ['a.png', 'image'],
    ['a.JPG', 'image'],
    ['a.svg', 'image'],
    ['a.mp4', 'video'],
    ['a.mp3', 'audio'],
    ['a.pdf', 'pdf'],
    ['a.txt', 'text'],
    ['a.json', 'text'],
    ['a.bin', undefined],
    ['noext', undefined],
  ];
  for (const [name, want] of kinds) assert.equal(previewKind(name), want, name);
  const sizes: [number, string][] = [
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [10 * 1024, '10 KiB'],
    [5 * 1024 ** 3, '5.0 GiB'],
  ];
  for (const [n, want] of sizes) assert.equal(formatSize(n), want);
});

test('every page escapes names and text, and links under the base path', () => {
  const folder = folderPage({ urls, rootName: EVIL, segments: [EVIL], entries: [{ name: EVIL, isFile: true, size: 3, modified: new Date(0) }, { name: `${EVIL}.png`, isFile: true, size: 3, modified: new Date(0) }, { name: EVIL, isFile: false, size: 0, modified: new Date(0) }], preview: true });
  assertNoInjection(folder);
  assert.ok(folder.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&#96;&amp;'));
  assert.ok(folder.includes('href="/files/share/ID/%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E\'%60%26/?zip=1"'.replace("'", '&#39;')));
  assert.ok(folder.includes('href="/files/s/_assets/share.css"'));
  const file = filePage({ urls, rootName: 'r', segments: [EVIL], name: `${EVIL}.txt`, size: 5, preview: true, text: { content: `</pre>${EVIL}`, truncated: true } });
  assertNoInjection(file);
  assert.ok(file.includes('<pre class="text">&lt;/pre&gt;'));
  assert.ok(file.includes('Only the beginning is shown.'));
  const image = filePage({ urls, rootName: 'r', segments: [], name: `${EVIL}.png`, size: 5, preview: true });
  assertNoInjection(image);
  assert.match(image, /<img src="\/files\/share\/ID" alt="&lt;script/);
  const limited = filePage({ urls, rootName: 'r', segments: [], name: 'a.png', size: 5, preview: false });
  assert.ok(!limited.includes('<img'), 'no preview on a limited link: it would count as a download');
  assertNoInjection(passwordPage(urls, { error: EVIL }));
  assertNoInjection(uploadPage({ urls, rootName: EVIL, segments: [EVIL], message: EVIL, error: EVIL }));
  assert.ok(uploadPage({ urls, rootName: 'r', segments: ['a b'] }).includes('action="/files/s/ID/a%20b/"'));
  assert.equal(deadLinkPage('/files'), deadLinkPage('/files'), 'one page, always the same bytes');
});

test('a folder page shows thumbnails of the images the server draws, and its gallery 1024 px ones', () => {
  const at = new Date(0);
  const page = folderPage({
    urls,
    rootName: 'r',
    segments: ['p'],
    entries: [
      { name: 'a b.jpg', isFile: true, size: 3, modified: at },
      { name: 'icon.bmp', isFile: true, size: 3, modified: at },
      { name: 'notes.txt', isFile: true, size: 3, modified: at },
    ],
    preview: true,
  });
  assert.ok(page.includes('<img class="thumb" src="/files/share/ID/p/a%20b.jpg?thumbnail=64" alt="" loading="lazy"'));
  assert.ok(page.includes('data-gallery="/files/share/ID/p/a%20b.jpg?thumbnail=1024"'));
  assert.ok(page.includes('data-gallery="/files/share/ID/p/icon.bmp"'), 'an image the server does not draw is shown as it is');
  assert.equal(page.match(/<img /g)?.length, 1, 'no thumbnail for the BMP or the text file');
  const limited = folderPage({ urls, rootName: 'r', segments: [], entries: [{ name: 'a.jpg', isFile: true, size: 3, modified: at }, { name: 'b.pdf', isFile: true, size: 3, modified: at }], preview: false });
  assert.ok(!limited.includes('thumbnail='), 'no thumbnails on a link with a download limit, as no previews');
});

test('a PDF\'s first page and a video\'s frame lie over the file icon, outside the gallery', () => {
  const at = new Date(0);
  const page = folderPage({
    urls,
    rootName: 'r',
    segments: [],
    entries: ['report.pdf', 'clip.MP4', 'song.mp3'].map((name) => ({ name, isFile: true, size: 3, modified: at })),
    preview: true,
  });
  for (const name of ['report.pdf', 'clip.MP4']) {
    assert.match(page, new RegExp(`<span class="pic"><svg class="icon"[^]*?</svg><img class="thumb" src="/files/share/ID/${name.replace('.', '\\.')}\\?thumbnail=64" alt=""`), name);
  }
  assert.equal(page.match(/<img /g)?.length, 2, 'no thumbnail for the MP3');
  assert.ok(!page.includes('data-gallery'), 'the gallery holds images only');
});

test('a German visitor gets the pages in German, share.js\'s words too', () => {
  const de = { ...urls, ui: uiFor('de') };
  const at = new Date(0);
  const folder = folderPage({ urls: de, rootName: 'Fotos', segments: [], entries: [{ name: 'a.bin', isFile: true, size: 1536, modified: at }, { name: 'Alt', isFile: false, size: 0, modified: at }], preview: true });
  assertNoInjection(folder);
  assert.match(folder, /<html lang="de">/);
  assert.ok(folder.includes('1,5 KiB') && folder.includes('Alles herunterladen (ZIP)') && folder.includes('Geteilt mit File Cloud'));
  const upload = uploadPage({ urls: de, rootName: 'Eingang', segments: [], message: 'ok' });
  assertNoInjection(upload);
  assert.ok(upload.includes('Dateien hochladen nach <span class="name">Eingang</span>'));
  assert.ok(upload.includes('&quot;uploadedMany&quot;:&quot;{n} Dateien hochgeladen.&quot;'), 'share.js is given its messages');
  assert.match(deadLinkPage('/files', uiFor('de')), /Dieser Link ist nicht verfügbar/);
  for (const page of [folder, upload, passwordPage(de)]) assert.doesNotMatch(page, /Download|Upload|Password|This (link|folder)/);
});
