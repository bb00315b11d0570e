import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { AccessFields } from './access-line.js';
import { accessLogOf, createLogger } from './logger.js';
import { redactUrl } from '../http/url.js';

/** A destination that keeps what it is given: each write of a logger (pino's, the access line's, the pretty format's) is one line. */
function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer | string, _enc, cb) => (lines.push(chunk.toString()), cb()) });
  return { stream, lines };
}

/**
 * pino's own line for `f`, as build-app.ts wrote the request line before access-line.ts: the raw
 * fields through logger.ts's `req` and `res` serializers, without the redaction paths.
 */
const pinoLine = (logger: pino.Logger, f: AccessFields) =>
  logger.child({}, { redact: [] }).info({ reqId: f.reqId, req: { method: f.method, url: f.url, ip: f.remoteAddress }, res: { statusCode: f.statusCode }, responseTime: f.responseTime, ...(f.fast ? { fast: true } : {}) }, 'request completed');

const SHARE_ID = 'AbCdEf0123456789abcdefGHIJKLmnop';
const field = (over: Partial<AccessFields>): AccessFields => ({ reqId: 'req-1', method: 'GET', url: '/storage/alice/a.txt', remoteAddress: '127.0.0.1', statusCode: 200, responseTime: 0.123456789, fast: true, ...over });

test('the access line is byte for byte the line pino writes for the same fields', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.UTC(2026, 11, 5, 16, 0, 0, 7) });
  const rows: [string, AccessFields][] = [
    ['a fast GET', field({})],
    ["Fastify's answer (no fast field)", field({ fast: false, statusCode: 404, method: 'PROPFIND', url: '/dav/alice/' })],
    ['no address: no remoteAddress', field({ remoteAddress: undefined })],
    ['an empty address is kept', field({ remoteAddress: '' })],
    ['an IPv6 address', field({ remoteAddress: '::ffff:10.0.0.1' })],
    ['a whole-millisecond time', field({ responseTime: 12 })],
    ['a long time', field({ responseTime: 123456.75 })],
    ['a quote, a backslash and a control character in the URL', field({ url: '/storage/alice/a"b\\c\u0001d' })],
    ['letters beyond ASCII in the URL', field({ url: '/storage/alice/caf\u00e9/\u65e5\u672c' })],
    ['a path token, redacted', field({ url: '/storage/alice/f?token=secret&x=1' })],
    ['a CSRF value, redacted', field({ url: '/basic/upload?csrf=abc' })],
    ['a share link, cut', field({ url: `/share/${SHARE_ID}/docs/a.txt` })],
    ['a short share link', field({ url: `/s/${SHARE_ID}` })],
    ['the API of a share link', field({ url: `/api/shares/${SHARE_ID}?x=1` })],
    ['a quote in the request id', field({ reqId: 'req-"1"' })],
    ['a 5xx', field({ statusCode: 503, fast: false })],
  ];
  for (const [why, fields] of rows) {
    const ours = sink();
    const theirs = sink();
    accessLogOf(createLogger('info', ours.stream)).write(fields);
    pinoLine(createLogger('info', theirs.stream), fields);
    assert.equal(ours.lines.length, 1, why);
    assert.equal(ours.lines[0], theirs.lines[0], why);
  }
});

test('the access line follows the logger: its level, its pretty format, and pino itself for a logger made elsewhere', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.UTC(2026, 11, 5, 16, 0, 0, 7) });
  const quiet = sink();
  accessLogOf(createLogger('warn', quiet.stream)).write(field({}));
  accessLogOf(createLogger('silent', quiet.stream)).write(field({}));
  assert.deepEqual(quiet.lines, [], 'no line below the level');

  const lowered = sink();
  const logger = createLogger('info', lowered.stream);
  logger.level = 'error';
  accessLogOf(logger).write(field({}));
  assert.deepEqual(lowered.lines, [], 'a level changed later counts too');

  const pretty = [sink(), sink()] as const;
  accessLogOf(createLogger('info', pretty[0].stream, 'pretty')).write(field({ url: '/storage/alice/f?token=secret' }));
  pinoLine(createLogger('info', pretty[1].stream, 'pretty'), field({ url: '/storage/alice/f?token=secret' }));
  assert.equal(pretty[0].lines.length, 1);
  assert.equal(pretty[0].lines[0], pretty[1].lines[0], 'the pretty format shows it as it shows pino’s');
  assert.match(pretty[0].lines[0] as string, /GET \/storage\/alice\/f\?token=\[redacted\] 200 0\.1 ms/);

  const elsewhere = sink();
  accessLogOf(pino({ base: undefined }, elsewhere.stream)).write(field({ fast: false }));
  const line = JSON.parse(elsewhere.lines[0] as string) as Record<string, unknown>;
  assert.equal(line.msg, 'request completed');
  assert.deepEqual(line.res, { statusCode: 200 });
  assert.equal(line.reqId, 'req-1');
  // That logger has none of createLogger's serializers: the URL is redacted all the same.
  accessLogOf(pino({ base: undefined }, elsewhere.stream)).write(field({ url: '/storage/alice/f?token=secret' }));
  assert.deepEqual((JSON.parse(elsewhere.lines[1] as string) as { req: unknown }).req, { method: 'GET', url: '/storage/alice/f?token=[redacted]', remoteAddress: '127.0.0.1' });
});

test('redactUrl cuts tokens and share ids, and leaves every other URL as it is', () => {
  const rows: [string, string][] = [
    ['/storage/alice/a.txt', '/storage/alice/a.txt'],
    ['/storage/alice/f?token=abc', '/storage/alice/f?token=[redacted]'],
    ['/storage/alice/f?x=1&token=abc#frag', '/storage/alice/f?x=1&token=[redacted]#frag'],
    ['/storage/alice/a&token=abc', '/storage/alice/a&token=[redacted]'],
    ['/storage/alice/f?TOKEN=abc', '/storage/alice/f?TOKEN=[redacted]'],
    ['/basic/x?csrf=zz&y=2', '/basic/x?csrf=[redacted]&y=2'],
    [`/s/${SHARE_ID}`, '/s/AbCdEf[redacted]'],
    [`/share/${SHARE_ID}/a/b`, '/share/AbCdEf[redacted]/a/b'],
    [`/api/shares/${SHARE_ID}?q`, '/api/shares/AbCdEf[redacted]?q'],
    [`/storage/alice/s/${SHARE_ID}`, '/storage/alice/s/AbCdEf[redacted]'],
    ['/share/short', '/share/short'],
    ['/storage/alice/shares/x', '/storage/alice/shares/x'],
    ['/storage/alice/f?tokens=1', '/storage/alice/f?tokens=1'],
    ['', ''],
  ];
  for (const [url, want] of rows) assert.equal(redactUrl(url), want, url);
});
