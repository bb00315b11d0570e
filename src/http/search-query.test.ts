import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../domain/errors.js';
import { parseSearchQuery } from './search-query.js';

test('parseSearchQuery: each parameter once, type file/folder, limit decimal digits', () => {
  const ok: [unknown, unknown][] = [
    [{ q: 'report' }, { q: 'report', path: undefined, type: undefined, limit: undefined }],
    [{ q: '%_', path: '/alice/docs', type: 'folder', limit: '20' }, { q: '%_', path: '/alice/docs', type: 'folder', limit: 20 }],
    [{ q: '', limit: '0' }, { q: '', path: undefined, type: undefined, limit: 0 }], // ranges are the service's
  ];
  for (const [query, want] of ok) assert.deepEqual(parseSearchQuery(query), want, JSON.stringify(query));
  const bad: unknown[] = [undefined, {}, { q: ['a', 'b'] }, { q: 'a', type: 'link' }, { q: 'a', limit: '1e3' }, { q: 'a', limit: '-1' }, { q: 'a', limit: '2.5' }, { q: 'a', limit: ' 5' }, { q: 'a', path: ['/a', '/b'] }];
  for (const query of bad) assert.throws(() => parseSearchQuery(query), (e: unknown) => e instanceof AppError && e.code === 'bad_request', JSON.stringify(query));
});
