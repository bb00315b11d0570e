import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathUrl } from './urls.js';

test('pathUrl percent-encodes each segment so names cannot break out of the path', () => {
  const cases: [string[], boolean, string][] = [
    [[], true, '/basic/'],
    [['a b', 'c'], true, '/basic/a%20b/c/'],
    [['x?y#z'], false, '/basic/x%3Fy%23z'],
    [['javascript:alert(1)'], false, '/basic/javascript%3Aalert(1)'],
    [['"><'], false, '/basic/%22%3E%3C'],
    [['100%'], false, '/basic/100%25'],
  ];
  for (const [segments, slash, want] of cases) assert.equal(pathUrl('/basic/', segments, slash), want);
});
