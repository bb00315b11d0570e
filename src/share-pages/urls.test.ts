import { test } from 'node:test';
import assert from 'node:assert/strict';
import { urlPath } from './urls.js';

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
