import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexHolds } from './listing-reply.js';

test('indexHolds: the index row is of the listed bytes when kind, size and time (within a second) agree', () => {
  const at = Date.parse('2026-12-02T06:00:00Z');
  const file = { isFile: true, size: 10, modified: new Date(at) };
  const rows: [string, { isFile: boolean; size: number; modified: number }, typeof file, boolean][] = [
    ['same figures', { isFile: true, size: 10, modified: at }, file, true],
    ['the store dated it a second later (S3 PutObject answer)', { isFile: true, size: 10, modified: at - 1000 }, file, true],
    ['a second earlier', { isFile: true, size: 10, modified: at + 1000 }, file, true],
    ['two seconds apart: other bytes may be there', { isFile: true, size: 10, modified: at - 2000 }, file, false],
    ['another size', { isFile: true, size: 11, modified: at }, file, false],
    ['a folder now where the file was', { isFile: true, size: 10, modified: at }, { ...file, isFile: false }, false],
    ['a folder: its time moves with its entries', { isFile: false, size: 0, modified: at - 60_000 }, { isFile: false, size: 0, modified: new Date(at) }, true],
  ];
  for (const [what, row, listed, want] of rows) assert.equal(indexHolds(row, listed), want, what);
});
