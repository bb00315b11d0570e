import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexChange, type Figures } from './index-change.js';

const file = (size: number, modified: number, etag?: string | null): Figures => ({ isFile: true, size, modified, etag });
const folder = (modified: number): Figures => ({ isFile: false, size: 0, modified, etag: '"d"' });

test('the journal entry of an index put: created, modified, or none', () => {
  const rows: [string, Figures | undefined, Figures, boolean, ReturnType<typeof indexChange>][] = [
    ['nothing before', undefined, file(1, 1000, '"a"'), false, 'created'],
    ['a folder where a file was', file(1, 1000, '"a"'), folder(1000), false, 'created'],
    ['a file where a folder was', folder(1000), file(1, 1000, '"a"'), true, 'created'],
    ['the same figures', file(1, 1000, '"a"'), file(1, 1000, '"a"'), false, undefined],
    ['another size', file(1, 1000, '"a"'), file(2, 1000, '"a"'), false, 'modified'],
    ['another ETag', file(1, 1000, '"a"'), file(1, 1000, '"b"'), false, 'modified'],
    ['another time, reported by a write', file(1, 1000, '"a"'), file(1, 2000, '"a"'), false, 'modified'],
    ['another time, same bytes, seen by a rescan: the time is corrected quietly', file(1, 1000, '"a"'), file(1, 2000, '"a"'), true, undefined],
    ['another time and ETag, seen by a rescan', file(1, 1000, '"a"'), file(1, 2000, '"b"'), true, 'modified'],
    ['another time, seen by a rescan, the ETag unknown before', file(1, 1000, null), file(1, 2000, '"a"'), true, 'modified'],
    ['another size, same ETag, seen by a rescan', file(1, 1000, '"a"'), file(2, 2000, '"a"'), true, 'modified'],
    ['a folder\'s time moves', folder(1000), folder(2000), false, undefined],
  ];
  for (const [what, was, now, walked, want] of rows) assert.equal(indexChange(was, now, walked), want, what);
});
