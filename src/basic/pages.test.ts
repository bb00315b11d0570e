import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Entry } from '../storage/backend.js';
import { deletePage, errorPage, folderPage, loginPage, renamePage } from './pages.js';
import { uiFor } from '../lib/i18n/ui.js';

const site = { root: '/basic/', ui: uiFor('en') };
const viewer = { username: 'alice', csrf: 'tok"en<' };
const entry = (name: string, isFile = true): Entry => ({ name, isFile, size: 10, modified: new Date('2026-01-02T03:04:05Z'), etag: '"e"' });

/** Names an attacker could upload, each trying to become markup, an attribute, a script URL or a broken path. */
const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' onmouseover='alert(1)",
  'javascript:alert(1)',
  '`${x}`',
  '&lt;already-escaped&gt;',
  '?delete=hello.txt#frag',
  '%2e%2e',
  '</textarea></title><style>*{}</style>',
];

const TAGS = new Set(['!doctype', 'html', 'head', 'meta', 'title', 'link', 'body', 'header', 'main', 'nav', 'a', 'span', 'strong', 'h1', 'p', 'br', 'div', 'form', 'label', 'input', 'button', 'table', 'caption', 'thead', 'tbody', 'tr', 'th', 'td']);
const ATTRS = new Set(['nonce', 'lang', 'charset', 'name', 'content', 'rel', 'href', 'class', 'method', 'action', 'type', 'value', 'id', 'for', 'aria-label', 'aria-current', 'role', 'autocomplete', 'enctype', 'scope']);
const BOOLEAN_ATTRS = new Set(['required', 'multiple', 'html']);

/**
 * No element, attribute or URL of the page came from the data: since data never contains a raw `<` or `"`,
 * every `<…>` is one of our tags, each attribute is one of ours with a quoted value, and every link is ours.
 */
function assertInert(html: string) {
  for (const m of html.matchAll(/<\/?([a-z0-9!]+)([^>]*)>/gi)) {
    const tag = (m[1] as string).toLowerCase();
    assert.ok(TAGS.has(tag), `unexpected tag <${tag}>`);
    const rest = (m[2] as string).replace(/\s([a-z-]+)="[^"]*"/gi, (_all, name: string) => {
      assert.ok(ATTRS.has(name.toLowerCase()), `unexpected attribute ${name} on <${tag}>`);
      return '';
    });
    for (const word of rest.trim().split(/\s+/).filter(Boolean)) assert.ok(BOOLEAN_ATTRS.has(word.toLowerCase()), `unexpected bare text in <${tag}>: ${word}`);
  }
  for (const m of html.matchAll(/(?:href|action)="([^"]*)"/g)) assert.match(m[1] as string, /^\/basic\//, `every link is ours: ${m[1]}`);
}

test('a folder page of hostile names renders them as text, with per-segment encoded links', () => {
  const entries = HOSTILE.map((n, i) => entry(n, i % 2 === 0));
  const html = folderPage(site, viewer, { segments: ['<b>dir</b>', '"q"'], entries, total: entries.length, page: 1, pageSize: 500, notice: '<i>done</i>' }).value;
  assertInert(html);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(html, /href="\/basic\/file\/%3Cb%3Edir%3C%2Fb%3E\/%22q%22\/%3Cscript%3Ealert\(1\)%3C%2Fscript%3E"/);
  assert.match(html, /href="\/basic\/%3Cb%3Edir%3C%2Fb%3E\/%22q%22\/\?rename=%3F/, 'query values encoded');
  assert.match(html, /value="tok&quot;en&lt;"/, 'the CSRF token is an escaped attribute too');
  assert.match(html, /<p class="msg" role="status">&lt;i&gt;done&lt;\/i&gt;<\/p>/);
  assert.doesNotMatch(html, /<b>dir/);
});

test('rename, delete, login and error pages escape every value', () => {
  for (const name of HOSTILE) {
    assertInert(renamePage(site, viewer, ['x'], entry(name)).value);
    assertInert(deletePage(site, viewer, ['x'], entry(name, false)).value);
    assertInert(loginPage(site, { error: name, notice: name, username: name }).value);
    assertInert(errorPage(site, 404, name, { back: '/basic/x/', viewer }).value);
  }
  const rename = renamePage(site, viewer, [], entry('"><img src=x>')).value;
  assert.match(rename, /name="name" value="&quot;&gt;&lt;img src=x&gt;"/);
});

test('pages hold no script and label every input', () => {
  const pages = [
    folderPage(site, viewer, { segments: [], entries: [entry('a')], total: 1, page: 1, pageSize: 500 }).value,
    renamePage(site, viewer, [], entry('a')).value,
    loginPage(site).value,
  ];
  for (const html of pages) {
    assert.doesNotMatch(html, /<script/i);
    for (const m of html.matchAll(/<input [^>]*id="([^"]+)"/g)) assert.match(html, new RegExp(`<label for="${m[1]}">`), `input #${m[1]} has a label`);
  }
});

test('a German reader gets the page in German: lang, words, plurals, sizes and dates', () => {
  const de = { root: '/basic/', ui: uiFor('de') };
  const entries = [entry('a.txt'), entry('b.txt'), { ...entry('big.bin'), size: 1536 }];
  const html = folderPage(de, viewer, { segments: [], entries, total: 3, page: 1, pageSize: 500 }).value;
  assertInert(html);
  assert.match(html, /<html lang="de">/);
  assert.match(html, /<h1>Meine Dateien<\/h1>/);
  assert.match(html, /<caption>3 Einträge<\/caption>/);
  assert.match(html, /1,5 KiB/);
  assert.match(html, /02\.01\.2026, 03:04 UTC/);
  assert.match(html, /Angemeldet als <strong>alice<\/strong>/);
  assert.doesNotMatch(html, /Sign out|My files|Upload files|entries/);
  assert.match(folderPage(site, viewer, { segments: [], entries, total: 3, page: 1, pageSize: 500 }).value, /<html lang="en">/);
});
