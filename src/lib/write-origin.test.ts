import { test } from 'node:test';
import assert from 'node:assert/strict';
import { currentOrigin, parseOrigin, withOrigin } from './write-origin.js';

test('parseOrigin: a short printable token, else invalid', () => {
  const rows: [string | string[] | undefined, string | undefined][] = [
    [undefined, undefined],
    ['laptop-1', 'laptop-1'],
    ['device:7c1e/sync@home', 'device:7c1e/sync@home'],
    ["a!#$%&'*+.^_`|~-b", "a!#$%&'*+.^_`|~-b"],
    ['x'.repeat(64), 'x'.repeat(64)],
    ['x'.repeat(65), 'invalid'],
    ['', 'invalid'],
    ['two words', 'invalid'],
    ['tab\there', 'invalid'],
    ['<script>', 'invalid'],
    ['quote"d', 'invalid'],
    ['ünï', 'invalid'],
    ['line\nbreak', 'invalid'],
    [['a', 'b'], 'invalid'], // given twice
  ];
  for (const [header, want] of rows) assert.equal(parseOrigin(header), want, JSON.stringify(header));
});

test('the origin travels with the async work started inside withOrigin, and only there', async () => {
  assert.equal(currentOrigin(), undefined);
  const seen = await withOrigin('desk', async () => {
    await new Promise((r) => setTimeout(r, 1));
    return currentOrigin();
  });
  assert.equal(seen, 'desk');
  assert.equal(currentOrigin(), undefined);
});
