import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { declaresBody } from './declared-body.js';

test('declaresBody: a Transfer-Encoding or a Content-Length above 0', () => {
  const rows: [IncomingHttpHeaders, boolean][] = [
    [{}, false],
    [{ 'content-length': '0' }, false],
    [{ 'content-length': '1' }, true],
    [{ 'content-length': '31457280' }, true],
    [{ 'transfer-encoding': 'chunked' }, true],
    [{ 'transfer-encoding': 'chunked', 'content-length': '0' }, true],
  ];
  for (const [headers, want] of rows) assert.equal(declaresBody(headers), want, JSON.stringify(headers));
});
