import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { formatLogLine, resolveLogFormat } from './pretty-log.js';
import { createLogger } from './logger.js';

const T = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
const base = { level: 30, time: T, pid: 1, hostname: 'h' };
const req = (method: string, url: string) => ({ method, url, remoteAddress: '127.0.0.1' });

test('formatLogLine turns each pino record into one short line', () => {
  const rows: [string, Record<string, unknown> | string, string][] = [
    ['a message with fields', { ...base, msg: 'search index rescanned', rescan: { files: 3 }, note: 'two words' }, '03:04:05.006 INFO  search index rescanned rescan={"files":3} note="two words"'],
    ['a request: method, path, status, ms', { ...base, msg: 'request completed', reqId: 'req-1', req: req('GET', '/api/stats'), res: { statusCode: 200 }, responseTime: 1.234 }, '03:04:05.006 INFO  GET /api/stats 200 1.2 ms'],
    ['a slow request in whole ms', { ...base, msg: 'request completed', reqId: 'req-2', req: req('PUT', '/storage/alice/a%20b.txt'), res: { statusCode: 201 }, responseTime: 1234.56 }, '03:04:05.006 INFO  PUT /storage/alice/a%20b.txt 201 1235 ms'],
    ['a fast-path request looks like any other', { ...base, msg: 'request completed', reqId: 'req-3', req: req('HEAD', '/storage/alice/x'), res: { statusCode: 304 }, responseTime: 0.31, fast: true }, '03:04:05.006 INFO  HEAD /storage/alice/x 304 0.3 ms'],
    ['a failed request keeps its id (it ties the line to the logged error)', { ...base, msg: 'request completed', reqId: 'req-4', req: req('GET', '/api/me'), res: { statusCode: 500 }, responseTime: 12 }, '03:04:05.006 INFO  GET /api/me 500 12 ms reqId=req-4'],
    ['a redacted path token stays redacted', { ...base, msg: 'request completed', reqId: 'req-5', req: req('GET', '/storage/alice/f?token=[redacted]'), res: { statusCode: 200 }, responseTime: 2 }, '03:04:05.006 INFO  GET /storage/alice/f?token=[redacted] 200 2.0 ms'],
    ['warn and error levels', { ...base, level: 40, msg: 'worker died; starting another', code: 1 }, '03:04:05.006 WARN  worker died; starting another code=1'],
    ['an error with its stack, indented below', { ...base, level: 50, msg: 'storage sweep failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.js:1:1)' } }, '03:04:05.006 ERROR storage sweep failed\n    Error: boom\n        at f (x.js:1:1)'],
    ['the configuration as an indented block', { ...base, msg: 'effective configuration', workers: 2, config: { dataDir: './data', port: 8000, storage: { kind: 'file' }, redis: '[unset]', basePath: '' } }, '03:04:05.006 INFO  effective configuration workers=2\n    dataDir=./data port=8000 storage={"kind":"file"} redis=[unset] basePath=""'],
    ['not JSON: as it came', 'File Cloud listening on http://127.0.0.1:8000', 'File Cloud listening on http://127.0.0.1:8000'],
    ['JSON that is no record: as it came', '[1,2]', '[1,2]'],
  ];
  for (const [why, rec, want] of rows) assert.equal(formatLogLine(typeof rec === 'string' ? rec : JSON.stringify(rec)), want, why);
});

test('a long configuration block wraps at about 100 columns', () => {
  const config = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`option${i}`, `value${i}`]));
  const lines = formatLogLine(JSON.stringify({ ...base, msg: 'effective configuration', config })).split('\n');
  assert.ok(lines.length > 3, 'several lines');
  for (const l of lines.slice(1)) assert.ok(l.startsWith('    ') && l.length <= 100, `indented and short: ${l}`);
  assert.equal(lines.slice(1).join(' ').split(/\s+/).filter(Boolean).length, 30, 'every option once');
});

test('--log-format auto is pretty on a terminal and JSON anywhere else', () => {
  const rows: ['auto' | 'json' | 'pretty', boolean | undefined, 'json' | 'pretty'][] = [
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['auto', undefined, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ];
  for (const [format, isTTY, want] of rows) assert.equal(resolveLogFormat(format, { isTTY }), want, `${format}, isTTY ${isTTY}`);
});

test('the pretty logger keeps redaction and writes readable lines', async () => {
  let out = '';
  const sink = new Writable({ write: (c, _e, cb) => ((out += c.toString()), cb()) });
  const log = createLogger('info', sink, 'pretty');
  log.warn({ password: 'hunter2-hunter2', user: 'alice' }, 'login failed');
  await new Promise((r) => setTimeout(r, 20));
  assert.match(out, /^\d\d:\d\d:\d\d\.\d{3} WARN {2}login failed .*user=alice/);
  assert.doesNotMatch(out, /hunter2/);
  assert.doesNotMatch(out, /^\{/);
});
