import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, html, Html } from './html.js';

test('escapeHtml turns every markup character into an entity', () => {
  const cases: [string, string][] = [
    ['plain name.txt', 'plain name.txt'],
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['a"b\'c`d', 'a&quot;b&#39;c&#96;d'],
    ['&amp;', '&amp;amp;'],
    ['" onmouseover="x', '&quot; onmouseover=&quot;x'],
    ['ünïcödé 日本', 'ünïcödé 日本'],
  ];
  for (const [input, want] of cases) assert.equal(escapeHtml(input), want, input);
});

test('html escapes interpolated strings in text and attributes but keeps Html fragments', () => {
  const name = '"><img src=x onerror=alert(1)>';
  const out = html`<a href="/x" title="${name}">${name}</a>${html`<b>${'<i>'}</b>`}`.value;
  assert.equal(out, '<a href="/x" title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</a><b>&lt;i&gt;</b>');
  assert.ok(!out.includes('<img'));
});

test('html renders arrays, numbers and skips null, undefined and booleans', () => {
  assert.equal(html`${['<a>', html`<b>`, 3]}|${null}${undefined}${false}${true}|`.value, '&lt;a&gt;<b>3||');
});

test('a plain string can never pass for an Html fragment', () => {
  const fake = { value: '<script>' } as unknown as Html;
  assert.equal(html`${fake as unknown as string}`.value.includes('<script>'), false);
});

test('html``: interpolations are escaped, nested html`` is kept, arrays joined, empty values vanish', () => {
  const name = '"><img src=x onerror=alert(1)>';
  const out = html`<a title="${name}">${name}</a>${[html`<b>${'<i>'}</b>`, '&']}${undefined}${null}${false}${3}`.value;
  assert.equal(out, '<a title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</a><b>&lt;i&gt;</b>&amp;3');
  assert.ok(!out.includes('<img'), 'no markup from a name');
});
