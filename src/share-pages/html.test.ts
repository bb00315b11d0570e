import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, html, urlPath } from './html.js';

test('escapeHtml: every character that can open markup or end an attribute', () => {
  const cases: [string, string][] = [
    ['plain name.txt', 'plain name.txt'],
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['a"onmouseover="x', 'a&quot;onmouseover=&quot;x'],
    ["it's", 'it&#39;s'],
    ['`x`', '&#96;x&#96;'],
    ['&amp;', '&amp;amp;'],
    ['ünï ☃', 'ünï ☃'],
  ];
  for (const [input, want] of cases) assert.equal(escapeHtml(input), want, input);
});

test('html``: interpolations are escaped, nested html`` is kept, arrays joined, empty values vanish', () => {
  const name = '"><img src=x onerror=alert(1)>';
  const out = html`<a title="${name}">${name}</a>${[html`<b>${'<i>'}</b>`, '&']}${undefined}${null}${false}${3}`.value;
  assert.equal(out, '<a title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</a><b>&lt;i&gt;</b>&amp;3');
  assert.ok(!out.includes('<img'), 'no markup from a name');
});

test('urlPath: names with URL syntax stay one segment each', () => {
  const cases: [string[], boolean, string][] = [
    [[], false, '/s/ID'],
    [[], true, '/s/ID/'],
    [['a b', 'c#d?e'], false, '/s/ID/a%20b/c%23d%3Fe'],
    [['..%2F', 'x/y'], true, '/s/ID/..%252F/x%2Fy/'],
    [['"><svg>'], false, '/s/ID/%22%3E%3Csvg%3E'],
  ];
  for (const [segments, slash, want] of cases) assert.equal(urlPath('/s/ID', segments, slash), want);
});
