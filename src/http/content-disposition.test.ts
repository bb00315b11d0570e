import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentDisposition } from './content-disposition.js';

test('contentDisposition quotes plain ASCII names and adds filename* for the rest', () => {
  const rows: [string, string][] = [
    ['report.pdf', `attachment; filename="report.pdf"`],
    ['my file; v2.txt', `attachment; filename="my file; v2.txt"`],
    ['#1 & (draft).txt', `attachment; filename="#1 & (draft).txt"`],
    ['.bashrc', `attachment; filename=".bashrc"`],
    ['résumé.pdf', `attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`],
    ['日本語.txt', `attachment; filename="___.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E.txt`],
    ['😀.png', `attachment; filename="_.png"; filename*=UTF-8''%F0%9F%98%80.png`],
    ['say "hi".txt', `attachment; filename="say _hi_.txt"; filename*=UTF-8''say%20%22hi%22.txt`],
    ['back\\slash.txt', `attachment; filename="back_slash.txt"; filename*=UTF-8''back%5Cslash.txt`],
    ['100%.txt', `attachment; filename="100_.txt"; filename*=UTF-8''100%25.txt`],
    ['%41.txt', `attachment; filename="_41.txt"; filename*=UTF-8''%2541.txt`],
    ["it's (1)*.txt", `attachment; filename="it's (1)*.txt"`],
    ["it's (1)*é.txt", `attachment; filename="it's (1)*_.txt"; filename*=UTF-8''it%27s%20%281%29%2A%C3%A9.txt`],
    ['', 'attachment'],
  ];
  for (const [name, want] of rows) assert.equal(contentDisposition(name), want, name);
  assert.equal(contentDisposition('a.png', 'inline'), 'inline; filename="a.png"');
});

test('contentDisposition never lets a name break the header', () => {
  const names = [
    'a\r\nSet-Cookie: x=1.txt',
    'a\nb.txt',
    'a\rb.txt',
    'tab\there.txt',
    'nul\u0000.txt',
    'del\u007f.txt',
    'c1\u0085.txt',
    '\r\n',
    'é\r\nX-Evil: 1',
    'lone\uD800surrogate.txt',
    'lone\uDC00low.txt',
  ];
  for (const name of names) {
    const value = contentDisposition(name);
    assert.match(value, /^[\u0020-\u007e]+$/, `${JSON.stringify(name)}: header values stay printable ASCII`);
  }
  assert.equal(contentDisposition('a\r\nSet-Cookie: x=1.txt'), 'attachment; filename="aSet-Cookie: x=1.txt"');
  assert.equal(contentDisposition('\r\n'), 'attachment');
  assert.equal(contentDisposition('lone\uD800x.txt'), `attachment; filename="lone_x.txt"; filename*=UTF-8''lone%EF%BF%BDx.txt`);
});

test('the filename* value decodes back to the name', () => {
  for (const name of ['résumé.pdf', 'a b+c=d&é.txt', '日本語 (コピー).txt', "q'\"%\\.bin", '😀😀']) {
    const m = /filename\*=UTF-8''([^;]+)$/.exec(contentDisposition(name));
    assert.ok(m?.[1], name);
    assert.match(m[1], /^[A-Za-z0-9!#$&+\-.^_`|~%]+$/, 'only RFC 8187 attr-chars and escapes');
    assert.equal(decodeURIComponent(m[1]), name);
  }
});
