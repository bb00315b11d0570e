import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { until } from '../helpers/webhook-receiver.js';

test('request logs never contain tokens, passwords or the Authorization header', async () => {
  let log = '';
  const sink = new Writable({ write: (chunk, _enc, cb) => ((log += chunk.toString()), cb()) });
  const t = await startApp({ users: ['alice'], logTo: sink });
  try {
    const tokens = await t.login('alice');
    await postJson(`${t.url}/auth/refresh`, { username: 'alice', refresh_token: tokens.refresh_token });
    await fetch(`${t.url}/storage/alice/`, { headers: bearer(tokens.access_token) });
    const made = await postJson(`${t.url}/storage/alice/`, { action: 'MakePathToken' }, bearer(tokens.access_token));
    const { token } = (await made.json()) as { token: string };
    await fetch(`${t.url}/storage/alice/?token=${token}`);
    await fetch(`${t.url}/storage/alice/?download=1&token=${token}&x=1`);
    await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'wrong-password-xyz' });
    await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: tokens.refresh_token });
    assert.ok(log.includes('/storage/alice/?token=[redacted]'), 'request URLs are logged, redacted');
    for (const secret of [tokens.access_token, tokens.refresh_token, token, 'alice-password', 'wrong-password-xyz']) {
      assert.ok(!log.includes(secret), `the log contains ${secret.slice(0, 8)}…`);
    }
    assert.doesNotMatch(log, /authorization/i);
  } finally {
    await t.close();
  }
});

type LogLine = { level?: number; msg?: string; code?: string; err?: unknown; res?: { statusCode?: number } };

/** The JSON lines written so far (a line cut at the end of a chunk is left for later). */
function lines(log: string): LogLine[] {
  return log.split('\n').slice(0, -1).flatMap((l) => {
    try {
      return [JSON.parse(l) as LogLine];
    } catch {
      return [];
    }
  });
}

for (const [storage, skip] of BACKENDS) {
  describe(`log levels on ${storage}`, { skip }, () => {
    let log = '';
    let t: TestApp;
    let auth: Record<string, string>;
    before(async () => {
      const sink = new Writable({ write: (chunk, _enc, cb) => ((log += chunk.toString()), cb()) });
      t = await startApp({ storage, users: ['alice'], logTo: sink });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(() => t?.close());

    test('an upload over the quota (raw PUT, multipart, WebDAV PUT) is logged at info without a stack, never as an error', async () => {
      await t.store.usage.setQuota('alice', 1024);
      const from = log.length;
      const raw = await fetch(`${t.url}/storage/alice/raw.bin`, { method: 'PUT', headers: auth, body: Buffer.alloc(2048, 1) });
      const { body, contentType } = multipartBody([{ filename: 'one.bin', content: Buffer.alloc(700, 1) }, { filename: 'two.bin', content: Buffer.alloc(700, 2) }]);
      const multipart = await fetch(`${t.url}/storage/alice/`, { method: 'PUT', headers: { ...auth, 'content-type': contentType }, body });
      const dav = await fetch(`${t.url}/dav/alice/dav.bin`, { method: 'PUT', headers: auth, body: Buffer.alloc(2048, 3) });
      for (const [what, res] of [['raw PUT', raw], ['multipart', multipart], ['WebDAV PUT', dav]] as const) {
        assert.equal(res.status, 507, what);
        assert.equal(((await res.json()) as { error: string }).error, 'quota_exceeded', what);
      }
      // Each request's access line is written after its refusal's: three of them mean the refusals are all in.
      await until(() => lines(log.slice(from)).filter((l) => l.msg === 'request completed' && l.res?.statusCode === 507).length === 3, 10_000, 'the three access lines');
      const seen = lines(log.slice(from));
      assert.deepEqual(seen.filter((l) => (l.level ?? 0) >= 50).map((l) => l.msg), [], 'no error-level line');
      assert.doesNotMatch(log.slice(from), /"stack"|\n\s+at /, 'no stack trace');
      assert.equal(seen.filter((l) => l.level === 30 && l.code === 'quota_exceeded').length, 3, 'each refusal at info, with its code');
    });
  });
}
