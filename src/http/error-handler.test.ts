import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { AppError, ERRORS, isServerFault, type ErrorCode } from '../domain/errors.js';
import { installErrorHandling, logFailure, toAppError } from './error-handler.js';

test('an unexpected error becomes 500 internal without its message or stack', async () => {
  const app = Fastify({ logger: false });
  installErrorHandling(app);
  app.get('/boom', async () => {
    throw new Error('database password is hunter2 at /srv/secret/path.ts:42');
  });
  app.get('/typed', async () => {
    throw new AppError('already_exists', 'Taken.', { headers: { 'x-extra': '1' } });
  });
  try {
    const boom = await app.inject('/boom');
    assert.equal(boom.statusCode, 500);
    const body = boom.json() as { error: string; message: string };
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
    assert.equal(body.error, 'internal');
    assert.ok(!boom.body.includes('hunter2') && !boom.body.includes('secret/path'));
    const typed = await app.inject('/typed');
    assert.equal(typed.statusCode, 409);
    assert.equal(typed.headers['x-extra'], '1');
    assert.deepEqual(typed.json(), { error: 'already_exists', message: 'Taken.' });
    const head = await app.inject({ method: 'HEAD', url: '/typed' });
    assert.equal(head.statusCode, 409);
    assert.equal(head.body, '');
  } finally {
    await app.close();
  }
});

test('every error code maps to its status through the one table', () => {
  for (const [code, status] of Object.entries(ERRORS)) {
    assert.equal(new AppError(code as keyof typeof ERRORS, 'x').status, status, code);
  }
  const rows: [unknown, string, number][] = [
    [Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }), 'invalid_json', 400],
    [Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }), 'too_large', 413],
    [Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }), 'bad_request', 400],
    [Object.assign(new Error('raw internal detail'), { statusCode: 400 }), 'bad_request', 400],
    ['a thrown string', 'internal', 500],
  ];
  for (const [err, code, status] of rows) {
    const e = toAppError(err);
    assert.equal(e.code, code);
    assert.equal(e.status, status);
    assert.ok(!e.message.includes('raw internal detail'));
  }
});

test('the error codes documented in docs/api.md are exactly the table', async () => {
  const { readFile } = await import('node:fs/promises');
  const doc = await readFile('docs/api.md', 'utf8');
  const section = doc.slice(doc.indexOf('### Errors'), doc.indexOf('## Authentication'));
  const documented = new Set([...section.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
  for (const code of Object.keys(ERRORS)) assert.ok(documented.has(code), `docs/api.md documents ${code}`);
  for (const code of documented) assert.ok(code !== undefined && (code === 'error' || code === 'message' || code in ERRORS), `docs/api.md mentions unknown code ${code}`);
});

test('a database or Redis that does not answer is a 503 naming it with Retry-After, also wrapped in other errors, never a 500', async () => {
  const { DependencyError } = await import('../lib/dependency-error.js');
  const db = toAppError(new DependencyError('database', 'Query read timeout'));
  assert.equal(db.status, 503);
  assert.equal(db.code, 'database_unavailable');
  assert.ok(Number(db.headers['retry-after']) > 0);
  assert.doesNotMatch(db.message, /Query read timeout/);
  const redis = toAppError(new Error('wrapped', { cause: new DependencyError('coordination', 'Command timed out') }));
  assert.equal(redis.status, 503);
  assert.equal(redis.code, 'coordination_unavailable');
  assert.equal(ERRORS.database_unavailable, 503);
  assert.equal(ERRORS.coordination_unavailable, 503);
});


test('only faults of the server are errors: every 4xx and the 507s a client causes are refusals', () => {
  const refusals5xx = new Set<ErrorCode>(['quota_exceeded', 'dav_limit_reached', 'number_of_matches_within_limits']);
  for (const [code, status] of Object.entries(ERRORS) as [ErrorCode, number][]) {
    assert.equal(isServerFault(code), status >= 500 && !refusals5xx.has(code), code);
  }
  for (const code of ['internal', 'storage_failed', 'database_unavailable', 'coordination_unavailable', 'disk_full'] as const) assert.equal(isServerFault(code), true, code);
});

test('a refusal is logged at info with its code and no stack; a fault at error with its cause\'s stack', () => {
  const written: { level: number; code?: string; err?: { stack?: string } }[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (written.push(JSON.parse(c.toString()) as (typeof written)[number]), cb()) }));
  const cause = new Error('the disk controller said no');
  for (const e of [new AppError('quota_exceeded', 'Over your quota.'), new AppError('not_found', 'Nothing here.'), new AppError('rate_limited', 'Slow down.'), new AppError('storage_failed', 'S3 failed.', { cause }), toAppError(cause)]) {
    logFailure(log, e, e);
  }
  assert.deepEqual(written.map((w) => [w.level, w.code, w.err === undefined]), [[30, 'quota_exceeded', true], [30, 'not_found', true], [30, 'rate_limited', true], [50, undefined, false], [50, undefined, false]]);
  assert.match(written[3]!.err!.stack!, /the disk controller said no/);
  assert.match(written[4]!.err!.stack!, /the disk controller said no\n\s+at /);
});
