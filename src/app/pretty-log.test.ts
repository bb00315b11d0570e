import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { formatLogLine } from './pretty-log.js';
import { createLogger } from './logger.js';

test('formatLogLine gives time, level, message and fields on one line', () => {
  const line = formatLogLine(JSON.stringify({ level: 30, time: Date.UTC(2026, 0, 2, 3, 4, 5, 6), pid: 1, hostname: 'h', msg: 'request completed', reqId: 'req-1', res: { statusCode: 200 }, note: 'two words' }));
  assert.equal(line, '03:04:05.006 INFO  request completed reqId=req-1 res={"statusCode":200} note="two words"');
  assert.equal(formatLogLine('not json'), 'not json');
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
